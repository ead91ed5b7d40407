#!/bin/bash
# Session 21, call 10 (a form not kept: the shifts took 0.794 / 0.590 ms against 0.630 / 0.565, the contiguous runs'
# uncoalesced loads costing more than the row changes they saved; the session's README says what it was): the shifts visiting each entry in the table scan's last pass (gv_tile_table's visit: a thread's
# contiguous run, one row change a row) instead of a strided pass after one more barrier -
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
