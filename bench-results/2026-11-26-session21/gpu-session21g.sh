#!/bin/bash
# Session 21, after the closing call: the 1,000-event phases (resolve + vertex + structure update, R-MAT 20) of this
# tree and of the session's start (.wt/s20, 50c3b04: carried) alternating, three rounds, on one machine - the closing
# call's host ran every phase (resolve and the vertex map too, which this session did not touch) 30-40% slower than
# session 19's. Call 15 ran it again on an H100 (kind nvidia-h100-x1) at 329e9fb; call 16 there with COMPILE=1 (each
# tree's GraphVine module compiled into CuPy's cache first, in a process of its own).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
if [ -n "${COMPILE:-}" ]; then
  graphvine_compile tests.txt
  (cd .wt/s20 && PYTHONPATH=$PWD:/tmp/site graphvine_compile tests.txt)
fi
for r in 1 2 3; do
  for side in new start; do
    dir=$PWD; [ "$side" = start ] && dir=$PWD/.wt/s20
    (cd "$dir" && PYTHONPATH=$dir:/tmp/site timeout 120 python3 -m tests.phase_timing --backend gpu --scale 20 \
       --structures coo,graphvine) | sed "s/^/$side /" | tee -a "$OUT/phase.txt"
  done
done
