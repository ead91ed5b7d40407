#!/bin/bash
# Session 15, call 3: the resolve ahead sorting in its block (device test), a fresh process's first CuPy calls,
# fresh replays of this tree against the session's start (.wt/base) alternating.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=200
run tests/test_resolve_kernels_gpu.py tests/test_resolve_kernels.py
tests_done tests.txt
for s in coo graphvine; do timeout 100 python3 .ci/gpu-first-uses.py $s > $OUT/first-$s.txt 2>&1; done
nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/replay.txt"
for r in 1 2 3 4; do
  for s in coo graphvine; do
    base_once $s; replay_line base $s
    replay_once new $s 60; replay_line new $s
  done
done
