#!/bin/bash
# Session 22, call 8: a key's row's first key found by a gallop back from the key (gv_first_of) against the binary
# search from 0 (bench variant tiles-binary, GV_FIRST_GALLOP 0) - the 1e6-edge bench at R-MAT 22 (whole state checked).
set -u
source .ci/gpu-lib.sh
gv_setup
onepass_bench "${VARIANTS:-tiles,tiles-binary}"
grep -E "^  tiles|gv_rank|gv_tile_keys|gv_insert_plan" "$OUT/bench22.txt" | sed -E 's/: kernels [0-9.]+ ms: .*(gv_rank [0-9.]+).*(gv_tile_keys [0-9.]+).*/: \1 \2/' | head -12
