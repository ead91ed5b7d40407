#!/bin/bash
# (Ran on the tree with bench-results/2026-11-26-session22/variants.patch applied: the GV_GRID_MIN_BLOCKS define.)
# Session 22, call 3: the large batches' grid-stride kernels with more than 32 registers compiled for 6 or 8 blocks an
# SM (GV_GRID_MIN_BLOCKS, bench variants tiles-g6 / tiles-g8) - the 1e6-edge bench at R-MAT 22 (whole state checked) -
# and call 2's Nsight Compute report (carried as .data/prof22b.ncu-rep) printed per SASS instruction for the shifts
# and gv_insert_scatter (the stall samples of each instruction).
set -u
source .ci/gpu-lib.sh
gv_setup
onepass_bench "${VARIANTS:-tiles,tiles-g6,tiles-g8}"
NCU=/usr/local/cuda/bin/ncu
for k in gv_insert_shift gv_delete_shift gv_insert_scatter; do
  $NCU -i .data/prof22b.ncu-rep -k $k --page source --csv --print-source sass > "$OUT/sass-$k.csv" 2> "$OUT/sass-err.txt"
  echo "$k rc=$? $(wc -c < "$OUT/sass-$k.csv") bytes"
done
head -c 1500 "$OUT/sass-gv_insert_shift.csv"; cat "$OUT/sass-err.txt" | head -5
