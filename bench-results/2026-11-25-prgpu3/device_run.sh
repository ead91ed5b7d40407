#!/usr/bin/env bash
# One device call of branch prgpu3, run from the worktree's root (.wt/prgpu3): the driver (prgpu3_bench.py) first,
# alone on the GPU, then the PageRank device tests in parallel.  Writes into $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f ../../.data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf ../../.data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; python3 -c "import cupy; print('cupy', cupy.__version__)"; cat bench-results/2026-11-25-prgpu3/COMMIT 2>/dev/null; } > "$OUT/device.txt" 2>&1
if [ "${BENCH:-1}" = 1 ]; then
  timeout ${T_BENCH:-140} python3 bench-results/2026-11-25-prgpu3/prgpu3_bench.py "$OUT/bench.json" ${SCALES:-20,22} \
    "${VARIANTS:-def=,graph=push_graph:1,prof=}" > "$OUT/bench.txt" 2>&1; echo "rc=$?" >> "$OUT/bench.txt"
fi
if [ "${ALGS:-0}" = 1 ]; then
  timeout ${T_ALGS:-150} python3 bench-results/2026-11-25-prgpu3/bench_algorithms.py "$OUT/algorithms.json" 20 \
    > "$OUT/algorithms.txt" 2>&1; echo "rc=$?" >> "$OUT/algorithms.txt"
fi
T=/tmp/prgpu3-logs; rm -rf $T; mkdir -p $T
for f in ${TESTS:-tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_sync_budget.py tests/test_work_counters.py tests/test_replay_warm_up.py}; do
  ( VINESTREAM_BACKEND=gpu timeout ${T_TESTS:-130} python3 -m pytest -q -p no:cacheprovider "$f" > "$T/$(basename $f .py).log" 2>&1
    echo "rc=$? $f" >> $T/rc.txt ) &
done
( timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_kernels_compile.py -k pagerank > $T/compile.log 2>&1
  echo "rc=$? compile" >> $T/rc.txt ) &
wait
for f in $T/rc.txt $T/*.log; do echo "=== $(basename $f)"; tail -n 60 "$f"; done > "$OUT/tests.txt"
cat "$OUT/device.txt"; grep -h "rc=\|passed\|failed" "$OUT/tests.txt"; grep -v "prof:\|kernels\|rounds" "$OUT/bench.txt" | cut -c1-300
cat "$OUT/algorithms.txt" 2>/dev/null | head -40
