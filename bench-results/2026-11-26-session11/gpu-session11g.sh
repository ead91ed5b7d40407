#!/usr/bin/env bash
# Session 11, seventh GPU call: who imports cupyx.scipy / SciPy on a replay's batch path (the warm-up thread
# off), and the direct loop's first and warm passes under cProfile at this tree. Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup who.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
python3 -m vinestream replay "$log" --backend gpu --structure coo --jobs pagerank,bfs,triangles --bfs-source 1 \
   --batch-size 10000 --no-progress > /dev/null 2>&1      # pyc files
WARM_UP=0 timeout 60 python3 .ci/gpu-who-imports.py "$log" coo >> "$OUT/who.txt" 2>&1
echo "t=$SECONDS" >> "$OUT/who.txt"
PROFILE=1 ROUNDS=1 timeout 150 python3 .ci/gpu-replay-direct.py "$log" "$OUT/direct.json" coo graphvine >> "$OUT/direct.txt" 2>&1
echo "t=$SECONDS" >> "$OUT/direct.txt"
