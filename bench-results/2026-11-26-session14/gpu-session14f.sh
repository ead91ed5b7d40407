#!/usr/bin/env bash
# Session 14: what writing results costs a warm replay (.ci/gpu-results-cost.py) with rss_bytes read at most every
# 0.1 s and one syncfs a flush; fresh CLI replays of the starting code, the session's start and this tree, three
# rounds. Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
for s in coo graphvine; do python3 .ci/gpu-results-cost.py $s > "$OUT/results-$s.txt" 2>&1; done
replay_rounds 3
