#!/usr/bin/env bash
# Session 11, fourth GPU call: the replay's parts in one thread under cProfile, the process's first pass and a
# warm one, per structure (.ci/gpu-replay-direct.py with PROFILE=1). Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup direct.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
PROFILE=1 ROUNDS=1 timeout 150 python3 .ci/gpu-replay-direct.py "$log" "$OUT/direct.json" coo graphvine >> "$OUT/direct.txt" 2>&1
echo "t=$SECONDS" >> "$OUT/direct.txt"
