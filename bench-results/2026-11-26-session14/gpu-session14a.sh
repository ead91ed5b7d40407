#!/usr/bin/env bash
# Session 14: GraphVine's one-sync path up to 8,192 keys (a replay's 1e4-event batch carries 5-6k): its device tests,
# the growth script (one-sync bound 4096 / 8192, GROW_BY 1.25 / 2, warm process), then fresh CLI replays of the
# starting code, the session's start and this tree, three rounds. Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=300
graphvine_test_groups      # (call 1 ran these groups without tests/test_graphvine_paper_bench.py)
tests_done tests.txt
python3 .ci/gpu-graphvine-growth.py > "$OUT/growth.txt" 2>&1
replay_rounds 3
