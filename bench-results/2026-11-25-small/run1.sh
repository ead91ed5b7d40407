#!/usr/bin/env bash
# Device call 1 (from the repository root on the GPU box, .wt/small carried): the batch profile of main's
# tree and of this branch, tests.phase_timing of both (R-MAT 20, coo and graphvine), then this branch's
# GPU tests of its area.  Everything into $OUT (at most 8 files).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/log.txt"
P=.wt/small/bench-results/2026-11-25-small/profile_batch.py
UNIT=1 timeout 60 python3 $P "$OUT" main 2>&1 | tail -5 >> "$OUT/log.txt"
(cd .wt/small && timeout 45 python3 bench-results/2026-11-25-small/profile_batch.py "$OUT" small 2>&1 | tail -4) >> "$OUT/log.txt"
for side in main small; do
  dir=.; [ $side = small ] && dir=.wt/small
  (cd $dir && timeout 40 python3 -m tests.phase_timing --backend gpu --scale 20 --structures graphvine,coo 2>&1 | tail -1) \
    | sed "s/^/phase $side /" >> "$OUT/log.txt"
done
echo "t=$SECONDS" >> "$OUT/log.txt"
cd .wt/small
VINESTREAM_BACKEND=gpu timeout 150 python3 -m pytest -q -p no:cacheprovider -x tests/test_resolve_kernels_gpu.py \
  tests/test_coo_fused_gpu.py tests/test_vertex_map_fused_gpu.py > "$OUT/tests.txt" 2>&1 &
VINESTREAM_BACKEND=gpu timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_sync_budget.py tests/test_coo_fused.py \
  tests/test_concurrent_phases_gpu.py > "$OUT/tests2.txt" 2>&1 &
wait
tail -3 "$OUT/tests.txt" "$OUT/tests2.txt" >> "$OUT/log.txt"
echo "t=$SECONDS" >> "$OUT/log.txt"
