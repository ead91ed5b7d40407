#!/usr/bin/env bash
# Session 12, call 9: a fresh replay's start with the CUDA context and / or cupyx made before the replay
# (.ci/gpu-startup.py's EARLY_CTX / EARLY_CUPYX variants), two rounds, coo and graphvine. Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup startup.txt
for r in 1 2; do
  for s in coo graphvine; do
    for v in "0 0" "1 0" "0 1" "1 1"; do
      set -- $v
      echo "== $s round $r EARLY_CTX=$1 EARLY_CUPYX=$2" >> "$OUT/startup.txt"
      EARLY_CTX=$1 EARLY_CUPYX=$2 timeout 60 python3 .ci/gpu-startup.py $s >> "$OUT/startup.txt" 2>&1
    done
  done
done
