#!/usr/bin/env bash
# One device call: incremental vs static PageRank for main's code (the checkout's root) and this branch's
# (.wt/prgpu), then the PageRank GPU tests of the branch.  Run from the checkout's root; writes into $OUT.
set -u
cd "$(dirname "$0")/../../../.."      # the checkout's root (main's code); the branch is .wt/prgpu
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
OUT=/tmp/prgpu-res; mkdir -p "$OUT"        # everything here; packed into $FINAL/all.tgz after each step
pack() { tar czf "$FINAL/all.tgz" -C "$OUT" . ; cp "$OUT"/prgpu.txt "$OUT"/main.txt "$OUT"/tests_rc.txt "$FINAL"/ 2>/dev/null; true; }
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/device.txt"
B=.wt/prgpu/bench-results/2026-11-25-prgpu/pr_inc_bench.py
SCALES=${SCALES:-20,22}
timeout ${T_MAIN:-60} python3 $B "$PWD" "$OUT/main.json" $SCALES "main=" > "$OUT/main.txt" 2>&1; echo "rc=$?" >> "$OUT/main.txt"
(cd .wt/prgpu && timeout ${T_MINE:-90} python3 bench-results/2026-11-25-prgpu/pr_inc_bench.py "$PWD" "$OUT/prgpu.json" $SCALES \
   "${VARIANTS:-fused=,l16=push_lanes:16,b1=budget:1,c2=push_scale:2,c05=push_scale:0.5,array=fused_push:0}") > "$OUT/prgpu.txt" 2>&1
echo "rc=$?" >> "$OUT/prgpu.txt"
pack
cd .wt/prgpu
for f in tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_pagerank_kernels.py tests/test_sync_budget.py tests/test_work_counters.py; do
  ( VINESTREAM_BACKEND=gpu timeout ${T_TESTS:-90} python3 -m pytest -q -p no:cacheprovider "$f" > "$OUT/$(basename "$f" .py).log" 2>&1
    echo "rc=$? $f" >> "$OUT/tests_rc.txt" ) &
done
( timeout ${T_TESTS:-90} python3 -m pytest -q -p no:cacheprovider tests/test_kernels_compile.py -k pagerank > "$OUT/kernels_compile.log" 2>&1
  echo "rc=$? kernels_compile" >> "$OUT/tests_rc.txt" ) &
wait
pack
cd ../..
# the project's own bench (all three jobs, no peers), R-MAT 20, main's tree and the branch's
BENCH='import json, sys, cupy as cp
from vinestream.stream.bench.algorithms import bench_algorithms, format_table
r = bench_algorithms(cp, scales=(20,), fractions=(1e-4, 1e-3, 1e-2), repeats=3, batches=3, peers=False)
json.dump(r, open(sys.argv[1], "w"), indent=1); print(format_table(r))'
timeout ${T_BENCH:-45} python3 -c "$BENCH" "$OUT/bench_main.json" > "$OUT/bench_main.txt" 2>&1; echo "rc=$?" >> "$OUT/bench_main.txt"
(cd .wt/prgpu && timeout ${T_BENCH:-45} python3 -c "$BENCH" "$OUT/bench_prgpu.json") > "$OUT/bench_prgpu.txt" 2>&1
echo "rc=$?" >> "$OUT/bench_prgpu.txt"
pack
# replay (sx-mathoverflow, PageRank only, coo, 1e4-event batches): main's tree and the branch's, the second run
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/kafka*.whl .whl/crc32c*.whl 2>/dev/null
log=$PWD/.data/sx-mathoverflow.events.parquet
for side in main prgpu; do
  dir=$PWD; [ $side = prgpu ] && dir=$PWD/.wt/prgpu
  for i in 1 2; do
    (cd "$dir" && PYTHONPATH=/tmp/site timeout 30 python3 -m vinestream replay "$log" --backend gpu --structure coo \
       --jobs pagerank --batch-size 10000 --out /tmp/r-$side --overwrite --no-progress) > /tmp/replay.txt 2>&1
  done
  echo "$side $(grep -E 'events / s|pagerank ms|pagerank_iterations|pagerank_edges' /tmp/replay.txt | tr -s ' ' | tr '\n' ';')" >> "$OUT/replay.txt"
done
pack
cd .wt/prgpu
cat "$OUT/tests_rc.txt" "$OUT/replay.txt"; tail -n 3 "$OUT"/*.log; cat "$OUT/main.txt" "$OUT/prgpu.txt"
grep -A6 "batch   changed" "$OUT/bench_main.txt" "$OUT/bench_prgpu.txt"; tail -n 2 "$OUT/bench_main.txt" "$OUT/bench_prgpu.txt"
