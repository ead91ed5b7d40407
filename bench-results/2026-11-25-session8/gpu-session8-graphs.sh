#!/usr/bin/env bash
# Session 8, last call: GraphVine's small batches as CUDA graphs by default (DEFAULT_GRAPHS) under the device
# tests of every path that reaches them, 1,000-event phases of graphvine and coo, and CLI replays of this tree.
set -u
GPU_TEST_LIMIT=130; source .ci/gpu-lib.sh
gpu_setup
run tests/test_graphvine_fused_gpu.py tests/test_graphvine_kernels_compile.py
run tests/test_structure_contract.py -k "graphvine and (cupy or gpu)" -x
run tests/test_pipeline_jobs.py -x
run tests/test_concurrent_phases_gpu.py tests/test_sync_budget.py tests/test_pipeline_contract.py -k "graphvine or gpu or cupy" -x
tests_done
echo "t=$SECONDS" | tee -a "$OUT/tests.txt"
for i in 1 2; do
  echo "$(timeout 30 python3 -m tests.phase_timing --backend gpu --scale 20 --structures graphvine,coo 2>&1 | tail -2 | tr '\n' ' ')" >> "$OUT/phase.txt"
done
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in graphvine coo; do
  for t in 40 25; do
    t0=$(date +%s%N)
    timeout $t python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
       --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-new --overwrite --no-progress > /tmp/replay.txt 2>&1
    echo "process wall seconds $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> /tmp/replay.txt
  done
  replay_line new $s
done
echo "t=$SECONDS" >> "$OUT/replay.txt"
