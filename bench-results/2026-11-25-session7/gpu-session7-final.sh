#!/usr/bin/env bash
# Session 7, closing GPU call (about 6-7 minutes): device tests of every path changed this session (merged
# branches included), 1,000-event batches base (.wt/base = 6e303ba, the session's start) / new, `bench
# algorithms` on R-MAT 20, the incremental BFS profile on R-MAT 22, and CLI replays of sx-mathoverflow of the
# issue's starting code (.wt/orig = 2633564, whose CLI is stream.cli) and of this tree.
set -u
GPU_TEST_LIMIT=170; source .ci/gpu-lib.sh
gpu_setup
run tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_concurrent_phases_gpu.py
run tests/test_bfs.py tests/test_bfs_repair.py tests/test_bfs_in_edge_log.py tests/test_bfs_kernels.py tests/test_triangles_fused_gpu.py tests/test_triangles.py
run tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_coo_fused_gpu.py tests/test_sync_budget.py tests/test_work_counters.py
run tests/test_pipeline_contract.py -x
run tests/test_pipeline_jobs.py tests/test_graphvine_fused_gpu.py tests/test_structure_contract.py -k "cupy or gpu or jobs or fused"
tests_done
phase_timing coo,graphvine 60 base new base new
BENCH='import json, sys, cupy as cp
from vinestream.stream.bench.algorithms import bench_algorithms, format_table
r = bench_algorithms(cp, scales=(20,), fractions=(1e-4, 1e-3, 1e-2), repeats=3, batches=3, peers=False)
json.dump(r, open(sys.argv[1], "w"), indent=1); print(format_table(r))'
timeout 100 python3 -c "$BENCH" "$OUT/algorithms.json" > "$OUT/algorithms.txt" 2>&1; echo "rc=$?" >> "$OUT/algorithms.txt"
SCALE=22 timeout 100 python3 .ci/gpu-profile-bfs.py /tmp/bfs22.txt 2>&1 | head -1 | tee -a "$OUT/algorithms.txt"
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  for side in orig new; do
    for t in 150 40; do       # the second run: kernels compiled (CuPy's cache) by the first
      if [ $side = orig ]; then
        (cd .wt/orig && rm -rf /tmp/r-$s-orig && timeout $t python3 -m stream.cli replay "$log" --backend gpu --structure $s \
           --jobs pagerank,bfs,triangles --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-orig --no-progress) > /tmp/replay.txt 2>&1
      else
        timeout $t python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
           --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-new --overwrite --no-progress > /tmp/replay.txt 2>&1
      fi
    done
    replay_line $side $s
    tail -2 /tmp/replay.txt >> "$OUT/replay_log.txt"
  done
done
