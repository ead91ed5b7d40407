#!/bin/bash
# Session 24: .ci/gpu-gv-onepass.py (R-MAT 22, 1e6 edges, the source's tiles, 5 rounds, whole state checked against
# the rows' side) in this tree and in .wt/$BASE (default d9: the tree before the change under test), alternating
# ROUNDS times (default 2): each run's summary into $OUT/bench22.txt, its JSON as $OUT/big-SIDE-ROUND.json.
set -u
ROOT=$PWD
source .ci/gpu-lib.sh
gv_setup
for r in $(seq 1 "${ROUNDS:-2}"); do
  for side in new "${BASE:-d9}"; do
    dir=$ROOT; [ "$side" != new ] && dir=$ROOT/.wt/$side
    mkdir -p "/tmp/o-$side-$r"
    (cd "$dir" && PYTHONPATH=$dir:/tmp/site timeout 200 python3 "$ROOT/.ci/gpu-gv-onepass.py" --scale 22 --big 1000000 \
       --rounds 5 --variants tiles --out "/tmp/o-$side-$r" > /tmp/o.txt 2>&1)
    echo "onepass $side-$r rc=$?" | tee -a "$OUT/tests.txt"
    { echo "== $side-$r"; grep -vE "^registers" /tmp/o.txt; } >> "$OUT/bench22.txt"
    cp "/tmp/o-$side-$r/big-22.json" "$OUT/big-$side-$r.json" 2>/dev/null
    grep -E "checks|tiles:" /tmp/o.txt
  done
done
