#!/bin/bash
# Session 23: GraphVine's five device test groups on this tree (the launches that need only the keys queued before
# sync 1, the reads beside the launches after them), then `vinestream bench structures` at R-MAT 22 (graphvine and csr;
# 1,000 and 1e6 edges) for this tree and the session's start (.wt/s22, cca2ce4: carried), alternating ROUNDS times
# (default 2), the runs' JSON together as $OUT/bench.json ({"SIDE-ROUND": ...}) and their tables in
# $OUT/structures.txt; then the host timeline (TIMELINE=) and the host's time per line (LINES=) of this tree's 1e6-edge
# calls.  TESTS= skips the tests.
set -u
source .ci/gpu-lib.sh
gv_setup
[ -n "${TESTS-1}" ] && graphvine_tests ${TEST_LIMIT:-200}
mkdir -p /tmp/j
structures_sides "${ROUNDS:-2}" s22 graphvine,csr /tmp/j
merge_json /tmp/j bench.json
[ -n "${TIMELINE-1}" ] && host_timeline && rm -f "$OUT/timeline.json"
[ -n "${LINES-1}" ] && { timeout 150 python3 .ci/gpu-gv-host-lines.py --scale 22 --big 1000000 --out "$OUT" \
  > /dev/null 2>&1; echo "lines rc=$?" | tee -a "$OUT/tests.txt"; }
grep -E "rc=" "$OUT/tests.txt"
