#!/usr/bin/env bash
# Session 33, call 3: the session's tree (the QA fixes of replay, convert, the Kafka worker and the command line
# merged) on the GPU: every device test group, the test files the session changed on the GPU backend (two runs),
# the GPU replay killed by SIGKILL and resumed, tests.phase_timing in two processes, and the 1,000-event update with
# the collector on, frozen after the load, and off (.ci/gpu-first-process.py --gc).  Carry .data and .whl.
set -u
source .ci/gpu-lib.sh
gv_setup
python3 -m pip install -q --no-index --no-deps .whl/kafka*.whl .whl/crc32c*.whl 2>&1 | tail -1
GPU_TEST_LIMIT=330
all_test_groups
run tests/test_replay_resume.py tests/test_parquet_connectors.py tests/test_startup_signals.py tests/test_api.py \
    tests/test_bench_algorithms.py tests/test_cli.py
run tests/test_convert.py tests/test_cli_mistakes.py tests/test_cli_input_mistakes.py tests/test_cli_errors.py
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
replay_kill_resume graphvine
for i in 1 2; do
  timeout 150 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine | tee -a "$OUT/phase.txt"
done
for mode in on freeze off; do
  timeout 150 python3 .ci/gpu-first-process.py --gc $mode --batches 200 | sed "s/^/gc $mode: /" | tee -a "$OUT/gc.txt"
done
