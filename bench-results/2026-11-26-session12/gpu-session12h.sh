#!/usr/bin/env bash
# Session 12: the CUDA primary context made on a thread while the CLI imports CuPy (structures.backend.
# start_primary_context) against without it ($VINESTREAM_EARLY_CONTEXT=0): fresh CLI replays alternating, three
# rounds, whole-process wall times and events/s; its device test. Carry .data .whl.
set -u
GPU_TEST_LIMIT=120; source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_backend_context.py tests/test_cli.py
tests_done
nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/replay.txt"
for r in 1 2 3; do
  for s in coo graphvine; do
    for early in 1 0; do
      VINESTREAM_EARLY_CONTEXT=$early replay_once new $s 60; replay_line "early=$early" $s
    done
  done
done
