#!/bin/bash
# Session 22, the closing call: `vinestream bench structures` at R-MAT 22 (graphvine, coo, csr's rebuild; 1,000 and 1e6
# edges) for this tree and the session's start (.wt/s21, b0f4b96: carried), alternating ROUNDS times (default 2) on
# one machine, each run's JSON as $OUT/SIDE-ROUND.json and its table into $OUT/structures.txt; then the 1e6-edge bench
# at R-MAT 22 (tiles-sync, tiles: the whole state checked).
set -u
source .ci/gpu-lib.sh
gv_setup
structures_sides "${ROUNDS:-2}" s21 graphvine,coo,csr "$OUT"
[ -n "${ONEPASS-1}" ] && onepass_bench "${VARIANTS:-tiles-sync,tiles}"
grep -E "rc=" "$OUT/tests.txt"
