#!/bin/bash
# Session 20, the call at the final code (the table shifts under their own names, shift="tiles"): the 1e6-edge
# bench at R-MAT 22 (rows' side, staged, one pass; one pass's whole state checked), GraphVine's device test groups,
# then `vinestream bench structures` at R-MAT 22 (graphvine, coo, csr's rebuild; 1,000 and 1e6 edges).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 --variants rows,staged,tiles \
  --out "$OUT" > "$OUT/bench22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
tail -n 22 "$OUT/bench22.txt"
GPU_TEST_LIMIT=${LIMIT:-300}
graphvine_test_groups
tests_done tests.txt
timeout 240 python3 -m vinestream bench structures --backend gpu --structures graphvine,coo,csr --scales 22 \
  --batch-sizes 1000,1000000 --json "$OUT/structures22.json" > "$OUT/structures22.txt" 2>&1
echo "structures rc=$?" | tee -a "$OUT/tests.txt"
grep -E "^rc=|passed|failed|rc=" "$OUT/tests.txt"
tail -n 16 "$OUT/structures22.txt"
