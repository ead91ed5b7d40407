#!/bin/bash
# Session 21, call 11 (the review mend): a row with entries but no moving key (an upsert's, a delete's absent keys)
# starts its shift at its count, not at rmin's large start wrapped to -1 in the 32-bit field (the re-homed rows'
# value: such rows were rewritten in place, the same state, wasted work) - the 1e6-edge bench at R-MAT 22 (rows' side,
# one pass; whole state checked, an upsert of existing keys among the checks) and GraphVine's five device test groups.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 --variants rows,tiles \
  --out "$OUT" > "$OUT/bench22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
grep -E "checks|registers" "$OUT/bench22.txt"; tail -n 7 "$OUT/bench22.txt"
GPU_TEST_LIMIT=${LIMIT:-300}
graphvine_test_groups
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
