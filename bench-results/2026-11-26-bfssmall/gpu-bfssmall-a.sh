#!/usr/bin/env bash
# bfssmall helper, first GPU call (run from main's root; carry .wt/bfssmall .data .whl): the BFS job's device
# tests at this branch, then the direct replay loop (.ci/gpu-replay-direct.py, coo and graphvine) alternating
# base (main's root) and new (.wt/bfssmall), two processes each; the last new one also under cProfile.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
W=.wt/bfssmall
cd $W
GPU_TEST_LIMIT=170
run tests/test_bfs.py tests/test_bfs_repair.py tests/test_bfs_in_edge_log.py tests/test_bfs_kernels.py tests/test_bfs_small_batches.py
run tests/test_transpose_kernels.py tests/test_work_counters.py
run tests/test_pipeline_jobs.py
run tests/test_sync_budget.py
tests_done tests.txt
cd ../..
echo "t=$SECONDS" >> "$OUT/tests.txt"
for i in 1 2; do
  ROUNDS=2 timeout 60 python3 .ci/gpu-replay-direct.py "$log" "$OUT/base$i.json" coo graphvine > "$OUT/base$i.txt" 2>&1
  echo "t=$SECONDS" >> "$OUT/base$i.txt"
  [ $i = 2 ] && export PROFILE=1
  (cd $W && ROUNDS=2 timeout 70 python3 .ci/gpu-replay-direct.py "$log" "$OUT/new$i.json" coo graphvine) > "$OUT/new$i.txt" 2>&1
  echo "t=$SECONDS" >> "$OUT/new$i.txt"
done
