#!/usr/bin/env bash
# Session 12, call 3: the resolve-ahead device tests again (PageRank's ranks compared to rounding), the
# replay's batches resolved ahead (.ci/gpu-startup.py), and fresh replays: the starting code, the
# session's start (.wt/base, 020d806) and this tree alternating, with this tree's timelines.
# Carry .data .whl .wt/orig .wt/base.
set -u
GPU_TEST_LIMIT=300; source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_resolve_kernels_gpu.py tests/test_coo_fused_gpu.py tests/test_sync_budget.py tests/test_work_counters.py
run tests/test_replay_read_ahead.py tests/test_replay_warm_up.py
tests_done
for s in coo graphvine; do timeout 60 python3 .ci/gpu-startup.py $s >> "$OUT/startup.txt" 2>&1; done
replay_rounds 3
