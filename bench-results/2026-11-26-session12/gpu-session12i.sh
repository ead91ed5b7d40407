#!/usr/bin/env bash
# Session 12: the warm-up's device set-up (thrust's first sorts on arrays no elementwise kernel made, the kernel
# modules' preloads) on a second thread while the first imports cupyx (SPLIT_WARM=1) against the one thread
# (.ci/gpu-startup.py), fresh processes alternating, three rounds. Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup startup.txt
for r in 1 2 3; do
  for s in coo graphvine; do
    for v in 1 0; do
      echo "== $s round $r SPLIT_WARM=$v" >> "$OUT/startup.txt"
      SPLIT_WARM=$v timeout 60 python3 .ci/gpu-startup.py $s >> "$OUT/startup.txt" 2>&1
    done
  done
done
