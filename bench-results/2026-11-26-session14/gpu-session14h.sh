#!/usr/bin/env bash
# Session 14: the warm-up's kernel modules loaded side by side (stream/app/warm_up.preload_side_by_side): its tests,
# then fresh CLI replays with an EMPTY CuPy kernel cache each (CUPY_CACHE_DIR a new directory: every kernel compiled
# by NVRTC inside the run), the starting code, the session's start and this tree, two rounds, into $OUT/replay.txt.
# Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_replay_warm_up.py tests/test_backend_context.py
tests_done tests.txt
echo "cold CuPy cache (a new CUPY_CACHE_DIR for every process)" > "$OUT/replay.txt"
for r in 1 2; do
  for s in graphvine coo; do
    export CUPY_CACHE_DIR=$(mktemp -d); replay_once orig $s 150; replay_line orig $s
    export CUPY_CACHE_DIR=$(mktemp -d); base_once $s; replay_line base $s
    export CUPY_CACHE_DIR=$(mktemp -d); replay_once new $s 120; replay_line new $s
  done
done
