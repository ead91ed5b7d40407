#!/usr/bin/env bash
# Session 11: a GPU replay's timed window in parts (.ci/gpu-replay-window.py), fresh processes, three per
# structure. Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup window.txt
for s in coo graphvine; do replay_once new $s 90; done      # pyc files, kernels
for i in 1 2 3; do for s in coo graphvine; do
  timeout 60 python3 .ci/gpu-replay-window.py gpu $s >> "$OUT/window.txt" 2>&1
done; done
