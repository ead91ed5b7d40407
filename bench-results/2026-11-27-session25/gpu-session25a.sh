#!/bin/bash
# Session 25's device calls.  TESTS=gv (default): GraphVine's five device test groups; TESTS=all: every device test
# group; TESTS=: none.  TIMELINE=1: the host timelines of the 1e6-edge calls (R-MAT 22) of this tree and of
# .wt/$START (default s24: the session's start) into $OUT/timeline.txt and timeline-start.txt.  ROUNDS=N (default 0):
# R-MAT 22 graphvine and csr, this tree against .wt/$START alternating, into $OUT/bench.json and structures.txt; with
# SIDES (bench_sides' list, e.g. "new b:s25b start:s24") those sides instead.
set -u
source .ci/gpu-lib.sh
gv_setup
tests_by_choice "${TESTS-gv}" "${TEST_LIMIT-}"
if [ -n "${TIMELINE-}" ]; then
  host_timeline && rm -f "$OUT/timeline.json"
  mkdir -p /tmp/tl-start; (cd ".wt/${START:-s24}" && PYTHONPATH=$PWD:/tmp/site timeout 200 python3 ../../.ci/gpu-gv-host-timeline.py --scale 22 \
     --big 1000000 --out /tmp/tl-start > "$OUT/timeline-start.txt" 2>&1)
  echo "timeline-start rc=$?" | tee -a "$OUT/tests.txt"
fi
mkdir -p /tmp/j
if [ "${ROUNDS:-0}" -gt 0 ]; then
  if [ -n "${SIDES-}" ]; then
    bench_sides "$ROUNDS" "$SIDES" graphvine,csr 22 1000,1000000 /tmp/j structures.txt
  else
    structures_sides "$ROUNDS" "${START:-s24}" graphvine,csr /tmp/j
  fi
fi
merge_json /tmp/j bench.json
grep -E "rc=" "$OUT/tests.txt"
