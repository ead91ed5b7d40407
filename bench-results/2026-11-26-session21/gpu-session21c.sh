#!/bin/bash
# Session 21, call 4: the shifts compiled for 6 blocks an SM by default (GV_SHIFT_MIN_BLOCKS) - the 1e6-edge bench at
# R-MAT 22 (rows' side, one pass at 6 and at 4 blocks; whole state checked), the fused device tests, and where the
# device idles in a 1e6-edge insert and delete (.ci/gpu-gv-host-timeline.py: host enqueue times against device
# completions).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 --variants ${VARIANTS:-rows,tiles,tiles-lb4} \
  --out "$OUT" > "$OUT/bench22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
tail -n 12 "$OUT/bench22.txt"
GPU_TEST_LIMIT=${LIMIT:-200}
run tests/test_graphvine_fused_gpu.py
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
timeout 200 python3 .ci/gpu-gv-host-timeline.py --scale 22 --big 1000000 --out "$OUT" > "$OUT/timeline.txt" 2>&1
echo "timeline rc=$?" | tee -a "$OUT/tests.txt"
cat "$OUT/timeline.txt" | head -80
