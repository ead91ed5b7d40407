#!/usr/bin/env bash
# Device call 2 (from the repository root on the GPU box; .wt/gvsmall, .wt/base and .data carried): the
# combined-phase GPU tests again, graphvine's kernels one by one and the least grid of its gated kernels
# (kernel_profile.py), then tests.phase_timing of the base tree and this branch interleaved (4 pairs).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/log.txt"
NEW=$PWD/.wt/gvsmall; BASE=$PWD/.wt/base; B=bench-results/2026-11-26-gvsmall
(cd "$NEW" && VINESTREAM_BACKEND=gpu timeout 90 python3 -m pytest -q -p no:cacheprovider \
   tests/test_graphvine_fused_gpu.py -k "combined or pipeline_with" > "$OUT/tests.txt" 2>&1; echo "rc=$? tests" >> "$OUT/log.txt")
tail -n 2 "$OUT/tests.txt" >> "$OUT/log.txt"
echo "t=$SECONDS" >> "$OUT/log.txt"
(cd "$NEW" && timeout 60 python3 "$B/kernel_profile.py" "$OUT" new 2>&1 | tail -8) >> "$OUT/log.txt"
echo "t=$SECONDS" >> "$OUT/log.txt"
for i in 1 2 3 4; do
  for side in base new; do
    dir=$NEW; [ $side = base ] && dir=$BASE
    (cd "$dir" && timeout 40 python3 -m tests.phase_timing --backend gpu --scale 20 --structures graphvine,coo 2>&1 \
       | tail -1) | sed "s/^/$side $i /" | tee -a "$OUT/phase.txt"
  done
done
echo "t=$SECONDS" >> "$OUT/log.txt"
