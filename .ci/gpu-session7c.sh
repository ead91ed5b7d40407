#!/usr/bin/env bash
# Session 7, third GPU call (about 6 minutes): device tests of resolve's parts around the library sorts,
# the resolve / CSR forms per batch size and the 1,000-event kernel's parts (.ci/gpu-resolve-parts.py),
# 1,000-event batches base (.wt/base = 6e303ba) / new, CLI replays of sx-mathoverflow (orig = 2633564, the
# issue's start; base; new).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/kafka*.whl .whl/crc32c*.whl 2>/dev/null
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/tests.txt"
logs=$(mktemp -d)
run() { ( VINESTREAM_BACKEND=gpu timeout 150 python3 -m pytest -q -p no:cacheprovider "$@" > "$logs/$(echo "$*" | tr -c "a-zA-Z0-9_" _ | cut -c1-80).log" 2>&1
          echo "rc=$? $*" >> "$logs/rc" ) & }
run tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_sync_budget.py
run tests/test_pipeline_contract.py -x
wait
sort "$logs/rc" | tee -a "$OUT/tests.txt"
for l in "$logs"/*.log; do echo "===== $l"; tail -n 15 "$l"; done >> "$OUT/tests.txt"
timeout 120 python3 .ci/gpu-resolve-parts.py "$OUT/resolve-parts.json" > "$OUT/resolve-parts.txt" 2>&1
timeout 90 python3 .ci/gpu-profile-bfs.py "$OUT/bfs-profile.txt" > /dev/null 2>&1
for side in base new base new; do
  dir=$PWD; [ $side = base ] && dir=$PWD/.wt/base
  (cd "$dir" && timeout 60 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine) | sed "s/^/$side /" | tee -a "$OUT/phase.txt"
done
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  for side in orig base new; do
    [ $s = graphvine ] && [ $side = orig ] && continue
    dir=$PWD; [ $side != new ] && dir=$PWD/.wt/$side
    for t in 150 40; do       # the second run: kernels compiled (CuPy's cache) by the first
      (cd "$dir" && timeout $t python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
         --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-$side --overwrite --no-progress) > /tmp/replay.txt 2>&1
    done
    echo "$side $s $(grep -E 'events / s|resolve ms|vertices ms|csr ms|insert ms|pagerank ms|bfs ms|triangles ms|wall seconds' /tmp/replay.txt | tr -s ' ' | tr '\n' ';')" | tee -a "$OUT/replay.txt"
    tail -3 /tmp/replay.txt >> "$OUT/replay_log.txt"
  done
done
