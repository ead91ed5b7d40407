#!/bin/bash
# Session 24: `vinestream bench structures` at R-MAT 20 (graphvine and csr, 1e6-edge batches) for this tree and
# .wt/$START (default s23, the session's start), alternating ROUNDS times (default 3): tables into $OUT/r20ab.txt,
# each run's JSON together as $OUT/r20ab.json ({"SIDE-ROUND": ...}).
set -u
source .ci/gpu-lib.sh
gv_setup
mkdir -p /tmp/ab
bench_sides "${ROUNDS:-3}" "new ${START:-s23}" graphvine,csr 20 1000000 /tmp/ab r20ab.txt
merge_json /tmp/ab r20ab.json
