#!/usr/bin/env bash
# Session 13: where a fresh replay's window goes with SciPy's extras deferred: the CLI's imports (-X importtime),
# the start step by step (.ci/gpu-startup.py with the CLI's start), two rounds each. Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup startup.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
python3 -X importtime -m vinestream replay "$log" --backend gpu --structure coo --jobs pagerank,bfs,triangles \
  --bfs-source 1 --batch-size 10000 --out /tmp/r-imp --overwrite --no-progress 2> /tmp/imp.txt > /dev/null
sort -t'|' -k2 -n -r /tmp/imp.txt | head -80 > "$OUT/importtime.txt"
grep -nE "cupyx|scipy" /tmp/imp.txt | awk -F'|' '$2+0 > 3000' >> "$OUT/importtime.txt"
for r in 1 2; do for s in coo graphvine; do python3 .ci/gpu-startup.py $s >> "$OUT/startup.txt" 2>&1; done; done
