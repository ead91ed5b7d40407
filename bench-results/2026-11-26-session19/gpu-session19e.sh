#!/bin/bash
# Session 19, the last call at the final code (the early block load in the shifts): GraphVine's device test
# groups and `vinestream bench structures` at R-MAT 22 (graphvine, coo, csr's rebuild; 1,000 and 1e6 edges).
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
grep -E "^rc=|passed|failed|bench rc" "$OUT/tests.txt"
tail -n 16 "$OUT/structures22.txt"
