#!/usr/bin/env bash
# Device call 2 (from the repository root on the GPU box, .wt/small carried): this branch's GPU tests of its
# area first (nvcc compile, resolve / vertex map / coo fused against the array programs, the sync budget,
# the two-stream pipeline, the structure contract on CuPy), then tests.phase_timing (R-MAT 20, coo and
# graphvine) of main's tree, of this branch and of it without resolve's CUDA graph, interleaved 3 times,
# and the batch profile of both (R-MAT 22 left out: the session's device time is short).  Everything into $OUT (at most 8 files).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/log.txt"
(cd .wt/small
 VINESTREAM_BACKEND=gpu timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_resolve_kernels_gpu.py \
   tests/test_coo_fused_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_kernels_compile.py > "$OUT/tests.txt" 2>&1 &
 VINESTREAM_BACKEND=gpu timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_sync_budget.py tests/test_coo_fused.py \
   tests/test_concurrent_phases_gpu.py tests/test_vertex_map.py tests/test_pipeline_jobs.py > "$OUT/tests2.txt" 2>&1 &
 VINESTREAM_BACKEND=gpu timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_structure_contract.py \
   tests/test_pipeline_contract.py -k "cupy and (coo or graphvine)" > "$OUT/tests3.txt" 2>&1 &
 wait)
for f in tests.txt tests2.txt tests3.txt; do tail -n 2 "$OUT/$f" | sed "s/^/$f: /" >> "$OUT/log.txt"; done
echo "t=$SECONDS" >> "$OUT/log.txt"
for i in 1 2 3; do
  for side in main small small-nograph; do
    dir=.; [ $side != main ] && dir=.wt/small
    g=1; [ $side = small-nograph ] && g=0
    (cd $dir && VINESTREAM_RESOLVE_GRAPH=$g timeout 40 python3 -m tests.phase_timing --backend gpu --scale 20 \
       --structures graphvine,coo 2>&1 | tail -1) | sed "s/^/phase20 $side $i /" >> "$OUT/log.txt"
  done
done
echo "t=$SECONDS" >> "$OUT/log.txt"
P=bench-results/2026-11-25-small/profile_batch.py
timeout 45 python3 .wt/small/$P "$OUT" main 2>&1 | tail -3 >> "$OUT/log.txt"
(cd .wt/small && timeout 45 python3 $P "$OUT" small 2>&1 | tail -3) >> "$OUT/log.txt"
echo "t=$SECONDS" >> "$OUT/log.txt"
