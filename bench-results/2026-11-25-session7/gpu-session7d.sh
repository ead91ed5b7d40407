#!/usr/bin/env bash
# Session 7, fourth GPU call (about 4 minutes): device tests of the fused in-edge-log fold and the BFS
# paths, the profile of an incremental BFS update (R-MAT 20, 0.01%), CLI replays of sx-mathoverflow (orig =
# 2633564, the start, with a package shim; new).
set -u
GPU_TEST_LIMIT=150; source .ci/gpu-lib.sh
gpu_setup
run tests/test_bfs_in_edge_log.py tests/test_bfs_repair.py tests/test_bfs.py tests/test_bfs_kernels.py
run tests/test_sync_budget.py tests/test_pipeline_jobs.py
tests_done
timeout 90 python3 .ci/gpu-profile-bfs.py "$OUT/bfs-profile.txt" 2>&1 | head -3
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo; do
  for side in orig new; do
    dir=$PWD; [ $side != new ] && dir=$PWD/.wt/$side
    for t in 150 40; do       # the second run: kernels compiled (CuPy's cache) by the first
      (cd "$dir" && timeout $t python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
         --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-$side --overwrite --no-progress) > /tmp/replay.txt 2>&1
    done
    replay_line $side $s
    tail -3 /tmp/replay.txt >> "$OUT/replay_log.txt"
  done
done
