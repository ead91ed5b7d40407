#!/usr/bin/env bash
# Session 7, third GPU call (about 6 minutes): device tests of resolve's parts around the library sorts,
# the resolve / CSR forms per batch size and the 1,000-event kernel's parts (.ci/gpu-resolve-parts.py),
# 1,000-event batches base (.wt/base = 6e303ba) / new, CLI replays of sx-mathoverflow (orig = 2633564, the
# issue's start; base; new).
set -u
GPU_TEST_LIMIT=150; source .ci/gpu-lib.sh
gpu_setup
run tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_sync_budget.py
run tests/test_pipeline_contract.py -x
tests_done
timeout 120 python3 .ci/gpu-resolve-parts.py "$OUT/resolve-parts.json" > "$OUT/resolve-parts.txt" 2>&1
timeout 90 python3 .ci/gpu-profile-bfs.py "$OUT/bfs-profile.txt" > /dev/null 2>&1
phase_timing coo,graphvine 60 base new base new
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  for side in orig base new; do
    [ $s = graphvine ] && [ $side = orig ] && continue
    dir=$PWD; [ $side != new ] && dir=$PWD/.wt/$side
    for t in 150 40; do       # the second run: kernels compiled (CuPy's cache) by the first
      (cd "$dir" && timeout $t python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
         --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-$side --overwrite --no-progress) > /tmp/replay.txt 2>&1
    done
    replay_line $side $s
    tail -3 /tmp/replay.txt >> "$OUT/replay_log.txt"
  done
done
