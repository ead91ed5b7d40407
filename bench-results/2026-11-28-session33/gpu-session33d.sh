#!/usr/bin/env bash
# Session 33, call 4: the final tree (fix-kafka5 merged after call 3) on the GPU backend: the files it and the
# review changed that run there (results layout, config, run --check, start-up signals, CLI, API, replay resume,
# Parquet connectors, convert), and the GPU replay killed by SIGKILL and resumed.  Carry .data and .whl.
set -u
source .ci/gpu-lib.sh
gv_setup
python3 -m pip install -q --no-index --no-deps .whl/kafka*.whl .whl/crc32c*.whl 2>&1 | tail -1
GPU_TEST_LIMIT=300
run tests/test_results_layout.py tests/test_config.py tests/test_run_check.py tests/test_startup_signals.py
run tests/test_cli.py tests/test_api.py tests/test_replay_resume.py tests/test_parquet_connectors.py
run tests/test_convert.py tests/test_cli_errors.py tests/test_metrics.py
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
replay_kill_resume graphvine
