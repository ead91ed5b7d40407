#!/bin/bash
# Session 21, the closing call: `vinestream bench structures` at R-MAT 22 (graphvine, coo, csr's rebuild; 1,000 and 1e6
# edges) for this tree and for the session's start (.wt/s20, 50c3b04: carried), alternating twice, on one machine; the
# 1,000-event phases (resolve + vertex + structure update, R-MAT 20) three times for coo and graphvine.  Call 13 ran it
# again on an H100 (ROUNDS=1 PHASES=) at d8358a1 plus call 12's review mends.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
for r in $(seq 1 ${ROUNDS:-2}); do
  for side in new start; do
    dir=$PWD; [ "$side" = start ] && dir=$PWD/.wt/s20
    mkdir -p "$OUT/$side$r"
    (cd "$dir" && PYTHONPATH=$dir:/tmp/site timeout 240 python3 -m vinestream bench structures --backend gpu \
       --structures graphvine,coo,csr --scales 22 --batch-sizes 1000,1000000 --json "$OUT/$side$r/structures22.json" \
       > "$OUT/$side$r/structures22.txt" 2>&1)
    echo "structures $side$r rc=$?" | tee -a "$OUT/tests.txt"
    grep -E "graphvine|coo  " "$OUT/$side$r/structures22.txt" | head -6
  done
done
[ -n "${PHASES-1}" ] && phase_timing coo,graphvine 120 new new new   # PHASES= (empty): none
grep -E "rc=" "$OUT/tests.txt"
