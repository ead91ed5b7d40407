#!/usr/bin/env bash
# Session 13, closing call: every device test group at this tree (all_test_groups), then fresh CLI replays of the
# starting code, the session's start (.wt/base, b447c34) and this tree, three rounds, with timelines.
# Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
all_test_groups
run tests/test_backend_lazy_imports.py tests/test_backend_context.py tests/test_cli.py tests/test_validate.py tests/test_results_layout.py
tests_done tests.txt
replay_rounds 3
