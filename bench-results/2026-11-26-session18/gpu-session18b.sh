#!/bin/bash
# Session 18, call 2: every device test file at this tree (compact_together on the GPU paths of coo, BFS and the
# vertex map; tests/test_compact.py), then four rounds of fresh replays, the starting code against this tree,
# with the per-round ratios by both windows (.ci/gpu-replay-ratios.py).  Few files come back: the logs are packed.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=420
run tests/test_compact.py
all_test_groups
tests_done tests.txt
replay_sides 4 orig new
python3 .ci/gpu-replay-ratios.py "$OUT/replay.txt" > "$OUT/ratios.txt" 2>&1
tar czf "$OUT/logs.tgz" -C "$GPU_TEST_LOGS" . 2>/dev/null
