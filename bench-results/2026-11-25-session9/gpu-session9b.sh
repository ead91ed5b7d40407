#!/usr/bin/env bash
# Session 9, second call (about 1.5 minutes): where a fresh process's first batches go (coo's first insert
# took 236 ms and graphvine's first PageRank 220 ms with CuPy's disk cache warm): replays to fill the disk
# cache, then a fresh process's first replay profiled, with and without the warm-up thread.
set -u
source .ci/gpu-lib.sh
gpu_setup first.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  timeout 60 python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
     --bfs-source 1 --batch-size 10000 --no-progress > /dev/null 2>&1
done
echo "cache t=$SECONDS" >> "$OUT/first.txt"
for w in 1 0; do
  mkdir -p /tmp/p$w
  LABELS=profiled WARM_UP=$w timeout 40 python3 .ci/gpu-profile-replay.py "$log" /tmp/p$w coo graphvine >> "$OUT/first.txt" 2>&1
  for s in coo graphvine; do cp /tmp/p$w/replay-$s.txt "$OUT/first-$s-warm$w.txt"; done
done
timeout 30 python3 .ci/gpu-first-calls.py >> "$OUT/first.txt" 2>&1
echo "t=$SECONDS" >> "$OUT/first.txt"
