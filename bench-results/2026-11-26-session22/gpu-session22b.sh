#!/bin/bash
# Session 22, call 2: Nsight Compute on the second round's kernels of a 1e6-edge insert and delete at R-MAT 22 (the
# shifts by cp.async, gv_insert_scatter, gv_rank, gv_delete_finish, gv_walk_keys, gv_tile_keys), source lines and
# the stall reasons per line (-lineinfo), to find where the large batches' time goes.
set -u
source .ci/gpu-lib.sh
gv_setup
NCU=/usr/local/cuda/bin/ncu
KS='regex:gv_(insert_shift|delete_shift|insert_scatter|rank|delete_finish|walk_keys|tile_keys)$'
ROUND2=1 LINEINFO=1 timeout 420 $NCU --profile-from-start off -k "$KS" --import-source yes \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section LaunchStats --section SourceCounters \
  -o "$OUT/prof" python3 .ci/gpu-probe-shift-ncu.py > "$OUT/ncu-run.txt" 2>&1
echo "ncu rc=$?" | tee -a "$OUT/tests.txt"
tail -5 "$OUT/ncu-run.txt"
$NCU -i "$OUT/prof.ncu-rep" --page details > "$OUT/details.txt" 2>&1
grep -E "gv_|Duration|DRAM Throughput|Achieved Occupancy|Issued Warp|Registers Per|Theoretical Occ|No Eligible" "$OUT/details.txt" | head -80
$NCU -i "$OUT/prof.ncu-rep" --page source --csv --print-source cuda > "$OUT/source-cuda.csv" 2> "$OUT/source-err.txt" || \
  $NCU -i "$OUT/prof.ncu-rep" --page source --csv > "$OUT/source-cuda.csv" 2>> "$OUT/source-err.txt"
ls -la "$OUT"; head -c 600 "$OUT/source-cuda.csv"; cat "$OUT/source-err.txt" | head
