#!/usr/bin/env bash
# One device call of branch princ4 (princ3's script), from /work/main's root on the device: the driver for main's tree (.wt/p4base) and
# this one (.wt/$ME; other trees by RUNS: any .wt/NAME carried), one after the other, alone on the GPU; then this tree's PageRank device tests.  Into $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
D=bench-results/2026-11-26-princ4
ME=${ME:-princ4}
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; python3 -c "import cupy; print('cupy', cupy.__version__)"
  echo "base $(git -C .wt/${BASE:-p4base} rev-parse --short HEAD 2>/dev/null)"; cat .wt/$ME/$D/COMMIT 2>/dev/null; } > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
# the device tests first (they come back even if the timings run out of time)
(cd .wt/${TESTS_IN:-$ME}
echo "tests in .wt/${TESTS_IN:-$ME}" >> "$OUT/tests.txt"
source .ci/gpu-lib.sh
GPU_TEST_LIMIT=${T_TESTS:-55}
run tests/test_pagerank_fused_gpu.py
run tests/test_pagerank.py
( timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_kernels_compile.py -k pagerank > "$GPU_TEST_LOGS/compile.log" 2>&1
  echo "rc=$? compile" >> "$GPU_TEST_LOGS/rc" ) &
tests_done tests.txt
grep -h "passed\|failed\|error" "$OUT/tests.txt" | head -20)
# the select and the push alone (kernel_bench.py), where SELECT_BENCH is set
[ -n "${SELECT_BENCH:-}" ] && (cd .wt/$ME && timeout ${T_SELECT:-60} python3 $D/kernel_bench.py "$OUT/kernel.json" ${KB_SCALES:-22} \
  > "$OUT/kernel.txt" 2>&1; echo "rc=$?" >> "$OUT/kernel.txt"; cat "$OUT/kernel.txt")
# RUNS: label:tree:defines[:sets] (defines 0: the source's own; else NAME=VALUE+NAME=VALUE, compile-time macros;
# sets: NAME=VALUE+... module ints of pagerank_kernels) ...; the first
# run of this tree takes $VARIANTS
first=1
for spec in ${RUNS:-base:${BASE:-p4base}:0 $ME:$ME:0}; do
  IFS=: read -r label side rows sets <<< "$spec"
  v=""; lim=${T_BASE:-50}
  if [ "$side" = $ME ]; then lim=${T_PRINC:-70}; [ $first = 1 ] && v=${VARIANTS:-}; first=0; fi
  (cd .wt/$side && PRINC_DEFINES=$rows PRINC_SET=${sets:-0} timeout $lim python3 ../$ME/$D/princ_bench.py "$OUT/bench_$label.json" \
     ${SCALES:-20,22} $label "$v") > "$OUT/bench_$label.txt" 2>&1; echo "rc=$?" >> "$OUT/bench_$label.txt"
  grep -v "^   prof" "$OUT/bench_$label.txt" | cut -c1-200
done
