#!/usr/bin/env bash
# Session 9, first call (about 4 minutes): where a GPU replay's time goes, per batch and per function
# (sx-mathoverflow, 1e4-event batches, all three jobs; coo and graphvine), then the device tests of the
# commits of session 8 that had not run on a GPU (bench timers, warm-up import, PageRank's shared operator,
# the host BFS repair merge).
set -u
GPU_TEST_LIMIT=170; source .ci/gpu-lib.sh
gpu_setup
log=$PWD/.data/sx-mathoverflow.events.parquet
timeout 100 python3 .ci/gpu-profile-replay.py "$log" "$OUT" coo graphvine > "$OUT/profile-log.txt" 2>&1
echo "rc=$? t=$SECONDS" >> "$OUT/profile-log.txt"
for s in coo graphvine; do
  rm -rf /tmp/r-$s
  timeout 40 python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
     --bfs-source 1 --batch-size 10000 --out /tmp/r-$s --no-progress > /dev/null 2>&1
  python3 - "$s" >> "$OUT/batches.txt" <<'PY'
import sys, pyarrow.parquet as pq
s = sys.argv[1]
t = pq.read_table(f"/tmp/r-{s}/summary.parquet").to_pandas()
cols = ["events", "edges", "resolve_ms", "vertices_ms", "csr_ms", "delete_ms", "insert_ms", "pagerank_ms",
        "bfs_ms", "triangles_ms", "pagerank_iterations", "pagerank_frontier", "bfs_levels"]
print("=====", s)
print(t[cols].to_string())
print(t[cols].iloc[1:].median().to_string())
PY
done
echo "t=$SECONDS" >> "$OUT/batches.txt"
run tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_concurrent_phases_gpu.py
run tests/test_bfs.py tests/test_bfs_repair.py tests/test_bfs_in_edge_log.py tests/test_bfs_kernels.py tests/test_triangles_fused_gpu.py tests/test_triangles.py
run tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_coo_fused_gpu.py tests/test_sync_budget.py tests/test_work_counters.py tests/test_replay_warm_up.py tests/test_replay_read_ahead.py
run tests/test_pipeline_jobs.py tests/test_graphvine_fused_gpu.py tests/test_structure_contract.py -k "cupy or gpu or jobs or fused"
run tests/test_bench_algorithms.py tests/test_bench_structures.py -x
tests_done
echo "t=$SECONDS" >> "$OUT/tests.txt"
