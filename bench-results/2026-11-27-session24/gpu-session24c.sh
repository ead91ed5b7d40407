#!/bin/bash
# Session 24: GraphVine's five device test groups on this tree (the new keys written by the insert's shift, 32-bit pool
# slots in the shifts' tiles), then .ci/gpu-gv-onepass.py at R-MAT 22 (1e6 edges, 5 rounds) over VARIANTS (default:
# the source's tiles against tiles of more entries, their shared arrays sized to match).
set -u
source .ci/gpu-lib.sh
gv_setup
[ -n "${TESTS-1}" ] && graphvine_tests "${TEST_LIMIT:-200}"
onepass_bench "${VARIANTS:-tiles,tilemax2560,tilemax2816,tilemax3072}"
grep -E "rc=" "$OUT/tests.txt"
