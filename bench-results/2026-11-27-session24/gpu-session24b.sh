#!/bin/bash
# Session 24, the one-pass insert's new keys: this tree (written beside the shift), .wt/varB (the same but
# NEW_KEYS_BESIDE = False: after the shift) and .wt/s23 (the session's start: every new key after the shift), each
# one's host timeline of a 1e6-edge insert and delete on R-MAT 22, then `vinestream bench structures` (R-MAT 22,
# graphvine and csr) for the three alternating ROUNDS times: $OUT/timeline-SIDE.txt, structures.txt, bench.json.
set -u
ROOT=$PWD
source .ci/gpu-lib.sh
gv_setup
for side in new varB s23; do
  dir=$PWD; [ "$side" != new ] && dir=$PWD/.wt/$side
  (cd "$dir" && PYTHONPATH=$dir:/tmp/site graphvine_compile tests.txt)
done
mkdir -p /tmp/j
for side in new varB s23; do
  dir=$PWD; [ "$side" != new ] && dir=$PWD/.wt/$side
  (cd "$dir" && PYTHONPATH=$dir:/tmp/site timeout 200 python3 "$ROOT/.ci/gpu-gv-host-timeline.py" --scale 22 \
     --big 1000000 --out /tmp/j > "$OUT/timeline-$side.txt" 2>&1)
  echo "timeline $side rc=$?" | tee -a "$OUT/tests.txt"
done
bench_sides "${ROUNDS:-2}" "new varB s23" graphvine,csr 22 1000,1000000 /tmp/j structures.txt
merge_json /tmp/j bench.json
grep -E "device idle|wall" "$OUT"/timeline-*.txt
