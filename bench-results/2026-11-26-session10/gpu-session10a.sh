#!/usr/bin/env bash
# Session 10, first GPU call (about 4 minutes): device tests of the commits of session 9 that never ran on a
# GPU (shared upper_bound, resolve's packing helpers and one kernel body, BFS's _transpose, coo's _released, the
# base class's counted edge phases), every group in parallel with the structure contract in three parts; then
# a fresh process's replay of the sx-mathoverflow log per structure, its per-batch phases from the results'
# summary (where the first batches' time goes), and one fresh process's first replay under cProfile.
set -u
GPU_TEST_LIMIT=230; source .ci/gpu-lib.sh
gpu_setup
run tests/test_pagerank_fused_gpu.py tests/test_pagerank.py
run tests/test_bfs.py tests/test_bfs_repair.py tests/test_bfs_in_edge_log.py tests/test_bfs_kernels.py tests/test_transpose_kernels.py
run -rx tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_coo_fused_gpu.py tests/test_sync_budget.py tests/test_work_counters.py tests/test_replay_warm_up.py tests/test_replay_read_ahead.py
run tests/test_graphvine_fused_gpu.py tests/test_concurrent_phases_gpu.py tests/test_triangles_fused_gpu.py tests/test_triangles.py
run tests/test_pipeline_jobs.py tests/test_kernels_compile.py
run tests/test_hornet_fused_gpu.py tests/test_faimgraph_fused_gpu.py tests/test_gpma_fused_gpu.py tests/test_custinger_fused_gpu.py tests/test_slabhash_fused_gpu.py
run tests/test_structure_contract.py -k "cupy and (csr or coo or graphvine or slabhash)"
run tests/test_structure_contract.py -k "cupy and (hornet or gpma or faimgraph or diffcsr)"
run tests/test_structure_contract.py -k "cupy and (custinger or aimgraph or ourograph)"
run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
tests_done
echo "t=$SECONDS" | tee -a "$OUT/tests.txt"
log=$PWD/.data/sx-mathoverflow.events.parquet
SUMMARY='import sys, vinestream, numpy as np
s = vinestream.read_results(sys.argv[1])["summary"].to_pandas()
cols = [c for c in s.columns if c.endswith("_ms")]
print(s[["events"] + cols].head(4).round(2).to_string()); print("median", s[cols].iloc[4:].median().round(3).to_dict())'
for i in 1 2; do for s in coo graphvine; do
  t0=$(date +%s%N)
  timeout 40 python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
     --bfs-source 1 --batch-size 10000 --out /tmp/r-$s --overwrite --no-progress > /tmp/replay.txt 2>&1
  echo "process wall seconds $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> /tmp/replay.txt
  replay_line new$i $s
  timeout 20 python3 -c "$SUMMARY" /tmp/r-$s >> "$OUT/batches.txt" 2>&1
done; done
echo "t=$SECONDS" >> "$OUT/replay.txt"
LABELS=profiled timeout 40 python3 .ci/gpu-profile-replay.py "$log" "$OUT" coo graphvine > /dev/null 2>&1
echo "t=$SECONDS" >> "$OUT/replay.txt"
