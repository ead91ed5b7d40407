#!/usr/bin/env bash
# Session 8, second call: the block scan's barrier fix under the groups that failed in the first call, and
# where static BFS / PageRank spend their time against cuGraph and plain CuPy (.ci/gpu-static-parts.py).
set -u
GPU_TEST_LIMIT=200; source .ci/gpu-lib.sh
gpu_setup
[ -f $HOME/.dw/site/env.sh ] && . $HOME/.dw/site/env.sh
run tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_concurrent_phases_gpu.py tests/test_graphvine_fused_gpu.py
run tests/test_structure_contract.py -k "cupy or gpu" -x
run tests/test_pipeline_contract.py tests/test_sync_budget.py tests/test_triangles_fused_gpu.py -x
tests_done
timeout 150 python3 .ci/gpu-static-parts.py "$OUT/static-parts.json" 2>&1 | tail -5 | tee "$OUT/static-parts.txt"
