#!/usr/bin/env bash
# Session 8, closing GPU call (about 8 minutes): device tests of everything merged this session (GraphVine's
# key-side and CUDA-graph paths, PageRank's Google-matrix sweeps and push graphs, the replay's read-ahead and
# warm-up), then GraphVine's new paths timed against its kernels (1,000-event phases at R-MAT 20, 1e6-edge
# batches at R-MAT 22), `bench algorithms` at R-MAT 20 and CLI replays of the issue's starting code and of this
# tree.  Each timing step has its own limit; at most 8 files come back.
set -u
GPU_TEST_LIMIT=150; source .ci/gpu-lib.sh
gpu_setup
G=bench-results/2026-11-25-gv3
run tests/test_graphvine_fused_gpu.py tests/test_graphvine_kernels_compile.py tests/test_kernels_compile.py -k "graphvine or fused or graph_path"
run tests/test_pagerank_fused_gpu.py tests/test_pagerank.py -x
run tests/test_replay_warm_up.py tests/test_replay_read_ahead.py tests/test_pipeline_jobs.py tests/test_sync_budget.py -x
run tests/test_structure_contract.py -k "graphvine and (cupy or gpu)" -x
run tests/test_resolve_kernels_gpu.py tests/test_bfs_kernels.py tests/test_concurrent_phases_gpu.py tests/test_coo_fused_gpu.py -x
tests_done
echo "t=$SECONDS" | tee -a "$OUT/tests.txt"
# 1,000-event batches: graphvine with the new paths on, with this tree's defaults, and coo
for i in 1; do
  echo "newpaths $(timeout 30 python3 $G/phase_new_paths.py --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> "$OUT/phase.txt"
  echo "defaults $(timeout 30 python3 -m tests.phase_timing --backend gpu --scale 20 --structures graphvine,coo 2>&1 | tail -2 | tr '\n' ' ')" >> "$OUT/phase.txt"
done
timeout 50 python3 $G/big_bench.py --scale 22 --rounds 3 --out "$OUT" > "$OUT/big22.txt" 2>&1; echo "rc=$?" >> "$OUT/big22.txt"
timeout 25 python3 $G/small_bench.py --scale 20 --rounds 30 --out /tmp >> "$OUT/big22.txt" 2>&1; echo "rc=$?" >> "$OUT/big22.txt"
echo "t=$SECONDS" | tee -a "$OUT/phase.txt"
BENCH='import json, sys, cupy as cp
from vinestream.stream.bench.algorithms import bench_algorithms, format_table
r = bench_algorithms(cp, scales=(20,), fractions=(1e-4, 1e-3, 1e-2), repeats=3, batches=3, peers=True)
json.dump(r, open(sys.argv[1], "w"), indent=1); print(format_table(r))'
timeout 110 python3 -c "$BENCH" "$OUT/algorithms.json" > "$OUT/algorithms.txt" 2>&1; echo "rc=$? t=$SECONDS" >> "$OUT/algorithms.txt"
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  for side in orig new; do
    for t in 40 25; do       # the second run: kernels compiled (CuPy's cache) by the first
      t0=$(date +%s%N)
      if [ $side = orig ]; then
        (cd .wt/orig && rm -rf /tmp/r-$s-orig && timeout $t python3 -m stream.cli replay "$log" --backend gpu --structure $s \
           --jobs pagerank,bfs,triangles --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-orig --no-progress) > /tmp/replay.txt 2>&1
      else
        timeout $t python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
           --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-new --overwrite --no-progress > /tmp/replay.txt 2>&1
      fi
      echo "process wall seconds $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> /tmp/replay.txt
    done
    replay_line $side $s
  done
done
echo "t=$SECONDS" >> "$OUT/replay.txt"
