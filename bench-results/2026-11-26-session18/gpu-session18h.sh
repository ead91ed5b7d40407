#!/bin/bash
# Session 18, call 8: four more rounds of fresh replays on whatever host comes, the starting code against HEAD.
set -u
source .ci/gpu-lib.sh
gpu_setup replay-host.txt
replay_sides 4 orig new
python3 .ci/gpu-replay-ratios.py "$OUT/replay.txt" > "$OUT/ratios.txt" 2>&1
