#!/bin/bash
# Session 22, call 13 (closing): call 6's steps on this tree (`vinestream bench structures` for this tree and the
# session's start, .wt/s21, alternating ROUNDS times; its set-up writes $OUT/tests.txt first), then where the device
# idles in a 1e6-edge insert and delete (.ci/gpu-gv-host-timeline.py).
set -u
ONEPASS= bash bench-results/2026-11-26-session22/gpu-session22f.sh
source .ci/gpu-lib.sh
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
host_timeline
grep -E "rc=" "$OUT/tests.txt"
