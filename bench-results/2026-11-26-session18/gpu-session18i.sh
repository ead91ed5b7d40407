#!/bin/bash
# Session 18, call 9: after the review mends (GraphVine's whole-graph adjacency flag, the replay's warm-up bound):
# GraphVine's device tests, its structure-contract cases, the pipeline's GPU contract and the warm-up's tests.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=400
graphvine_test_groups
run tests/test_replay_warm_up.py tests/test_backend_lazy_imports.py tests/test_pipeline_jobs.py
tests_done tests.txt
