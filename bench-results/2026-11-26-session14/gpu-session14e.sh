#!/usr/bin/env bash
# Session 14: the results' one syncfs a flush, and the interpreter's switch interval in a warm replay
# (.ci/gpu-replay-jobs.py, coo and graphvine); fresh CLI replays of the starting code, the session's start and this
# tree, three rounds. Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_results_layout.py tests/test_replay_read_ahead.py
tests_done tests.txt
for s in coo graphvine; do python3 .ci/gpu-replay-jobs.py $s > "$OUT/jobs-$s.txt" 2>&1; done
replay_rounds 3
