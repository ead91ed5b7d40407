#!/bin/bash
# Session 16: the 1,000-event batch's structure phases (tests.phase_timing, R-MAT 20, coo and graphvine) of
# session 12's last code (.wt/s12, b447c34: 0.73 / 0.76-0.82 ms then) against this tree's, alternating, three
# rounds each, to tell a regression from a slower host.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
for r in 1 2 3; do
  for side in s12 new; do
    dir=$PWD; [ "$side" = s12 ] && dir=$PWD/.wt/s12
    (cd "$dir" && timeout 120 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine) \
      | sed "s/^/$side /" | tee -a "$OUT/phase.txt"
  done
done
