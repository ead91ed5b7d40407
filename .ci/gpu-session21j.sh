#!/bin/bash
# Session 21, call 12 (review mends): the shifts keep their row's gv_shift_row as one local (no copy into eight), and the
# 1e6-edge benches load their graph through .ci/gv_rmat_held_out.py -
# the 1e6-edge bench at R-MAT 22 (rows' side, one pass; whole state checked) and GraphVine's five device test groups.
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
