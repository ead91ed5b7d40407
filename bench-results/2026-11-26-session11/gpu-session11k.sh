#!/usr/bin/env bash
# Session 11, last GPU call: `bench bfs-fused` at R-MAT 22 ef 64, the session's start (.wt/base) and this
# tree; then fresh-process replays, the starting code and this tree alternating, two rounds per
# structure. Carry .data .wt/orig .wt/base .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup bfs.txt
for side in base new; do
  dir=$PWD; [ $side = base ] && dir=$PWD/.wt/base
  (cd "$dir" && timeout 100 python3 -m vinestream bench bfs-fused --backend gpu --scales 22 --edge-factor 64 \
     --json /tmp/bfs-$side.json) > /tmp/bfs.txt 2>&1
  sed "s/^/$side /" /tmp/bfs.txt >> "$OUT/bfs.txt"
done
cp /tmp/bfs-new.json "$OUT/bfs22-new.json" 2>/dev/null
echo "t=$SECONDS" >> "$OUT/bfs.txt"
for s in coo graphvine; do replay_once new $s 90; replay_once orig $s 90; done     # pyc files, kernels
for i in 1 2; do for s in coo graphvine; do
  replay_once orig $s 60; replay_line orig $s
  replay_once new $s 60; replay_line new $s
done; done
echo "t=$SECONDS" >> "$OUT/replay.txt"
