#!/usr/bin/env bash
# Session 9, closing GPU call (about 7 minutes; the session's last device minutes): device tests of everything
# merged this session (fused Google sweeps and the update's new kernels, the counting-sort transpose and its
# order check, resolve's pinned staging and coo's one-read edge phases, the warm-up's imports), then
# `bench algorithms` at R-MAT 20 with the peers, CLI replays of the issue's starting code and of this tree in
# fresh processes (alternating), PageRank's fallback threshold on the replay (in one process), 1,000-event
# phases: the most needed first, as a call cut at its limit keeps what it wrote.  Each step has its own
# limit; at most 8 files come back.
set -u
GPU_TEST_LIMIT=140; source .ci/gpu-lib.sh
gpu_setup
run tests/test_pagerank_fused_gpu.py tests/test_pagerank.py
run tests/test_bfs.py tests/test_bfs_repair.py tests/test_bfs_in_edge_log.py tests/test_bfs_kernels.py tests/test_transpose_kernels.py
run -rx tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_coo_fused_gpu.py tests/test_sync_budget.py tests/test_work_counters.py tests/test_replay_warm_up.py tests/test_replay_read_ahead.py
run tests/test_graphvine_fused_gpu.py tests/test_concurrent_phases_gpu.py tests/test_triangles_fused_gpu.py tests/test_triangles.py
run tests/test_structure_contract.py -k "cupy or gpu"
run tests/test_pipeline_jobs.py
run tests/test_hornet_fused_gpu.py tests/test_faimgraph_fused_gpu.py tests/test_gpma_fused_gpu.py tests/test_custinger_fused_gpu.py tests/test_slabhash_fused_gpu.py
tests_done
echo "t=$SECONDS" | tee -a "$OUT/tests.txt"
BENCH='import json, sys, cupy as cp
from vinestream.stream.bench.algorithms import bench_algorithms, format_table
r = bench_algorithms(cp, scales=(20,), fractions=(1e-4, 1e-3, 1e-2), repeats=3, batches=3, peers=True)
json.dump(r, open(sys.argv[1], "w"), indent=1); print(format_table(r))'
timeout 130 python3 -c "$BENCH" "$OUT/algorithms.json" > "$OUT/algorithms.txt" 2>&1; echo "rc=$? t=$SECONDS" >> "$OUT/algorithms.txt"
log=$PWD/.data/sx-mathoverflow.events.parquet
replay_once() {   # SIDE STRUCTURE LIMIT: one fresh-process CLI replay, its figures and process wall into /tmp/replay.txt
  local t0=$(date +%s%N)
  if [ "$1" = orig ]; then
    (cd .wt/orig && rm -rf /tmp/r-$2-orig && timeout $3 python3 -m stream.cli replay "$log" --backend gpu --structure $2 \
       --jobs pagerank,bfs,triangles --bfs-source 1 --batch-size 10000 --out /tmp/r-$2-orig --no-progress) > /tmp/replay.txt 2>&1
  else
    timeout $3 python3 -m vinestream replay "$log" --backend gpu --structure $2 --jobs pagerank,bfs,triangles \
       --bfs-source 1 --batch-size 10000 --out /tmp/r-$2-new --overwrite --no-progress > /tmp/replay.txt 2>&1
  fi
  echo "process wall seconds $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> /tmp/replay.txt
}
for s in coo graphvine; do for side in orig new; do replay_once $side $s 40; done; done    # CuPy's disk cache filled
for i in 1 2; do for s in coo graphvine; do for side in orig new; do replay_once $side $s 25; replay_line $side $s; done; done; done
echo "t=$SECONDS" >> "$OUT/replay.txt"
FALLBACK='import sys, time, vinestream
log = sys.argv[1]
for label, ff in [("warm", 0.1), ("0.1", 0.1), ("0.02", 0.02), ("0.1", 0.1), ("0.02", 0.02)]:
    r, _ = vinestream.replay([log], structure="coo", backend="gpu", batch_size=10000, jobs=["pagerank", "bfs", "triangles"],
                             bfs_sources=[1], job_options={"pagerank": {"fallback_fraction": ff}})
    t = r.table() if hasattr(r, "table") else str(r)
    pr = [ln for ln in t.splitlines() if ln.startswith(("pagerank ms", "pagerank_iterations", "wall seconds"))]
    print(label, r.events / r.seconds, " | ".join(" ".join(ln.split()) for ln in pr), flush=True)'
timeout 40 python3 -c "$FALLBACK" "$log" >> "$OUT/replay.txt" 2>&1
echo "t=$SECONDS" >> "$OUT/replay.txt"
for i in 1 2; do
  echo "defaults $(timeout 30 python3 -m tests.phase_timing --backend gpu --scale 20 --structures graphvine,coo 2>&1 | tail -2 | tr '\n' ' ')" >> "$OUT/phase.txt"
done
echo "t=$SECONDS" >> "$OUT/phase.txt"
