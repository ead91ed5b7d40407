#!/bin/bash
# Session 20, call 2: the table shifts reading each row's old block size from gv_tile_keys (osz) - the bench
# (rows' side, searching tiles, table; the table's whole state checked), the fused device tests, and Nsight
# Compute on the two table kernels (the second insert's and delete's launches).
# (Ran on the tree before d75d462, where "table" was a third shift value beside the searching "tiles"; since
# d75d462 the table form is "tiles" and "table" is gone, so this script records the call and no longer runs.)
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 --check-shift table \
  --variants ${VARIANTS:-rows,tiles,table} --out "$OUT" > "$OUT/bench22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
tail -n 22 "$OUT/bench22.txt"
GPU_TEST_LIMIT=${LIMIT:-200}
run tests/test_graphvine_fused_gpu.py
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
SHIFT=table timeout 200 /usr/local/cuda/bin/ncu -k regex:"gv_(insert|delete)_shift_table" -s 2 -c 2 \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats \
  --section MemoryWorkloadAnalysis python3 .ci/gpu-probe-shift-ncu.py > "$OUT/ncu.txt" 2>&1
echo "ncu rc=$?" | tee -a "$OUT/tests.txt"
grep -E "Duration|DRAM Throughput|Achieved Occupancy|Issued Warp|Stall|Registers|Theoretical Occ|No Eligible" "$OUT/ncu.txt" | head -40
