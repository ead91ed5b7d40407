#!/usr/bin/env bash
# One device call of branch princ, from /work/main's root on the device: the driver for main's tree (.wt/base) and
# this one (.wt/princ), one after the other, alone on the GPU; then this tree's PageRank device tests.  Into $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
D=bench-results/2026-11-26-princ
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; python3 -c "import cupy; print('cupy', cupy.__version__)"
  echo "base $(git -C .wt/base rev-parse --short HEAD 2>/dev/null)"; cat .wt/princ/$D/COMMIT 2>/dev/null; } > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
for side in ${SIDES:-base princ}; do
  v=""; lim=${T_BASE:-70}; [ "$side" = princ ] && v=${VARIANTS:-} && lim=${T_PRINC:-100}
  (cd .wt/$side && timeout $lim python3 ../princ/$D/princ_bench.py "$OUT/bench_$side.json" ${SCALES:-20,22} $side "$v") \
    > "$OUT/bench_$side.txt" 2>&1; echo "rc=$?" >> "$OUT/bench_$side.txt"
  grep -v "^   prof" "$OUT/bench_$side.txt" | cut -c1-230
done
cd .wt/princ
source .ci/gpu-lib.sh
GPU_TEST_LIMIT=${T_TESTS:-60}
run tests/test_pagerank_fused_gpu.py
run tests/test_pagerank.py
( timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_kernels_compile.py -k pagerank > "$GPU_TEST_LOGS/compile.log" 2>&1
  echo "rc=$? compile" >> "$GPU_TEST_LOGS/rc" ) &
tests_done tests.txt
grep -h "passed\|failed\|error" "$OUT/tests.txt" | head -20
