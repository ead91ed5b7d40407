#!/bin/bash
# Session 20, call 4 (review mend): gv_tile_keys finds a key's first key with the module's gv_first_of instead of
# a gallop-back twin - the 1e6-edge bench at R-MAT 22 (rows' side, one pass; whole state checked; gv_tile_keys'
# device time in the kernel breakdown) and the fused device tests.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 --variants rows,tiles \
  --out "$OUT" > "$OUT/bench22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
tail -n 12 "$OUT/bench22.txt"
GPU_TEST_LIMIT=${LIMIT:-200}
run tests/test_graphvine_fused_gpu.py
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
