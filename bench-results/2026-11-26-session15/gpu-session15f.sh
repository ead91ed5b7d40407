#!/bin/bash
# Session 15, call 12: fill_at (device tests: it and the jobs' fused paths against their array programs); host
# time per batch of the apply thread's steps (this tree and the session's start, warm replays).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=300
run tests/test_fill_at.py tests/test_pagerank_fused_gpu.py
run tests/test_bfs.py tests/test_bfs_repair.py tests/test_triangles_fused_gpu.py tests/test_pipeline_jobs.py
tests_done tests.txt
LOG=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  timeout 120 python3 .ci/gpu-host-steps.py $s 3 > $OUT/steps-$s.txt 2>&1
  (cd .wt/base && timeout 120 python3 ../../.ci/gpu-host-steps.py $s 3 $LOG) > $OUT/steps-base-$s.txt 2>&1
done
