#!/bin/bash
# Session 21, call 1: the one-pass shifts reading each row's fields as one 32-byte record (gv_shift_row, written by
# gv_tile_keys) and doing their position arithmetic in 32 bits - the 1e6-edge bench at R-MAT 22 (rows' side, one
# pass; whole state checked), the fused device tests, and Nsight Compute on the two shifts (second launches).
# Call 2 ran it again (NCU=) with the tables' 32-bit loops and keys, and gv_tile_keys queued before the insert's read.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 --variants ${VARIANTS:-rows,tiles} \
  --out "$OUT" > "$OUT/bench22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
tail -n 12 "$OUT/bench22.txt"
GPU_TEST_LIMIT=${LIMIT:-200}
run tests/test_graphvine_fused_gpu.py
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
[ -n "${NCU-1}" ] || exit 0   # NCU= (empty): no profile
timeout 200 /usr/local/cuda/bin/ncu -k regex:"gv_(insert|delete)_shift" -s 2 -c 2 \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section LaunchStats python3 .ci/gpu-probe-shift-ncu.py > "$OUT/ncu.txt" 2>&1
echo "ncu rc=$?" | tee -a "$OUT/tests.txt"
grep -E "Duration|DRAM Throughput|Achieved Occupancy|Issued Warp|Stall|Registers|Theoretical Occ|No Eligible|Shared Memory Config" "$OUT/ncu.txt" | head -40
