#!/bin/bash
# Session 22, call 17: the large one-pass batches' finish kernels on a side stream, beside the shifts and the new
# keys' scatter (GraphVine._beside) - the 1e6-edge bench at R-MAT 22 (whole state checked; wall and device span
# against call 15's), the host timeline, and GraphVine's five device test groups.
set -u
source .ci/gpu-lib.sh
gv_setup
onepass_bench "${VARIANTS:-tiles}"
grep -E "^  tiles" -A 2 "$OUT/bench22.txt" | head -3
host_timeline
graphvine_tests "${LIMIT:-300}"
