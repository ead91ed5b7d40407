#!/bin/bash
# Session 15, last call: every device test file (13 groups), then five more rounds of fresh replays against the
# issue's starting code and the session's start (a second host's figures for the closing note).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=420
all_test_groups
tests_done tests.txt
replay_rounds 5
