#!/bin/bash
# Session 18, call 6: the algorithms bench on R-MAT 20 (PageRank, BFS, triangles; static and incremental), the
# session's start (.wt/base, 902d599) and this tree, alternating: PageRank's kernels gained a barrier (0df389e).
set -u
source .ci/gpu-lib.sh
gpu_setup bench.txt
for side in base new base new; do
  dir=$PWD; [ $side = base ] && dir=$PWD/.wt/base
  (cd "$dir" && timeout 240 python3 -m vinestream bench algorithms --backend gpu --scales 20 \
     --json "$OUT/alg-$side-$(date +%s).json") > /tmp/bench.txt 2>&1
  echo "== $side rc=$?" >> "$OUT/bench.txt"; tail -n 40 /tmp/bench.txt >> "$OUT/bench.txt"
done
