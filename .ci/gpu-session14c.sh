#!/usr/bin/env bash
# Session 14: GraphVine's pool growth in steps of at least 64k entries, in buffers with room to grow in place:
# its device tests, the growth script (the session's start and each change, alternating), then
# fresh CLI replays of the starting code, the session's start and this tree, three rounds.
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
replay_rounds 3
