#!/bin/bash
# Session 24's device calls.  TESTS=gv (default): GraphVine's five device test groups; TESTS=all: every device test
# group (all_test_groups); TESTS=: none.  R20=N: `vinestream bench structures` at R-MAT 20 (csr, coo, graphvine; 1,000
# and 1e6 edges) N times, the README's all-structures table, into $OUT/r20.json and r20.txt.  ROUNDS=N (default 0):
# R-MAT 22 graphvine and csr, this tree against .wt/$START (default s23) alternating, into $OUT/bench.json and
# structures.txt.  TIMELINE=1: the host timeline of this tree's 1e6-edge calls.
set -u
source .ci/gpu-lib.sh
gv_setup
tests_by_choice "${TESTS-gv}" "${TEST_LIMIT-}"
mkdir -p /tmp/j /tmp/r20
for r in $(seq 1 "${R20:-0}"); do
  timeout 240 python3 -m vinestream bench structures --backend gpu --structures csr,coo,graphvine --scales 20 \
    --batch-sizes 1000,1000000 --json "/tmp/r20/r20-$r.json" > /tmp/r20.txt 2>&1
  echo "r20-$r rc=$?" | tee -a "$OUT/tests.txt"
  { echo "== r20-$r"; cat /tmp/r20.txt; } >> "$OUT/r20.txt"
done
[ "${ROUNDS:-0}" -gt 0 ] && structures_sides "$ROUNDS" "${START:-s23}" graphvine,csr /tmp/j
merge_json /tmp/j bench.json
merge_json /tmp/r20 r20.json
[ -n "${TIMELINE-}" ] && host_timeline && rm -f "$OUT/timeline.json"
grep -E "rc=" "$OUT/tests.txt"
