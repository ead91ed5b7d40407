#!/bin/bash
# Session 15, call 6: batches sort in their block until the library's sort is loaded (device tests); fresh replays
# of the session's start (.wt/base) and this tree alternating, each with its timeline and first epochs' phases.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=200
run tests/test_resolve_kernels_gpu.py tests/test_replay_warm_up.py tests/test_sync_budget.py
tests_done tests.txt
export FIRST_PHASES=1 TIMELINES=all
replay_sides 5 base new
