#!/usr/bin/env bash
# Session 11, third GPU call: a replay's parts without the application's threads (.ci/gpu-replay-direct.py),
# and warm replays with Python's thread switch interval at its default (5 ms) and at 0.2 ms, alternating.
# Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup direct.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
ROUNDS=3 timeout 150 python3 .ci/gpu-replay-direct.py "$log" "$OUT/direct.json" coo graphvine >> "$OUT/direct.txt" 2>&1
echo "t=$SECONDS" >> "$OUT/direct.txt"
for i in 1 2; do for sw in "" 0.0002; do
  echo "switch=${sw:-default}" >> "$OUT/switch.txt"
  SWITCH=$sw VARIANTS=all+out,all,none ROUNDS=1 timeout 60 python3 .ci/gpu-replay-variants.py "$log" /tmp/v.json coo graphvine \
    >> "$OUT/switch.txt" 2>&1
done; done
echo "t=$SECONDS" >> "$OUT/switch.txt"
