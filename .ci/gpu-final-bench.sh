#!/usr/bin/env bash
# The session's second closing GPU call: incremental against static jobs (and the peers), incremental BFS
# broken down, and the structures at R-MAT 22.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && [ ! -d ~/.cupy/kernel_cache ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
python3 -c "import kafka" 2>/dev/null || python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/kafka*.whl .whl/crc32c*.whl .whl/networkit*.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
timeout 170 python3 -m vinestream bench algorithms --backend gpu --scales 20 --json "$OUT/bench-algorithms.json" > "$OUT/bench-algorithms.txt" 2>&1; tail -n 22 "$OUT/bench-algorithms.txt"
SCALES=20 BATCHES=5 timeout 150 python3 bench-results/2026-11-25-bfs/gpu_run.py > /dev/null 2>&1; tail -n 25 "$OUT/gpu_run.txt"
timeout 120 python3 -m vinestream bench structures --backend gpu --structures csr,coo,graphvine --scales 22 --batch-sizes 1000,1000000 --json "$OUT/bench-structures.json" > "$OUT/bench-structures.txt" 2>&1; tail -n 12 "$OUT/bench-structures.txt"
ls "$OUT"
