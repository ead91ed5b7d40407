#!/bin/bash
# Session 17: every device test file at the session's HEAD (session 16's last commit, a GraphVine refactor, had
# run on CI only), then four rounds of fresh replays, the starting code against this tree.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=420
all_test_groups
tests_done tests.txt
replay_sides 4 orig new
