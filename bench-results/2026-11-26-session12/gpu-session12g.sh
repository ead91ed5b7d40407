#!/usr/bin/env bash
# Session 12: fresh replays of the starting code (CLI; its window starts once the pipeline is built) and of
# this tree (.ci/gpu-startup.py: the same replay() the CLI runs, with the times of its window and of the
# pipeline's build inside it), alternating, three rounds. Carry .data .whl .wt/orig.
set -u
source .ci/gpu-lib.sh
gpu_setup replay.txt
for r in 1 2 3; do
  for s in coo graphvine; do
    replay_once orig $s 90; replay_line orig $s
    timeout 60 python3 .ci/gpu-startup.py $s > /tmp/s.txt 2>&1
    echo "new $s round $r: $(grep -E 'window' /tmp/s.txt | cut -d';' -f1); $(grep -E 'build_pipeline|window starts' /tmp/s.txt | tr -s ' ' | tr '\n' ';')" >> "$OUT/replay.txt"
  done
done
