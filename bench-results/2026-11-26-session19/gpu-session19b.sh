#!/bin/bash
# Session 19, call 5: the one-pass shifts with each tile's key window in shared memory - the 1e6-edge bench at
# R-MAT 22 (rows' side, one pass at two tile sizes, staged), GraphVine's device test groups (its fused tests,
# the structure and pipeline contracts on CuPy, the compile and sync-budget tests), the 1,000-event phases.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 --variants ${VARIANTS:-rows,tiles,tiles1024,staged} \
  --out "$OUT" > "$OUT/bench22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
GPU_TEST_LIMIT=${LIMIT:-300}
graphvine_test_groups
tests_done tests.txt
phase_timing coo,graphvine 120 new new
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
