#!/usr/bin/env bash
# Session 13, last call: at the closing code (ca09429's), the pipeline contract on the GPU and the replay and CLI
# tests, which call10 did not run. Carry .data .whl.
set -u
source .ci/gpu-lib.sh
GPU_TEST_LIMIT=280
gpu_setup tests.txt
run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
run tests/test_replay_warm_up.py tests/test_replay_read_ahead.py tests/test_cli.py tests/test_backend_lazy_imports.py
tests_done tests.txt
