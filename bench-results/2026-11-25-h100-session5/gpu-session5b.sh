#!/usr/bin/env bash
# Second measuring call: resolve crossover and small-batch phases after the shared-memory sorts, GPU tests.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
MODE=crossover python3 .ci/gpu-profile-batch.py "$OUT" > "$OUT/crossover.txt" 2>&1; tail -12 "$OUT/crossover.txt"
python3 .ci/gpu-profile-batch.py "$OUT" 2>&1 | grep -E "^(coo|graphvine)"
python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine | tee "$OUT/phase.txt"
VINESTREAM_BACKEND=gpu timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_resolve_kernels.py tests/test_vertex_map_fused.py > "$OUT/tests.txt" 2>&1; tail -2 "$OUT/tests.txt"
python3 .ci/gpu-profile-replay.py .data/sx-mathoverflow.events.parquet "$OUT/replay" coo 2>&1 | grep timed
