#!/bin/bash
# Session 21, call 3: the one-pass shifts at more blocks per SM (GV_SHIFT_MIN_BLOCKS 5 and 6 as bench variants, their
# registers capped to fit) beside this tree's default (4) and the rows' side, then the session's starting code
# (.wt/s20, 50c3b04: carried) on the same machine, rows' side and one pass, as the baseline of this card.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 \
  --variants ${VARIANTS:-rows,tiles,tiles-lb5,tiles-lb6} --out "$OUT" > "$OUT/bench22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
tail -n 16 "$OUT/bench22.txt"
mkdir -p "$OUT/start"
(cd .wt/s20 && PYTHONPATH=$PWD:/tmp/site timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 \
  --variants rows,tiles --out "$OUT/start" > "$OUT/start/bench22.txt" 2>&1)
echo "start bench rc=$?" | tee -a "$OUT/tests.txt"
tail -n 8 "$OUT/start/bench22.txt"
