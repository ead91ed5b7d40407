#!/usr/bin/env bash
# Session 14: NVRTC and cuBLAS loaded on the early context thread (backend.EARLY_LIBRARIES): its device test, a fresh
# replay's start step by step (twice a structure), then fresh CLI replays of the starting code, the session's start
# and this tree, three rounds. Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_backend_context.py tests/test_backend_lazy_imports.py tests/test_results_layout.py
tests_done tests.txt
for s in coo graphvine coo graphvine; do python3 .ci/gpu-startup.py $s >> "$OUT/startup.txt" 2>&1; done
replay_rounds 3
