#!/usr/bin/env bash
# Session 11, eighth GPU call: who imports cupyx.scipy / SciPy on a replay's batch path (the warm-up thread off),
# the stack's project frames. Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup who.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
python3 -m vinestream replay "$log" --backend gpu --structure coo --jobs pagerank,bfs,triangles --bfs-source 1 \
   --batch-size 10000 --no-progress > /dev/null 2>&1      # pyc files
for s in coo graphvine; do WARM_UP=0 timeout 60 python3 .ci/gpu-who-imports.py "$log" $s >> "$OUT/who.txt" 2>&1; done
echo "t=$SECONDS" >> "$OUT/who.txt"
