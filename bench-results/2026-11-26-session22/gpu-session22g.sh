#!/bin/bash
# Session 22, call 7: each row's record prefetched into L1 by the shifts' table scan (GV_SHIFT_PREFETCH) and the
# finish kernels' unchanged per-vertex fields not rewritten (GV_FINISH_SKIP), against either or both off (bench
# variants) - the 1e6-edge bench at R-MAT 22 (whole state checked) and GraphVine's five device test groups.
set -u
source .ci/gpu-lib.sh
gv_setup
onepass_bench "${VARIANTS:-tiles,tiles-neither,tiles-noprefetch,tiles-noskip}"
grep -E "^  tiles|gv_(insert|delete)_(shift|finish)" "$OUT/bench22.txt" | sed -E 's/kernels .*(gv_(insert|delete)_shift [0-9.]+).*(gv_(insert|delete)_finish [0-9.]+)/\1 \3/'
graphvine_tests "${LIMIT:-300}"
