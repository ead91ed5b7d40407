#!/usr/bin/env bash
# Session 6, last GPU minutes: 1,000-event coo batches of the session's start (.wt/base = 5cf2165) and of
# main interleaved, after the last trims of the pipeline's host operations.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/phase.txt"
for side in new base new base; do
  dir=$PWD; [ $side = base ] && dir=$PWD/.wt/base
  (cd "$dir" && timeout 45 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo --batches 20) | sed "s/^/$side /" | tee -a "$OUT/phase.txt"
done
