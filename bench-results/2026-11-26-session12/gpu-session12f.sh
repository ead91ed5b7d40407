#!/usr/bin/env bash
# Session 12, closing call: every device test group (.ci/gpu-lib.sh all_test_groups), then fresh replays of the
# issue's starting code (.wt/orig), the session's start (.wt/base, 020d806) and this tree alternating, three
# rounds, with this tree's timelines. Carry .data .whl .wt/orig .wt/base.
set -u
GPU_TEST_LIMIT=330; source .ci/gpu-lib.sh
gpu_setup tests.txt
all_test_groups
tests_done
replay_rounds 3
