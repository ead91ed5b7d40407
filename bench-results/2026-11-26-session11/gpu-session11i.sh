#!/usr/bin/env bash
# Session 11, closing GPU call after the merges (prsmall, trismall, bfssmall): the device tests of every area
# this session changed, in parallel groups; fresh-process replays (the starting code in .wt/orig, the
# session's start adbdfab in .wt/base, this tree) alternating, two rounds per structure; `bench algorithms`
# at R-MAT 20, session start and this tree alternating, two rounds. Carry .data .wt/orig .wt/base .whl.
set -u
GPU_TEST_LIMIT=230; source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_pagerank_kernels.py
run tests/test_bfs.py tests/test_bfs_repair.py tests/test_bfs_in_edge_log.py tests/test_bfs_kernels.py tests/test_transpose_kernels.py tests/test_bfs_small_batches.py
run tests/test_triangles_fused_gpu.py tests/test_triangles.py tests/test_triangles_recount.py tests/test_triangles_delta.py tests/test_graphvine_fused_gpu.py tests/test_graphvine.py
run -rx tests/test_resolve_kernels_gpu.py tests/test_coo_fused_gpu.py tests/test_sync_budget.py tests/test_work_counters.py tests/test_replay_warm_up.py tests/test_metrics.py tests/test_concurrent_phases_gpu.py
run tests/test_pipeline_jobs.py tests/test_kernels_compile.py
run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
run tests/test_structure_contract.py -k "cupy and (csr or coo or graphvine or reading)"
tests_done
echo "t=$SECONDS" | tee -a "$OUT/tests.txt"
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do replay_once new $s 90; replay_once orig $s 90; base_once $s; done    # pyc files, kernels
for i in 1 2; do for s in coo graphvine; do
  replay_once orig $s 60; replay_line orig $s
  base_once $s; replay_line base $s
  replay_once new $s 60; replay_line new $s
done; done
echo "t=$SECONDS" >> "$OUT/replay.txt"
for i in 1 2; do for side in base new; do
  dir=$PWD; [ $side = base ] && dir=$PWD/.wt/base
  (cd "$dir" && timeout 90 python3 -m vinestream bench algorithms --backend gpu --scales 20 --json /tmp/alg-$side-$i.json) \
     > /tmp/alg.txt 2>&1
  grep -E "rmat|static|^ +0\.0?1%|^ +1%|ours" /tmp/alg.txt | sed "s/^/$side$i /" >> "$OUT/bench.txt"
done; done
cp /tmp/alg-new-1.json "$OUT/alg20-new.json" 2>/dev/null
echo "t=$SECONDS" >> "$OUT/bench.txt"
