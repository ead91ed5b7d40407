#!/bin/bash
# Session 20, call 1: GraphVine's one-pass shifts with a table per tile (shift="table": gv_insert_shift_table /
# gv_delete_shift_table) - compiled first, then the 1e6-edge bench at R-MAT 22 (the rows' side, the searching
# tiles, the table at two tile sizes, interleaved; the table's whole state checked against the rows' side) and
# the fused device tests.
# (Ran on the tree before d75d462, where "table" was a third shift value beside the searching "tiles"; since
# d75d462 the table form is "tiles" and "table" is gone, so this script records the call and no longer runs.)
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 --check-shift table \
  --variants ${VARIANTS:-rows,tiles,table,table1024} --out "$OUT" > "$OUT/bench22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
tail -n 30 "$OUT/bench22.txt"
GPU_TEST_LIMIT=${LIMIT:-200}
run tests/test_graphvine_fused_gpu.py
run tests/test_graphvine_kernels_compile.py
tests_done tests.txt
tail -n 40 "$OUT/tests.txt"
