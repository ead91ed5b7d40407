#!/usr/bin/env bash
# Session 30's device tests after the three QA branches' merges: every device test group (all_test_groups), the
# files the branches changed or added tests to, on the GPU backend, and a GPU replay of the bundled sample with
# every job, killed by SIGKILL after its first checkpoint and resumed (the results against an uninterrupted run's).
set -u
source .ci/gpu-lib.sh
gv_setup
git log --oneline -1 2>/dev/null | sed 's/^/copy .git names: /' | tee -a "$OUT/tests.txt"
GPU_TEST_LIMIT=${LIMIT:-330}
all_test_groups
run tests/test_api.py tests/test_replay_resume.py tests/test_edge_ttl.py tests/test_parquet_connectors.py \
    tests/test_results_layout.py tests/test_worker_resilience.py
run tests/test_cli_errors.py tests/test_validate.py tests/test_report.py tests/test_bench_structures.py
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
replay_kill_resume graphvine
