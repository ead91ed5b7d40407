#!/bin/bash
# Session 15, call 5: CUDA's eager module loading against its lazy default (fresh replays, this tree), and warm
# replays in one process of the session's start (.wt/base) against this tree, alternating.
set -u
source .ci/gpu-lib.sh
gpu_setup replay.txt
LOG=$PWD/.data/sx-mathoverflow.events.parquet
for r in 1 2 3 4; do
  for s in coo graphvine; do
    for mode in LAZY EAGER; do
      t0=$(date +%s%N)
      CUDA_MODULE_LOADING=$mode timeout 60 python3 -m vinestream replay "$LOG" --backend gpu --structure $s \
        --jobs pagerank,bfs,triangles --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-$mode --overwrite \
        --no-progress > /tmp/replay.txt 2>&1
      echo "process wall seconds $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> /tmp/replay.txt
      replay_line $mode $s
    done
  done
done
for r in 1 2; do
  for s in coo graphvine; do
    (cd .wt/base && LOG=$LOG timeout 100 python3 ../../.ci/gpu-warm-replays.py $s 5) | sed "s/^/base /" >> $OUT/warm.txt 2>&1
    LOG=$LOG timeout 100 python3 .ci/gpu-warm-replays.py $s 5 | sed "s/^/new /" >> $OUT/warm.txt 2>&1
  done
done
