#!/bin/bash
# Session 15, call 6: batches sort in their block until the library's sort is loaded (device tests); fresh replays
# of the session's start (.wt/base) and this tree alternating, each with its timeline and first epochs' phases.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=200
run tests/test_resolve_kernels_gpu.py tests/test_replay_warm_up.py tests/test_sync_budget.py
tests_done tests.txt
nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/replay.txt"
export FIRST_PHASES=1
for r in 1 2 3 4 5; do
  for s in coo graphvine; do
    t0=$(date +%s.%N); base_once $s; t1=$(date +%s.%N); replay_line base $s
    echo "== base $s round $r" >> "$OUT/timeline.txt"
    python3 .ci/gpu-replay-timeline.py /tmp/r-$s-base $t0 $t1 >> "$OUT/timeline.txt" 2>&1
    t0=$(date +%s.%N); replay_once new $s 60; t1=$(date +%s.%N); replay_line new $s
    echo "== new $s round $r" >> "$OUT/timeline.txt"
    python3 .ci/gpu-replay-timeline.py /tmp/r-$s-new $t0 $t1 >> "$OUT/timeline.txt" 2>&1
  done
done
