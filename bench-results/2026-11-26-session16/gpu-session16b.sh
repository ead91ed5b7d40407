#!/bin/bash
# Session 16, call 3: the output columns by one launch each (pagerank.normalised_ranks: a reduction and one
# elementwise kernel; bfs.parent_ids: one elementwise kernel) and GraphVine's whole-graph adjacency without range
# checks: their device tests and the jobs' and structures' groups they touch; host time per batch of the apply
# thread's steps, this tree and the session's start on the same host; four rounds of fresh replays against the
# issue's starting code and the session's start.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=300
run tests/test_fill_at.py tests/test_output_kernels.py tests/test_job_outputs.py tests/test_sync_budget.py
run tests/test_pipeline_jobs.py
run tests/test_pagerank_fused_gpu.py tests/test_bfs.py tests/test_pagerank.py
graphvine_test_groups
tests_done tests.txt
LOG=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  DETAIL=1 timeout 120 python3 .ci/gpu-host-steps.py $s 3 > $OUT/steps-$s.txt 2>&1
  (cd .wt/base && DETAIL=1 timeout 120 python3 ../../.ci/gpu-host-steps.py $s 3 $LOG) > $OUT/steps-base-$s.txt 2>&1
done
FIRST_PHASES=1 TIMELINES=all replay_sides 4 orig base new
