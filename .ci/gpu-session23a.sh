#!/bin/bash
# Session 23: GraphVine's five device test groups on this tree (the launches that need only the keys queued before
# sync 1, the reads beside the launches after them), then `vinestream bench structures` at R-MAT 22 (graphvine and csr;
# 1,000 and 1e6 edges) for this tree and the session's start (.wt/s22, cca2ce4: carried), alternating ROUNDS times
# (default 2), the runs' JSON together as $OUT/bench.json ({"SIDE-ROUND": ...}) and their tables in
# $OUT/structures.txt; then the host timeline (TIMELINE=) and the host's time per line (LINES=) of this tree's 1e6-edge
# calls.  TESTS= skips the tests.
set -u
source .ci/gpu-lib.sh
gv_setup
[ -n "${TESTS-1}" ] && graphvine_tests ${TEST_LIMIT:-200}
mkdir -p /tmp/j
for r in $(seq 1 ${ROUNDS:-2}); do
  for side in new start; do
    dir=$PWD; [ "$side" = start ] && dir=$PWD/.wt/s22
    (cd "$dir" && PYTHONPATH=$dir:/tmp/site timeout 200 python3 -m vinestream bench structures --backend gpu \
       --structures graphvine,csr --scales 22 --batch-sizes 1000,1000000 --json "/tmp/j/$side-$r.json" \
       > /tmp/structures.txt 2>&1)
    echo "structures $side-$r rc=$?" | tee -a "$OUT/tests.txt"
    { echo "== $side-$r"; cat /tmp/structures.txt; } >> "$OUT/structures.txt"
    grep -E "graphvine" /tmp/structures.txt | head -4
  done
done
python3 -c "
import json, glob, os
json.dump({os.path.basename(p)[:-5]: json.load(open(p)) for p in sorted(glob.glob('/tmp/j/*.json'))},
          open('$OUT/bench.json', 'w'))"
[ -n "${TIMELINE-1}" ] && host_timeline && rm -f "$OUT/timeline.json"
[ -n "${LINES-1}" ] && { timeout 150 python3 .ci/gpu-gv-host-lines.py --scale 22 --big 1000000 --out "$OUT" \
  > /dev/null 2>&1; echo "lines rc=$?" | tee -a "$OUT/tests.txt"; }
grep -E "rc=" "$OUT/tests.txt"
