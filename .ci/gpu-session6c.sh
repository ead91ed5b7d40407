#!/usr/bin/env bash
# Session 6, re-measure after trimming the small batch's host operations (BatchDelta slices, no-op
# conversions, chained phase events): the tests of those paths, then 1,000-event batches of the session's
# start (.wt/base = 5cf2165) and of main interleaved.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/tests.txt"
VINESTREAM_BACKEND=gpu timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_sync_budget.py \
  tests/test_resolve_kernels_gpu.py tests/test_pipeline_contract.py tests/test_coo_fused_gpu.py 2>&1 | tail -n 5 >> "$OUT/tests.txt"
for side in base new base new base new; do
  dir=$PWD; [ $side = base ] && dir=$PWD/.wt/base
  (cd "$dir" && timeout 60 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine) | sed "s/^/$side /" | tee -a "$OUT/phase.txt"
done
