#!/bin/bash
# Session 19, the closing call at the merged code: GraphVine's device test groups with the new defaults (the
# large key side and its one-pass shifts), `vinestream bench structures` at R-MAT 22 (graphvine, coo and csr's
# rebuild at 1,000- and 1e6-edge batches, memory after churn) and the 1,000-event phases.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
GPU_TEST_LIMIT=${LIMIT:-300}
graphvine_test_groups
tests_done tests.txt
timeout 240 python3 -m vinestream bench structures --backend gpu --structures graphvine,coo,csr --scales 22 \
  --batch-sizes 1000,1000000 --json "$OUT/structures22.json" > "$OUT/structures22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
phase_timing coo,graphvine 120 new new
grep -E "^rc=|passed|failed|bench rc" "$OUT/tests.txt"
tail -n 20 "$OUT/structures22.txt"
