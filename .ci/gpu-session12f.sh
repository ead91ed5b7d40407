#!/usr/bin/env bash
# Session 12, closing call: every device test group (.ci/gpu-lib.sh all_test_groups), then fresh replays of the
# issue's starting code (.wt/orig), the session's start (.wt/base, 020d806) and this tree alternating, three
# rounds, with this tree's timelines. Carry .data .whl .wt/orig .wt/base.
set -u
GPU_TEST_LIMIT=330; source .ci/gpu-lib.sh
gpu_setup tests.txt
all_test_groups
tests_done
nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/replay.txt"
for r in 1 2 3; do
  for s in coo graphvine; do
    replay_once orig $s 90; replay_line orig $s
    base_once $s; replay_line base $s
    t0=$(date +%s.%N); replay_once new $s 60; t1=$(date +%s.%N); replay_line new $s
    echo "== $s round $r" >> "$OUT/timeline.txt"
    python3 .ci/gpu-replay-timeline.py /tmp/r-$s-new $t0 $t1 >> "$OUT/timeline.txt" 2>&1
  done
done
