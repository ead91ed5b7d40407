#!/usr/bin/env bash
# Session 6, re-measure after trimming the small batch's host operations (BatchDelta slices, no-op
# conversions, chained phase events): the tests of those paths, then 1,000-event batches of the session's
# start (.wt/base = 5cf2165) and of main interleaved.
set -u
source .ci/gpu-lib.sh
gpu_setup
VINESTREAM_BACKEND=gpu timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_sync_budget.py \
  tests/test_resolve_kernels_gpu.py tests/test_pipeline_contract.py tests/test_coo_fused_gpu.py 2>&1 | tail -n 5 >> "$OUT/tests.txt"
phase_timing coo,graphvine 60 base new base new base new
