#!/bin/bash
# Session 15: thrust's first sorts before the cupyx import in the warm-up (device test); fresh replays of the tree
# before it (.wt/mid) and this tree alternating, five rounds, every side's timeline with its first epochs' phases.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_replay_warm_up.py tests/test_resolve_kernels_gpu.py
tests_done tests.txt
export FIRST_PHASES=1 TIMELINES=all
replay_sides 5 mid new
