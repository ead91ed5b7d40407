#!/bin/bash
# Session 15, call 4: the warm-up's device test; fresh replays of the session's start (.wt/base), the resolve
# ahead alone (.wt/mid) and this tree, alternating, with this tree's timelines; first CuPy calls of this tree.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=200
run tests/test_replay_warm_up.py tests/test_resolve_kernels_gpu.py -k "warm or ahead"
tests_done tests.txt
replay_sides 4 base mid new
for s in coo graphvine; do timeout 100 python3 .ci/gpu-first-uses.py $s > $OUT/first-$s.txt 2>&1; done
