#!/bin/bash
# Session 18, call 5: every device test file at the session's last code (the lazy cupyx.linalg, the shared-state
# check), then four rounds of fresh replays, the starting code against this tree, with both windows' ratios.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=420
run tests/test_compact.py tests/test_kernel_shared_reuse.py tests/test_backend_lazy_imports.py
all_test_groups
tests_done tests.txt
replay_sides 4 orig new
python3 .ci/gpu-replay-ratios.py "$OUT/replay.txt" > "$OUT/ratios.txt" 2>&1
tar czf "$OUT/logs.tgz" -C "$GPU_TEST_LOGS" . 2>/dev/null
