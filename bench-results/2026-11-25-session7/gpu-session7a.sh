#!/usr/bin/env bash
# Session 7, first GPU call (about 7 minutes): device tests of the kernel-source refactors of the end of
# session 6 and of the faster block primitives (warp-shuffle scan, warp barriers in the sort), then the
# 1,000-event batches of the session's start (.wt/base = 6e303ba) and of this tree interleaved, the
# profile of a batch (the fused resolve alone), and a profiled coo replay of sx-mathoverflow.
set -u
GPU_TEST_LIMIT=170; source .ci/gpu-lib.sh
gpu_setup
run tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py
run tests/test_coo_fused_gpu.py tests/test_gpma_fused_gpu.py
run tests/test_triangles_fused_gpu.py tests/test_bfs_kernels.py tests/test_bfs_repair.py tests/test_bfs_in_edge_log.py
run tests/test_graphvine_fused_gpu.py tests/test_sync_budget.py
run tests/test_pipeline_contract.py -x
run tests/test_pagerank_fused_gpu.py tests/test_concurrent_phases_gpu.py
tests_done
phase_timing coo,graphvine 60 base new base new
for side in base new; do
  dir=$PWD; [ $side = base ] && dir=$PWD/.wt/base
  (cd "$dir" && STRUCTURES=coo timeout 60 python3 .ci/gpu-profile-batch.py /tmp/prof-$side) 2>&1 | sed "s/^/$side /" | tee -a "$OUT/profile_batch.txt"
done
cp /tmp/prof-new/profile-coo.txt "$OUT/profile-batch-coo.txt" 2>/dev/null
JOBS=pagerank,bfs,triangles timeout 100 python3 .ci/gpu-profile-replay.py .data/sx-mathoverflow.events.parquet /tmp/rp coo graphvine > "$OUT/replay_log.txt" 2>&1
cat /tmp/rp/replay-coo.txt /tmp/rp/replay-graphvine.txt > "$OUT/replay.txt" 2>/dev/null
