#!/bin/bash
# Session 22, call 1: the shifts' loads by cp.async (GV_SHIFT_ASYNC) against plain loads (tiles-sync) and at 5 blocks
# an SM (tiles-lb5) - the 1e6-edge bench at R-MAT 22 (rows' side, one pass; whole state checked) and GraphVine's five
# device test groups.
set -u
source .ci/gpu-lib.sh
gv_setup
onepass_bench "${VARIANTS:-rows,tiles-sync,tiles,tiles-lb5}"
graphvine_tests "${LIMIT:-300}"
