#!/usr/bin/env bash
# prsmall, first GPU call: interleaved direct-loop timings base (main, the root) / prsmall, the prsmall tree's
# profile, PageRank's per-batch stats, then PageRank's device tests.  Run from the repository root; carry
# .wt/prsmall .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
W=.wt/prsmall
D=$PWD/$W/bench-results/2026-11-26-prsmall
(cd $W && timeout 60 python3 -c "import vinestream.algorithms.pagerank_kernels as pk, cupy; pk._kernels.preload(cupy)")  # compile
echo "t=$SECONDS" >> "$OUT/direct.txt"
for i in 1 2; do
  echo "== base $i" >> "$OUT/direct.txt"
  ROUNDS=2 timeout 60 python3 .ci/gpu-replay-direct.py "$log" "$OUT/base$i.json" coo graphvine >> "$OUT/direct.txt" 2>&1
  echo "== prsmall $i" >> "$OUT/direct.txt"
  if [ $i = 1 ]; then P=1; else P=; fi
  (cd $W && PROFILE=$P ROUNDS=2 timeout 70 python3 .ci/gpu-replay-direct.py "$log" "$OUT/prsmall$i.json" coo graphvine) >> "$OUT/direct.txt" 2>&1
  echo "t=$SECONDS" >> "$OUT/direct.txt"
done
(cd $W && timeout 40 python3 $D/pr_stats.py "$log" "$OUT/stats-coo.json" coo) > "$OUT/stats.txt" 2>&1
(timeout 40 python3 $D/pr_stats.py "$log" "$OUT/stats-base-coo.json" coo) > "$OUT/stats-base.txt" 2>&1
echo "t=$SECONDS" >> "$OUT/direct.txt"
cd $W
GPU_TEST_LIMIT=$(( 285 - SECONDS ))
echo "test limit $GPU_TEST_LIMIT" >> "$OUT/tests.txt"
run tests/test_pagerank_fused_gpu.py
run tests/test_pagerank.py tests/test_pagerank_kernels.py tests/test_sync_budget.py tests/test_work_counters.py
run tests/test_pipeline_jobs.py
tests_done tests.txt
echo "t=$SECONDS" >> "$OUT/tests.txt"
