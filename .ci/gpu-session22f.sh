#!/bin/bash
# Session 22, the closing call: `vinestream bench structures` at R-MAT 22 (graphvine, coo, csr's rebuild; 1,000 and 1e6
# edges) for this tree and the session's start (.wt/s21, b0f4b96: carried), alternating ROUNDS times (default 2) on
# one machine, each run's JSON as $OUT/SIDE-ROUND.json and its table into $OUT/structures.txt; then the 1e6-edge bench
# at R-MAT 22 (tiles-sync, tiles: the whole state checked).
set -u
source .ci/gpu-lib.sh
gv_setup
for r in $(seq 1 ${ROUNDS:-2}); do
  for side in new start; do
    dir=$PWD; [ "$side" = start ] && dir=$PWD/.wt/s21
    (cd "$dir" && PYTHONPATH=$dir:/tmp/site timeout 240 python3 -m vinestream bench structures --backend gpu \
       --structures graphvine,coo,csr --scales 22 --batch-sizes 1000,1000000 --json "$OUT/$side-$r.json" \
       > /tmp/structures.txt 2>&1)
    echo "structures $side-$r rc=$?" | tee -a "$OUT/tests.txt"
    { echo "== $side-$r"; cat /tmp/structures.txt; } >> "$OUT/structures.txt"
    grep -E "graphvine|coo  " /tmp/structures.txt | head -6
  done
done
[ -n "${ONEPASS-1}" ] && onepass_bench "${VARIANTS:-tiles-sync,tiles}"
grep -E "rc=" "$OUT/tests.txt"
