#!/bin/bash
# Session 22, call 15: gv_rank's per-row minimum by one atomic a row and warp (a lane whose left neighbour is of its row
# and moves skips it) - the 1e6-edge bench at R-MAT 22 (whole state checked; gv_rank against calls 12 and 14's 0.093 /
# 0.119-0.120 ms on an H100) and GraphVine's five device test groups.
set -u
source .ci/gpu-lib.sh
gv_setup
onepass_bench "${VARIANTS:-tiles}"
grep -E "^  tiles" -A 2 "$OUT/bench22.txt" | head -3
graphvine_tests "${LIMIT:-300}"
