#!/usr/bin/env bash
# Session 11: the device tests after the last refactors (PageRank's capture_graph, the triangle kernels'
# tri_close). Carry .data .whl.
set -u
GPU_TEST_LIMIT=200; source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_pagerank_fused_gpu.py tests/test_pagerank_kernels.py
run tests/test_pagerank.py tests/test_kernels_compile.py
run tests/test_triangles_fused_gpu.py tests/test_triangles.py tests/test_triangle_kernels.py tests/test_triangles_recount.py tests/test_triangles_delta.py
run tests/test_pipeline_jobs.py tests/test_sync_budget.py tests/test_work_counters.py
tests_done
