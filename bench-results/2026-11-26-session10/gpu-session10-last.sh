#!/usr/bin/env bash
# Session 10, last call (about 5 minutes): the device tests the closing call A could not run (its resolve /
# vertex map / coo / sync budget / metrics group stopped at collection: kafka-python was not carried) and
# those of the last PageRank merge, then `bench algorithms` at R-MAT 20 and 22 (with cupyx), GraphVine's and
# coo's 1e3 and 1e6-edge batches on R-MAT 22 (`bench structures`), 1,000-event phases.
set -u
GPU_TEST_LIMIT=200; source .ci/gpu-lib.sh
gpu_setup
run -rx tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_coo_fused_gpu.py tests/test_sync_budget.py tests/test_work_counters.py tests/test_replay_warm_up.py tests/test_replay_read_ahead.py tests/test_vertex_table.py tests/test_metrics.py
run tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_pagerank_kernels.py tests/test_kernels_compile.py
run tests/test_pipeline_jobs.py
run tests/test_bench_algorithms.py tests/test_cli_errors.py
tests_done
echo "t=$SECONDS" | tee -a "$OUT/tests.txt"
vs() { timeout "$1" python3 -m vinestream bench "${@:2}" 2>&1 | tee -a "$OUT/bench.txt" | tail -n 30; echo "t=$SECONDS" >> "$OUT/bench.txt"; }
vs 100 algorithms --backend gpu --scales 20 --json "$OUT/alg20.json"
vs 120 algorithms --backend gpu --scales 22 --json "$OUT/alg22.json"
for i in 1 2; do echo "new $(timeout 40 python3 -m tests.phase_timing --backend gpu --scale 20 --structures graphvine,coo 2>&1 | tail -1)" >> "$OUT/phase.txt"; done
vs 150 structures --backend gpu --structures graphvine,coo --batch-sizes 1000,1000000 --scales 22 --json "$OUT/structures22.json"
