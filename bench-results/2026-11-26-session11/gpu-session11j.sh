#!/usr/bin/env bash
# Session 11: a fresh replay's timeline per structure (.ci/gpu-replay-timeline.py): launch -> first epoch,
# each epoch's step against its phases, last epoch -> process end. Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup timeline.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do replay_once new $s 90; done      # pyc files, kernels
for i in 1 2; do for s in coo graphvine; do
  rm -rf /tmp/tl; t0=$(date +%s.%N)
  python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles --bfs-source 1 \
     --batch-size 10000 --out /tmp/tl --no-progress > /tmp/rep.txt 2>&1
  t1=$(date +%s.%N)
  echo "== $s round $i: $(grep -E 'wall seconds|events / s' /tmp/rep.txt | tr -s ' ' | tr '\n' ';')" >> "$OUT/timeline.txt"
  python3 .ci/gpu-replay-timeline.py /tmp/tl $t0 $t1 >> "$OUT/timeline.txt" 2>&1
done; done
