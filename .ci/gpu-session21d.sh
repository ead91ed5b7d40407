#!/bin/bash
# Session 21, call 5 (and call 6, with the scans strided and a block-width at a time: scan_columns by the same two
# kernels): the large batches' prefix sums by this module's kernels (scan_rows, scan_columns) instead of
# CuPy's cumsum, and gv_prep filling the flags - the 1e6-edge bench at R-MAT 22 (rows' side, one pass; whole state
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
