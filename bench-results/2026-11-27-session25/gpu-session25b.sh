#!/bin/bash
# Session 25, call 4 (ran at e5faad8; gv_prep_scan and the timeline's --prep-tile were reverted after it):
# gv_prep_scan's tile size.  The host timeline of this tree's 1e6-edge calls (R-MAT 22, five rounds, the last
# reported) with tiles of 2,048, 1,024, 512 and 256 edges, then the start's (.wt/s24), each into
# $OUT/timeline-TILE.txt; the prep's and the walk's lines printed.
set -u
source .ci/gpu-lib.sh
gv_setup
lines="^(insert|delete)|gv_prep|gv_scan|gv_walk_keys"
for tile in 2048 1024 512 256 2048; do
  tree_timeline . "$tile" "$lines" --prep-tile "$tile"
done
tree_timeline .wt/s24 start "$lines"
