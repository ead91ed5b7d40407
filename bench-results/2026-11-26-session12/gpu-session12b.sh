#!/usr/bin/env bash
# Session 12, call 2: the device tests of the resolve ahead (Pipeline.apply(next_events=...)) and coo's whole
# adjacency without a compaction; fresh replays, the starting code (.wt/orig), the session's start
# (.wt/base, 020d806) and this tree alternating, three rounds; a timeline of this tree's replays; CuPy's
# kernel cache back as $OUT/cupy_cache.tgz. Carry .data .whl .wt/orig .wt/base.
set -u
GPU_TEST_LIMIT=300; source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_resolve_kernels_gpu.py tests/test_coo_fused_gpu.py tests/test_sync_budget.py tests/test_work_counters.py
run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
run tests/test_pipeline_jobs.py tests/test_replay_warm_up.py tests/test_replay_read_ahead.py tests/test_metrics.py
run tests/test_structure_contract.py -k "cupy and (coo or graphvine)"
tests_done
replay_rounds 3
tar czf "$OUT/cupy_cache.tgz" -C ~/.cupy .
