#!/usr/bin/env bash
# Session 14, closing tests: every device test group at the closing code (13 groups at once, 480 s each), then
# CuPy's kernel cache as it now is (the kernels of this tree compiled) into $OUT/cupy_cache.tgz for .data.
# Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
GPU_TEST_LIMIT=480
all_test_groups
tests_done tests.txt
tar czf "$OUT/cupy_cache.tgz" -C ~/.cupy kernel_cache
