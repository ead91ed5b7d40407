#!/bin/bash
# Session 22, calls 11-12: the prefix sums in one pass (gv_scan, decoupled look-back; call 11 looked back from one
# thread a tile at a time, call 12 from a warp 32 tiles at a time) instead of two launches - the new
# device test of the scans against cumsum, the 1e6-edge bench at R-MAT 22 (whole state checked; the scans' times
# against call 9's 0.110 / 0.098 ms on an H100) and GraphVine's five device test groups.
set -u
source .ci/gpu-lib.sh
gv_setup
VINESTREAM_BACKEND=gpu timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_graphvine_fused_gpu.py \
  -k device_scans 2>&1 | tail -5 | tee -a "$OUT/tests.txt"
onepass_bench "${VARIANTS:-tiles-sync,tiles}"
grep -E "^  tiles|gv_scan" "$OUT/bench22.txt" | head -8
graphvine_tests "${LIMIT:-300}"
