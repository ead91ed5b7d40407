#!/bin/bash
# Session 18, call 5: the lazy cupyx.linalg's device test and the warm-up's, then five rounds of fresh replays, the
# starting code, the tree before the change (.wt/base, 80298ae) and this tree, with both windows' ratios.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=300
run tests/test_backend_lazy_imports.py tests/test_replay_warm_up.py tests/test_pipeline_jobs.py
tests_done tests.txt
replay_sides 5 orig base new
python3 .ci/gpu-replay-ratios.py "$OUT/replay.txt" > "$OUT/ratios.txt" 2>&1
