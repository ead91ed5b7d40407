#!/usr/bin/env bash
# Session 8, first call: the device tests of session 7's last two refactors (block_exclusive_scan shared
# with GraphVine's kernels; PageRank's _push_entries), which had not run on a GPU, and the groups that
# hit their time limit in session 7's closing call.
set -u
GPU_TEST_LIMIT=200; source .ci/gpu-lib.sh
gpu_setup
run tests/test_graphvine_fused_gpu.py tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py
run tests/test_coo_fused_gpu.py tests/test_pagerank_fused_gpu.py tests/test_pagerank.py
run tests/test_pipeline_jobs.py -x
run tests/test_structure_contract.py -k "cupy or gpu" -x
run tests/test_concurrent_phases_gpu.py tests/test_bfs_kernels.py tests/test_triangles_fused_gpu.py tests/test_sync_budget.py
tests_done
