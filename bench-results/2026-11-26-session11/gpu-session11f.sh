#!/usr/bin/env bash
# Session 11, closing GPU call: device tests of the last commits; fresh-process CLI replays of sx-mathoverflow (all three jobs, 1e4-event
# batches, --out) by the starting code (.wt/orig), this session's start (.wt/base, adbdfab) and this
# tree, alternating, three rounds per structure; then 1,000-event phases, session start against this tree.
# Carry .data .wt/orig .wt/base .whl.
set -u
GPU_TEST_LIMIT=200; source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_pipeline_jobs.py tests/test_sync_budget.py tests/test_bfs.py
run tests/test_pagerank_fused_gpu.py tests/test_pagerank.py
run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
run tests/test_structure_contract.py -k "cupy and reading"
tests_done
echo "t=$SECONDS" | tee -a "$OUT/tests.txt"
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do replay_once new $s 90; replay_once orig $s 90; base_once $s; done    # pyc files, kernels
for i in 1 2 3; do for s in coo graphvine; do
  replay_once orig $s 60; replay_line orig $s
  base_once $s; replay_line base $s
  replay_once new $s 60; replay_line new $s
done; done
echo "t=$SECONDS" >> "$OUT/replay.txt"
phase_timing coo,graphvine 120 base new
echo "t=$SECONDS" >> "$OUT/phase.txt"
