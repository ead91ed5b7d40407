#!/bin/bash
# Session 19, the last call at the final code: GraphVine's device test groups (with the power-of-two block
# positions in the shifts) and three runs of the 1,000-event phases (coo, graphvine).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
GPU_TEST_LIMIT=${LIMIT:-300}
graphvine_test_groups
tests_done tests.txt
phase_timing coo,graphvine 120 new new new
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
