#!/usr/bin/env bash
# Session 13: the job outputs taken as snapshots (copies without a wait, tables made on the results sink's writer
# thread): their device tests and the pipeline's, then fresh CLI replays of the starting code, the session's start
# and this tree, three rounds, with timelines. Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_job_outputs.py tests/test_results_layout.py tests/test_sync_budget.py
run tests/test_pipeline_jobs.py
run tests/test_pipeline_contract.py -k "replay"
tests_done tests.txt
replay_rounds 3
