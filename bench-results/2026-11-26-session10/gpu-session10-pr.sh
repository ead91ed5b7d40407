#!/usr/bin/env bash
# Session 10, after the last PageRank merge (princ4): its device tests with the pipeline's jobs, then
# `bench algorithms` at R-MAT 20 and 22 three times each, alternating (the figures of the closing note).
set -u
GPU_TEST_LIMIT=150; source .ci/gpu-lib.sh
gpu_setup
run tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_pagerank_kernels.py tests/test_kernels_compile.py
run tests/test_pipeline_jobs.py
run tests/test_sync_budget.py tests/test_work_counters.py tests/test_replay_warm_up.py
tests_done
echo "t=$SECONDS" | tee -a "$OUT/tests.txt"
for i in 1 2 3; do
  for s in 20 22; do
    timeout 60 python3 -m vinestream bench algorithms --backend gpu --scales $s --json "/tmp/alg$s-$i.json" \
      > /tmp/alg.txt 2>&1; [ $i = 1 ] && cp /tmp/alg$s-$i.json "$OUT/"; grep -E "rmat|pagerank static|^ +0\.0?1%|^ +1%|pagerank +ours" /tmp/alg.txt >> "$OUT/bench.txt"
  done
done
echo "t=$SECONDS" >> "$OUT/bench.txt"
