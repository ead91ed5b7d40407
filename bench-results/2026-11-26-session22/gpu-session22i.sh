#!/bin/bash
# Session 22, call 9 (the closing call): call 6's steps on this tree (`vinestream bench structures` for this tree and
# the session's start, .wt/s21, alternating; its set-up writes $OUT/tests.txt first), GraphVine's five device test
# groups, then the one-pass bench (tiles-sync, tiles; the whole state checked).
set -u
ONEPASS= bash bench-results/2026-11-26-session22/gpu-session22f.sh
source .ci/gpu-lib.sh
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
graphvine_tests "${LIMIT:-300}"
onepass_bench "${VARIANTS:-tiles-sync,tiles}"
grep -E "rc=" "$OUT/tests.txt"
