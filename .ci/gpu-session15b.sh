#!/bin/bash
# Session 15, call 4: the warm-up's device test; fresh replays of the session's start (.wt/base), the resolve
# ahead alone (.wt/mid) and this tree, alternating, with this tree's timelines; first CuPy calls of this tree.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=200
run tests/test_replay_warm_up.py tests/test_resolve_kernels_gpu.py -k "warm or ahead"
tests_done tests.txt
nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/replay.txt"
for r in 1 2 3 4; do
  for s in coo graphvine; do
    base_once $s; replay_line base $s
    tree_once mid $s; replay_line mid $s
    t0=$(date +%s.%N); replay_once new $s 60; t1=$(date +%s.%N); replay_line new $s
    echo "== $s round $r" >> "$OUT/timeline.txt"
    python3 .ci/gpu-replay-timeline.py /tmp/r-$s-new $t0 $t1 >> "$OUT/timeline.txt" 2>&1
  done
done
for s in coo graphvine; do timeout 100 python3 .ci/gpu-first-uses.py $s > $OUT/first-$s.txt 2>&1; done
