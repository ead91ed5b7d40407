#!/usr/bin/env bash
# bfsjob helper's device call: the transpose kernels' and the BFS job's device tests, then .ci/gpu-bfsjob.py.
# Run from the worktree root (.wt/bfsjob) with .data carried: `bash bench-results/2026-11-25-bfsjob/gpu-bfsjob.sh`.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f ../../.data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf ../../.data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/device.txt"
VINESTREAM_BACKEND=gpu timeout ${TEST_LIMIT:-100} python3 -m pytest -q -p no:cacheprovider -m gpu -rs \
  tests/test_transpose_kernels.py tests/test_bfs_kernels.py tests/test_bfs.py tests/test_bfs_in_edge_log.py 2>&1 | tail -25 > "$OUT/tests.txt"
echo "rc=${PIPESTATUS[0]}" >> "$OUT/tests.txt"
VINESTREAM_BACKEND=gpu timeout 60 python3 -m pytest -q -p no:cacheprovider \
  "tests/test_bfs_repair.py::test_fused_repair_on_the_gpu_matches_the_array_program" 2>&1 | tail -15 >> "$OUT/tests.txt"
echo "rc=${PIPESTATUS[0]}" >> "$OUT/tests.txt"
timeout ${BENCH_LIMIT:-150} python3 .ci/gpu-bfsjob.py "$OUT" > "$OUT/bench.txt" 2>&1
echo "rc=$?" >> "$OUT/bench.txt"
