#!/usr/bin/env bash
# One device call: incremental vs static PageRank for main's code (the checkout's root) and this branch's
# (.wt/prgpu), then the PageRank GPU tests of the branch.  Run from the checkout's root; writes into $OUT.
set -u
cd "$(dirname "$0")/../../../.."      # the checkout's root (main's code); the branch is .wt/prgpu
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/device.txt"
B=.wt/prgpu/bench-results/2026-11-25-prgpu/pr_inc_bench.py
SCALES=${SCALES:-20,22}
timeout ${T_MAIN:-75} python3 $B "$PWD" "$OUT/main.json" $SCALES "main=" > "$OUT/main.txt" 2>&1; echo "rc=$?" >> "$OUT/main.txt"
(cd .wt/prgpu && timeout ${T_MINE:-110} python3 bench-results/2026-11-25-prgpu/pr_inc_bench.py "$PWD" "$OUT/prgpu.json" $SCALES \
   "${VARIANTS:-c1=push_scale:1,c2=push_scale:2,c05=push_scale:0.5,array=fused_push:0}") > "$OUT/prgpu.txt" 2>&1
echo "rc=$?" >> "$OUT/prgpu.txt"
cd .wt/prgpu
for f in tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_pagerank_kernels.py tests/test_sync_budget.py tests/test_work_counters.py; do
  ( VINESTREAM_BACKEND=gpu timeout ${T_TESTS:-100} python3 -m pytest -q -p no:cacheprovider "$f" > "$OUT/$(basename "$f" .py).log" 2>&1
    echo "rc=$? $f" >> "$OUT/tests_rc.txt" ) &
done
( timeout ${T_TESTS:-100} python3 -m pytest -q -p no:cacheprovider tests/test_kernels_compile.py -k pagerank > "$OUT/kernels_compile.log" 2>&1
  echo "rc=$? kernels_compile" >> "$OUT/tests_rc.txt" ) &
wait
cat "$OUT/tests_rc.txt"; tail -n 3 "$OUT"/*.log; cat "$OUT/main.txt" "$OUT/prgpu.txt"
