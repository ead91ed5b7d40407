#!/usr/bin/env bash
# Session 13: NumPy's f2py / testing left unrun by SciPy's import (structures.backend.defer_numpy_extras).
# The first elementwise operation's time in fresh processes, deferral on / off; fresh CLI replays of the
# starting code, the session's start and this tree with VINESTREAM_LAZY_IMPORTS 0 / 1, three rounds; the tests.
# Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_backend_lazy_imports.py tests/test_backend_context.py tests/test_cli.py -k "lazy or context or replay"
tests_done tests.txt
for i in 1 2 3 4 5; do
  for lazy in 0 1; do
    VINESTREAM_LAZY_IMPORTS=$lazy python3 - >> "$OUT/first-op.txt" <<'PY'
import os, sys, time
from vinestream.structures.backend import defer_numpy_extras
d = defer_numpy_extras()
import cupy
t = time.perf_counter(); a = cupy.arange(3) + 1; cupy.cuda.runtime.deviceSynchronize(); dt = time.perf_counter() - t
print(f"lazy={os.environ['VINESTREAM_LAZY_IMPORTS']} deferred={d} first elementwise op {1e3*dt:.1f} ms; "
      f"f2py ran {'numpy.f2py.crackfortran' in sys.modules} testing ran {'numpy.testing._private.utils' in sys.modules}")
PY
  done
done
nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/replay.txt"
for r in 1 2 3; do
  for s in coo graphvine; do
    replay_once orig $s 90; replay_line orig $s
    base_once $s; replay_line base $s
    for lazy in 0 1; do
      t0=$(date +%s.%N); VINESTREAM_LAZY_IMPORTS=$lazy replay_once new $s 60; t1=$(date +%s.%N)
      replay_line lazy$lazy $s
      echo "== $s round $r lazy $lazy" >> "$OUT/timeline.txt"
      python3 .ci/gpu-replay-timeline.py /tmp/r-$s-new $t0 $t1 >> "$OUT/timeline.txt" 2>&1
    done
  done
done
