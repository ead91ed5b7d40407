#!/bin/bash
# Session 15, closing tests: every device test file, 13 groups side by side (the fresh replays' second host run
# apart: bench-results/2026-11-26-session15/gpu-session15e.sh).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=420
all_test_groups
tests_done tests.txt
