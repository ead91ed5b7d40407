#!/usr/bin/env bash
# bfssmall helper, second GPU call (run from main's root; carry .wt/bfssmall .data .whl): the BFS job's device
# tests at this branch; the direct replay loop (.ci/gpu-replay-direct.py, coo and graphvine) alternating base
# (main's root) and new (.wt/bfssmall), three processes each, the last new one also under cProfile; then
# `bench algorithms` at R-MAT 20 (base / new / base / new), `bench bfs-fused` at R-MAT 20 ef 16 and 22 ef 64.
# Few files come back: tests.txt, timings.txt, bench.txt and results.tgz (JSON and profiles).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
W=.wt/bfssmall
R=/tmp/res; mkdir -p $R
cd $W
GPU_TEST_LIMIT=170
run tests/test_bfs.py tests/test_bfs_repair.py tests/test_bfs_in_edge_log.py tests/test_bfs_kernels.py tests/test_bfs_small_batches.py
run tests/test_transpose_kernels.py tests/test_work_counters.py
run tests/test_pipeline_jobs.py
run tests/test_sync_budget.py
tests_done tests.txt
cd ../..
echo "t=$SECONDS" >> "$OUT/tests.txt"
for i in 1 2 3; do
  echo "== base$i" >> "$OUT/timings.txt"
  ROUNDS=2 timeout 60 python3 .ci/gpu-replay-direct.py "$log" "$R/base$i.json" coo graphvine >> "$OUT/timings.txt" 2>&1
  [ $i = 3 ] && export PROFILE=1
  echo "== new$i" >> "$OUT/timings.txt"
  (cd $W && ROUNDS=2 timeout 70 python3 .ci/gpu-replay-direct.py "$log" "$R/new$i.json" coo graphvine) >> "$OUT/timings.txt" 2>&1
  echo "t=$SECONDS" >> "$OUT/timings.txt"
done
unset PROFILE
tar czf "$OUT/results.tgz" -C $R .
bench() {   # SIDE LIMIT ARGS...: one `vinestream bench` run of base (root) or new ($W)
  local side=$1 limit=$2 dir=.; shift 2; [ $side = new ] && dir=$W
  echo "== $side $*" >> "$OUT/bench.txt"
  (cd $dir && timeout $limit python3 -m vinestream bench "$@") >> "$OUT/bench.txt" 2>&1
  echo "t=$SECONDS" >> "$OUT/bench.txt"
}
for i in 1 2; do
  for side in base new; do bench $side 40 algorithms --backend gpu --scales 20 --json "$R/alg20-$side$i.json"; done
done
for side in base new; do bench $side 30 bfs-fused --backend gpu --scales 20 --edge-factor 16 --json "$R/bfs20-$side.json"; done
tar czf "$OUT/results.tgz" -C $R .
for side in new base; do bench $side 45 bfs-fused --backend gpu --scales 22 --edge-factor 64 --json "$R/bfs22-$side.json"; done
tar czf "$OUT/results.tgz" -C $R .
