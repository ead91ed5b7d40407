#!/usr/bin/env bash
# Session 14: the job outputs' columns from their slot columns (PageRank, triangles) and one device-array selection
# for both host copies (backend._on_device / _packed_starts): their device tests; where a warm replay's job time goes
# (.ci/gpu-replay-jobs.py: PageRank's pushes against dense sweeps, the replay without results). Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=300
run tests/test_job_outputs.py tests/test_results_layout.py tests/test_sync_budget.py tests/test_backend_context.py
run tests/test_pipeline_jobs.py
run tests/test_pagerank.py tests/test_triangles.py tests/test_bfs.py
run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
tests_done tests.txt
python3 .ci/gpu-replay-jobs.py coo > "$OUT/jobs-coo.txt" 2>&1
