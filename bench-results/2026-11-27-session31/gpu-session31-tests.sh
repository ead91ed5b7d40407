#!/usr/bin/env bash
# Session 31's device tests after the QA branches' merges: every device test group (all_test_groups), the files
# the branches changed or added tests to, on the GPU backend, a GPU replay of the bundled sample with every job
# killed by SIGKILL after its first checkpoint and resumed (its results against an uninterrupted run's), and the
# 1,000-event update (tests.phase_timing, R-MAT 20) in PHASE_PROCESSES fresh processes.
set -u
source .ci/gpu-lib.sh
gv_setup
git log --oneline -1 2>/dev/null | sed 's/^/copy .git names: /' | tee -a "$OUT/tests.txt"
GPU_TEST_LIMIT=${LIMIT:-330}
if [ "${GROUPS_ALL:-1}" = 1 ]; then all_test_groups; fi
run tests/test_api.py tests/test_replay_resume.py tests/test_parquet_connectors.py tests/test_results_layout.py \
    tests/test_replay_read_ahead.py tests/test_convert.py tests/test_produce_order.py
run tests/test_cli_errors.py tests/test_cli_mistakes.py tests/test_bench_runner.py tests/test_bench_algorithms.py \
    tests/test_kafka.py ${EXTRA_TESTS:-}
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
replay_kill_resume graphvine
for i in $(seq 1 "${PHASE_PROCESSES:-4}"); do
  timeout 150 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine | tee -a "$OUT/phase.txt"
done
