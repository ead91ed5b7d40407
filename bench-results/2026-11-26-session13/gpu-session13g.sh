#!/usr/bin/env bash
# Session 13: the closing call's five groups that ran past their 150 s (eleven groups at once on one card), again
# with 330 s each. Carry .data .whl.
set -u
source .ci/gpu-lib.sh
GPU_TEST_LIMIT=330
gpu_setup tests.txt
run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
run tests/test_pipeline_jobs.py tests/test_kernels_compile.py
run tests/test_structure_contract.py -k "cupy and (csr or coo or graphvine or slabhash)"
run tests/test_structure_contract.py -k "cupy and (hornet or gpma or faimgraph or diffcsr)"
run tests/test_structure_contract.py -k "cupy and (custinger or aimgraph or ourograph)"
tests_done tests.txt
