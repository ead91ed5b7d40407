#!/usr/bin/env bash
# One device call: incremental vs static PageRank for main's code (the checkout's root) and this branch's
# (.wt/prgpu2), the PageRank GPU tests of the branch, then the project's bench (R-MAT 20) on both trees.
# Run from the branch's root (.wt/prgpu2); writes into $OUT (few files: the device tool brings back only a few).
set -u
BR=$PWD
cd ../..                                   # the checkout's root (main's code)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T=/tmp/prgpu2-logs; mkdir -p $T
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; python3 -c "import cupy; print('cupy', cupy.__version__)"; } > "$OUT/device.txt" 2>&1
B=$BR/bench-results/2026-11-25-prgpu2/pr_inc_bench.py
SCALES=${SCALES:-20,22}
timeout ${T_MAIN:-45} python3 $B "$PWD" "$OUT/main.json" $SCALES "${MAIN_VARIANTS:-main=}" > "$OUT/main.txt" 2>&1
echo "rc=$?" >> "$OUT/main.txt"
(cd "$BR" && timeout ${T_MINE:-80} python3 $B "$PWD" "$OUT/branch.json" $SCALES "$VARIANTS") > "$OUT/branch.txt" 2>&1
echo "rc=$?" >> "$OUT/branch.txt"
cd "$BR"
for f in tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_pagerank_kernels.py tests/test_sync_budget.py tests/test_work_counters.py; do
  ( VINESTREAM_BACKEND=gpu timeout ${T_TESTS:-60} python3 -m pytest -q -p no:cacheprovider "$f" > "$T/$(basename "$f" .py).log" 2>&1
    echo "rc=$? $f" >> "$T/rc.txt" ) &
done
( timeout ${T_TESTS:-60} python3 -m pytest -q -p no:cacheprovider tests/test_kernels_compile.py -k pagerank > "$T/kernels_compile.log" 2>&1
  echo "rc=$? kernels_compile" >> "$T/rc.txt" ) &
wait
for f in $T/rc.txt $T/*.log; do echo "=== $(basename $f)"; tail -n 40 "$f"; done > "$OUT/tests.txt"
# the project's own bench (all three jobs, no peers), R-MAT 20, main's tree and the branch's
BENCH='import json, sys, cupy as cp
from vinestream.stream.bench.algorithms import bench_algorithms, format_table
r = bench_algorithms(cp, scales=(20,), fractions=(1e-4, 1e-3, 1e-2), repeats=3, batches=3, peers=False)
json.dump(r, open(sys.argv[1], "w"), indent=1); print(format_table(r))'
if [ "${PROJECT_BENCH:-1}" = 1 ]; then
  (cd ../.. && timeout ${T_BENCH:-45} python3 -c "$BENCH" /tmp/bench_main.json) > $T/bench_main.txt 2>&1; echo "rc=$?" >> $T/bench_main.txt
  timeout ${T_BENCH:-45} python3 -c "$BENCH" /tmp/bench_branch.json > $T/bench_branch.txt 2>&1; echo "rc=$?" >> $T/bench_branch.txt
  { echo "=== main"; cat $T/bench_main.txt; echo "=== branch"; cat $T/bench_branch.txt; } > "$OUT/project_bench.txt"
fi
cat "$OUT/device.txt"; grep -h "rc=\|passed\|failed" "$OUT/tests.txt"; cut -c1-330 "$OUT/main.txt" "$OUT/branch.txt"
grep -A8 "batch   changed" "$OUT/project_bench.txt" 2>/dev/null | head -40
