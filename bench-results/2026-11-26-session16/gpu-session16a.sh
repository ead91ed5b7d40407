#!/bin/bash
# Session 16, call 1: the host-finished output columns (PageRank's normalisation and BFS's parent ids on the sink's
# thread, one reduction launch for the ranks' sum), GraphVine's whole-graph adjacency without range checks:
# their device tests; host time per batch of the apply thread's steps (this tree, DETAIL); three rounds of fresh
# replays against the starting code and the session's start.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=300
run tests/test_fill_at.py tests/test_job_outputs.py
run tests/test_pipeline_jobs.py
run tests/test_pagerank_fused_gpu.py tests/test_bfs.py
run tests/test_sync_budget.py
tests_done tests.txt
for s in coo graphvine; do
  DETAIL=1 timeout 120 python3 .ci/gpu-host-steps.py $s 3 > $OUT/steps-$s.txt 2>&1
done
replay_rounds 3
