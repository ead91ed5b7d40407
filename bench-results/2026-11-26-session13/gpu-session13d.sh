#!/usr/bin/env bash
# Session 13: fresh CLI replays, three rounds: the starting code, the session's start (.wt/base), the deferral alone
# (.wt/mid, c055e75) and this tree (the deferral, the reader's cheaper batches, the outputs copied together), with
# this tree's timelines; then the device tests of the changed paths. Carry .data .whl .wt/orig .wt/base .wt/mid.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/replay.txt"
for r in 1 2 3; do
  for s in coo graphvine; do
    replay_once orig $s 90; replay_line orig $s
    base_once $s; replay_line base $s
    tree_once mid $s; replay_line mid $s
    t0=$(date +%s.%N); replay_once new $s 60; t1=$(date +%s.%N); replay_line new $s
    echo "== $s round $r" >> "$OUT/timeline.txt"
    python3 .ci/gpu-replay-timeline.py /tmp/r-$s-new $t0 $t1 >> "$OUT/timeline.txt" 2>&1
  done
done
run tests/test_sync_budget.py tests/test_pipeline_jobs.py tests/test_replay_warm_up.py tests/test_replay_read_ahead.py tests/test_validate.py
run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
run tests/test_backend_lazy_imports.py tests/test_backend_context.py tests/test_cli.py tests/test_results_layout.py
tests_done tests.txt
