#!/bin/bash
# Session 21, call 11 (the review mend): a row with entries but no moving key (an upsert's, a delete's absent keys)
# starts its shift at its count, not at rmin's large start wrapped to -1 in the 32-bit field (the re-homed rows'
# value: such rows were rewritten in place, the same state, wasted work) - the 1e6-edge bench at R-MAT 22 (rows' side,
# one pass; whole state checked, an upsert of existing keys among the checks) and GraphVine's five device test groups.
set -u
source .ci/gpu-lib.sh
gv_setup
onepass_bench rows,tiles
graphvine_tests "${LIMIT:-300}"
