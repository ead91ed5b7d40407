#!/usr/bin/env bash
# Session 14: GraphVine's pool in buffers with room to grow in place (the one-sync path's graphs kept across growths):
# its device tests, the growth script (variants alternating), a sampling profile of a fresh and a warm replay per
# structure, then fresh CLI replays of the starting code, the session's start and this tree, three rounds.
# Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=300
run tests/test_graphvine_fused_gpu.py
run tests/test_graphvine_combined.py tests/test_concurrent_phases_gpu.py tests/test_graphvine.py
run tests/test_structure_contract.py -k "cupy and graphvine"
run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
run tests/test_graphvine_kernels_compile.py tests/test_sync_budget.py tests/test_graphvine_paper_bench.py
tests_done tests.txt
python3 .ci/gpu-graphvine-growth.py > "$OUT/growth.txt" 2>&1
for s in graphvine coo; do python3 .ci/gpu-sample-replay.py $s > "$OUT/sample-$s.txt" 2>&1; done
replay_rounds 3
