#!/bin/bash
# Session 24: `vinestream bench structures` at R-MAT 20 (graphvine and csr, 1e6-edge batches) for this tree and
# .wt/$START (default s23, the session's start), alternating ROUNDS times (default 3): tables into $OUT/r20ab.txt,
# each run's JSON together as $OUT/r20ab.json ({"SIDE-ROUND": ...}).
set -u
ROOT=$PWD
source .ci/gpu-lib.sh
gv_setup
mkdir -p /tmp/ab
for r in $(seq 1 "${ROUNDS:-3}"); do
  for side in new "${START:-s23}"; do
    dir=$ROOT; [ "$side" != new ] && dir=$ROOT/.wt/$side
    (cd "$dir" && PYTHONPATH=$dir:/tmp/site timeout 200 python3 -m vinestream bench structures --backend gpu \
       --structures graphvine,csr --scales 20 --batch-sizes 1000000 --json "/tmp/ab/$side-$r.json" > /tmp/ab.txt 2>&1)
    echo "r20 $side-$r rc=$?" | tee -a "$OUT/tests.txt"
    { echo "== $side-$r"; cat /tmp/ab.txt; } >> "$OUT/r20ab.txt"
    grep -E "^graphvine" /tmp/ab.txt | head -1
  done
done
python3 -c "
import json, glob, os
json.dump({os.path.basename(p)[:-5]: json.load(open(p)) for p in sorted(glob.glob('/tmp/ab/*.json'))},
          open('$OUT/r20ab.json', 'w'))"
