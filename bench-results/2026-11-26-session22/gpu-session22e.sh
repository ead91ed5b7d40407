#!/bin/bash
# Session 22, call 5: the shifts by cp.async only (the other variants gone), the prefix sums' tile size as a kernel
# argument and tried at 4096 / 2048 / 1024 / 512 items (bench variants tiles-scanN) - the 1e6-edge bench at R-MAT 22
# (whole state checked) and GraphVine's five device test groups.
set -u
source .ci/gpu-lib.sh
gv_setup
onepass_bench "${VARIANTS:-tiles-sync,tiles,tiles-scan2048,tiles-scan1024,tiles-scan512}"
grep -E "^  tiles" "$OUT/bench22.txt"
graphvine_tests "${LIMIT:-300}"
