#!/bin/bash
# Session 21, call 7 (a form not kept: gv_insert_new_keys took 0.128 ms against gv_insert_scatter's 0.135, too little for a
# second kernel; the tree it ran on is in the session's README): the one pass's new keys by gv_insert_new_keys (each row's gv_shift_row and the walked blocks' entry
# bases, instead of gv_insert_scatter's plan rows, walk table and chunk searches) -
# the 1e6-edge bench at R-MAT 22 (rows' side, one pass; whole state
# checked), where the device idles (.ci/gpu-gv-host-timeline.py), and GraphVine's five device test groups.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 --variants ${VARIANTS:-rows,tiles} \
  --out "$OUT" > "$OUT/bench22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
grep -E "checks|registers" "$OUT/bench22.txt"; tail -n 7 "$OUT/bench22.txt"
timeout 200 python3 .ci/gpu-gv-host-timeline.py --scale 22 --big 1000000 --out "$OUT" > "$OUT/timeline.txt" 2>&1
echo "timeline rc=$?" | tee -a "$OUT/tests.txt"
head -40 "$OUT/timeline.txt"
GPU_TEST_LIMIT=${LIMIT:-300}
graphvine_test_groups
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
