#!/usr/bin/env bash
# Session 7, second GPU call (about 5 minutes): device tests of the fused BFS repair's new cases, CLI
# replays of sx-mathoverflow (all three jobs, 1e4-event batches) of the starting code (.wt/orig =
# 2633564), the session's start (.wt/base = 6e303ba) and this tree, a profiled replay, a profiled batch.
set -u
GPU_TEST_LIMIT=120; source .ci/gpu-lib.sh
gpu_setup
run tests/test_bfs_repair.py tests/test_bfs.py
run tests/test_pipeline_jobs.py
tests_done
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  for side in orig base new; do
    dir=$PWD; [ $side != new ] && dir=$PWD/.wt/$side
    for i in 1 2; do       # the second run: kernels compiled (CuPy's cache) by the first
      (cd "$dir" && timeout 40 python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
         --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-$side --overwrite --no-progress) > /tmp/replay.txt 2>&1
    done
    replay_line $side $s
  done
done
JOBS=pagerank,bfs,triangles timeout 60 python3 .ci/gpu-profile-replay.py "$log" /tmp/rp coo > "$OUT/replay_log.txt" 2>&1
cp /tmp/rp/replay-coo.txt "$OUT/replay-profile-coo.txt" 2>/dev/null
timeout 90 python3 .ci/gpu-profile-batch.py /tmp/pb > "$OUT/profile_batch.txt" 2>&1
cat /tmp/pb/profile-coo.txt /tmp/pb/profile-graphvine.txt > "$OUT/profile-batch.txt" 2>/dev/null
