#!/usr/bin/env bash
# prsmall, second GPU call: PageRank's device tests at this tree; `bench algorithms` at R-MAT 20, base (main, the
# root) then prsmall; the direct loop base / prsmall / base / prsmall (the first prsmall run profiled); PageRank's
# per-batch stats (prsmall, prsmall with the old fused fallback 0.1, base).  Run from the repository root; carry
# .wt/prsmall .data .whl.  Everything but the summaries is packed into $OUT/data.tgz (few files come back).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
W=.wt/prsmall
D=$PWD/$W/bench-results/2026-11-26-prsmall
mkdir -p $OUT/data
(cd $W && timeout 60 python3 -c "import vinestream.algorithms.pagerank_kernels as pk, cupy; pk._kernels.preload(cupy)")
echo "t=$SECONDS compiled" >> "$OUT/tests.txt"
(cd $W
GPU_TEST_LIMIT=90
run tests/test_pagerank_fused_gpu.py
run tests/test_pagerank.py tests/test_pagerank_kernels.py tests/test_sync_budget.py tests/test_work_counters.py
run tests/test_pipeline_jobs.py tests/test_kernels_compile.py
tests_done tests.txt)
echo "t=$SECONDS tests done" >> "$OUT/tests.txt"
for side in base prsmall; do
  dir=.; [ $side = prsmall ] && dir=$W
  (cd $dir && timeout 75 python3 -m vinestream bench algorithms --backend gpu --scales 20 --json $OUT/data/alg20-$side.json \
     > $OUT/data/alg20-$side.txt 2>&1)
  echo "rc=$? $side t=$SECONDS" >> $OUT/bench.txt
  grep -E "rmat|pagerank static|^ +0\.0?1%|^ +1%|pagerank +ours" $OUT/data/alg20-$side.txt | sed "s/^/$side /" >> $OUT/bench.txt
done
for i in 1 2; do
  echo "== base $i t=$SECONDS" >> "$OUT/direct.txt"
  ROUNDS=2 timeout 40 python3 .ci/gpu-replay-direct.py "$log" "$OUT/data/base$i.json" coo graphvine >> "$OUT/direct.txt" 2>&1
  echo "== prsmall $i t=$SECONDS" >> "$OUT/direct.txt"
  if [ $i = 1 ]; then P=1; else P=; fi
  (cd $W && PROFILE=$P ROUNDS=2 timeout 45 python3 .ci/gpu-replay-direct.py "$log" "$OUT/data/prsmall$i.json" coo graphvine) >> "$OUT/direct.txt" 2>&1
done
echo "t=$SECONDS" >> "$OUT/direct.txt"
left=$(( 280 - SECONDS ))
if [ $left -gt 20 ]; then
  (cd $W && timeout $(( left / 3 )) python3 $D/pr_stats.py "$log" "$OUT/data/stats-prsmall.json" coo prsmall) >> "$OUT/stats.txt" 2>&1
  (cd $W && PR_OPTIONS='{"fallback_fraction": 0.1}' timeout $(( left / 3 )) python3 $D/pr_stats.py "$log" "$OUT/data/stats-prsmall-fb01.json" coo prsmall-fallback0.1) >> "$OUT/stats.txt" 2>&1
  timeout $(( left / 3 )) python3 $D/pr_stats.py "$log" "$OUT/data/stats-base.json" coo base >> "$OUT/stats.txt" 2>&1
fi
echo "t=$SECONDS" >> "$OUT/stats.txt"
cd $OUT && tar czf data.tgz data && rm -rf data
