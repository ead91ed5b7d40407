#!/usr/bin/env bash
# One device call: incremental vs static PageRank for main's code (the checkout's root) and this branch's
# (.wt/prgpu2), then the PageRank GPU tests of the branch.  Run from the branch's root (.wt/prgpu2); writes $OUT.
set -u
BR=$PWD
cd ../..                                   # the checkout's root (main's code)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/device.txt"
python3 -c "import cupy; print('cupy', cupy.__version__)" >> "$OUT/device.txt" 2>&1
B=$BR/bench-results/2026-11-25-prgpu2/pr_inc_bench.py
SCALES=${SCALES:-20,22}
timeout ${T_MAIN:-45} python3 $B "$PWD" "$OUT/main.json" $SCALES "${MAIN_VARIANTS:-main=,mainph=phases:1}" > "$OUT/main.txt" 2>&1
echo "rc=$?" >> "$OUT/main.txt"
(cd "$BR" && timeout ${T_MINE:-80} python3 $B "$PWD" "$OUT/branch.json" $SCALES "$VARIANTS") > "$OUT/branch.txt" 2>&1
echo "rc=$?" >> "$OUT/branch.txt"
cd "$BR"
for f in tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_pagerank_kernels.py tests/test_sync_budget.py tests/test_work_counters.py; do
  ( VINESTREAM_BACKEND=gpu timeout ${T_TESTS:-60} python3 -m pytest -q -p no:cacheprovider "$f" > "$OUT/$(basename "$f" .py).log" 2>&1
    echo "rc=$? $f" >> "$OUT/tests_rc.txt" ) &
done
( timeout ${T_TESTS:-60} python3 -m pytest -q -p no:cacheprovider tests/test_kernels_compile.py -k pagerank > "$OUT/kernels_compile.log" 2>&1
  echo "rc=$? kernels_compile" >> "$OUT/tests_rc.txt" ) &
wait
cat "$OUT/device.txt" "$OUT/tests_rc.txt"; tail -n 2 "$OUT"/*.log; cat "$OUT/main.txt" "$OUT/branch.txt" | cut -c1-400
