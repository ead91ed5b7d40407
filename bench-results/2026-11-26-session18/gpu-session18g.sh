#!/bin/bash
# Session 18, call 7: coo's device tests and its structure-contract cases at the last code (its array-path insert
# was tidied after call 5), then the 1,000-event batch's phases on R-MAT 20 (coo, graphvine), three runs.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=300
run tests/test_coo_fused_gpu.py tests/test_compact.py
run tests/test_structure_contract.py -k "cupy and coo"
tests_done tests.txt
phase_timing coo,graphvine 120 new new new
