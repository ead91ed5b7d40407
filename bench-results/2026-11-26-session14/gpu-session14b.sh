#!/usr/bin/env bash
# Session 14: GraphVine's pool in buffers with room to grow in place (the one-sync path's graphs kept across growths):
# its device tests, the growth script (variants alternating), a sampling profile of a fresh and a warm replay per
# structure (SAMPLES=0: none; call 3 ran so, after the growth floor), then fresh CLI replays of the starting code,
# the session's start and this tree, three rounds.
# Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=300
graphvine_test_groups
tests_done tests.txt
python3 .ci/gpu-graphvine-growth.py > "$OUT/growth.txt" 2>&1
[ "${SAMPLES:-1}" = 1 ] && for s in graphvine coo; do python3 .ci/gpu-sample-replay.py $s > "$OUT/sample-$s.txt" 2>&1; done
replay_rounds 3
