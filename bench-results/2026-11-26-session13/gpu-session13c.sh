#!/usr/bin/env bash
# Session 13: where a replay's threads spend their wall time (.ci/gpu-sample-replay.py: a fresh process's first
# replay, then a warm one), coo and graphvine. Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup sample.txt
for s in coo graphvine; do timeout 120 python3 .ci/gpu-sample-replay.py $s > "$OUT/sample-$s.txt" 2>&1; done
