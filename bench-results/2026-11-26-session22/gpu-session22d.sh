#!/bin/bash
# (Ran on the tree with bench-results/2026-11-26-session22/variants.patch applied: the three GV_SHIFT_* toggles.)
# Session 22, call 4: the shifts' entries as a run a warp (GV_SHIFT_WARP_RUNS), the last entry base kept
# (GV_SHIFT_BASE_CACHE), the tiles' flags by release / acquire (GV_SHIFT_ACQREL), as bench variants - the 1e6-edge
# bench at R-MAT 22 (the default's whole state checked against the rows' side).
set -u
source .ci/gpu-lib.sh
gv_setup
onepass_bench "${VARIANTS:-tiles,tiles-runs,tiles-runs-cache,tiles-acqrel,tiles-runs-acqrel,tiles-all}"
grep -E "^  tiles" "$OUT/bench22.txt"
grep -E "edges_after|rounds_ok" "$OUT/big-22.json" | head
