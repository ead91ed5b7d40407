#!/usr/bin/env bash
# Session 11, first GPU call (about 2 minutes): where a GPU replay's time goes now. Fresh-process CLI replays
# of the starting code and this tree (coo, graphvine); warm replays in one process with the jobs and
# the results sink switched on and off in turn (.ci/gpu-replay-variants.py); a warm replay's apply and input
# threads under cProfile (.ci/gpu-profile-replay.py). Carry .data .wt/orig .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup replay.txt
for s in coo graphvine; do for side in orig new; do replay_once $side $s 60; replay_line $side $s; done; done
echo "t=$SECONDS" >> "$OUT/replay.txt"
log=$PWD/.data/sx-mathoverflow.events.parquet
ROUNDS=2 timeout 150 python3 .ci/gpu-replay-variants.py "$log" "$OUT/variants.json" coo graphvine > "$OUT/variants.txt" 2>&1
echo "t=$SECONDS" >> "$OUT/variants.txt"
LABELS=warm,profiled timeout 60 python3 .ci/gpu-profile-replay.py "$log" "$OUT" coo graphvine > /dev/null 2>&1
echo "t=$SECONDS" >> "$OUT/replay.txt"
