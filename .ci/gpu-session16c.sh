#!/bin/bash
# Session 16, closing tests: every device test file, in the groups of all_test_groups side by side.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=420
all_test_groups
tests_done tests.txt
