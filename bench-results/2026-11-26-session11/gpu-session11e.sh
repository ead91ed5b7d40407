#!/usr/bin/env bash
# Session 11, fifth GPU call: device tests of this session's changes (pinned buffers without cupyx, the jobs'
# shared adjacency, one transfer per output table), then fresh-process replays: the starting code,
# this tree, and this tree with the warm-up's cupyx.scipy.sparse import left out, alternating, two rounds.
# Carry .data .wt/orig .whl.
set -u
GPU_TEST_LIMIT=200; source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_resolve_kernels_gpu.py tests/test_sync_budget.py tests/test_replay_warm_up.py tests/test_metrics.py
run tests/test_graphvine_fused_gpu.py tests/test_graphvine.py
run tests/test_pipeline_jobs.py tests/test_kernels_compile.py
run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
run tests/test_structure_contract.py -k "cupy and (reading or coo or graphvine or csr)"
tests_done
echo "t=$SECONDS" | tee -a "$OUT/tests.txt"
log=$PWD/.data/sx-mathoverflow.events.parquet
fresh() {  # fresh LABEL STRUCTURE [env]: this tree through .ci/gpu-replay-fresh.py
  local t0=$(date +%s%N)
  env $3 timeout 60 python3 .ci/gpu-replay-fresh.py replay "$log" --backend gpu --structure $2 --jobs pagerank,bfs,triangles \
     --bfs-source 1 --batch-size 10000 --out /tmp/r-$2-new --overwrite --no-progress > /tmp/replay.txt 2>&1
  echo "process wall seconds $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> /tmp/replay.txt
  replay_line $1 $2; grep "scipy imported" /tmp/replay.txt | sed "s/^/$1 $2 /" >> "$OUT/replay.txt"
}
for s in coo graphvine; do replay_once new $s 90; replay_once orig $s 90; done     # pyc files, kernel cache
for i in 1 2; do for s in coo graphvine; do
  replay_once orig $s 60; replay_line orig $s
  fresh new $s NO_LIBRARY_IMPORT=0
  fresh new-nolib $s NO_LIBRARY_IMPORT=1
done; done
echo "t=$SECONDS" >> "$OUT/replay.txt"
