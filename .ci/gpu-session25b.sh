#!/bin/bash
# Session 25, call 4: gv_prep_scan's tile size.  The host timeline of this tree's 1e6-edge calls (R-MAT 22, five
# rounds, the last reported) with tiles of 2,048, 1,024, 512 and 256 edges, then the start's (.wt/s24), each into
# $OUT/timeline-TILE.txt; the prep's and the walk's lines printed.
set -u
source .ci/gpu-lib.sh
gv_setup
for tile in 2048 1024 512 256 2048; do
  timeout 150 python3 .ci/gpu-gv-host-timeline.py --scale 22 --big 1000000 --rounds 5 --prep-tile $tile \
    --out /tmp > "$OUT/timeline-$tile.txt" 2>&1
  echo "timeline-$tile rc=$?" | tee -a "$OUT/tests.txt"
  grep -E "^(insert|delete)|gv_prep|gv_scan|gv_walk_keys" "$OUT/timeline-$tile.txt" | head -12
done
(cd .wt/s24 && PYTHONPATH=$PWD:/tmp/site timeout 150 python3 ../../.ci/gpu-gv-host-timeline.py --scale 22 \
   --big 1000000 --rounds 5 --out /tmp > "$OUT/timeline-start.txt" 2>&1)
echo "timeline-start rc=$?" | tee -a "$OUT/tests.txt"
grep -E "^(insert|delete)|gv_prep|gv_scan|gv_walk_keys" "$OUT/timeline-start.txt" | head -12
