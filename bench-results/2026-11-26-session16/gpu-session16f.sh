#!/bin/bash
# Session 16, call 9: the warm-up made the elementwise helpers' first calls (fill_at, sum_of_sums, normalised_ranks,
# parent_ids), tried and NOT kept (the code is not on main): on a machine whose kernel cache (.data's) lacked them,
# the threads' stacks through a cold and a warm replay (graphvine), then the warm-up's device test; the kernel cache
# as it ends (.data's plus what this call compiled) came back as cupy_cache.tgz (.data's since).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
timeout 120 python3 .ci/gpu-sample-threads.py graphvine 1 > $OUT/sample-graphvine.txt 2>&1
VINESTREAM_BACKEND=gpu timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_replay_warm_up.py \
  tests/test_fill_at.py tests/test_output_kernels.py >> $OUT/tests.txt 2>&1
tail -3 $OUT/tests.txt
tar czf $OUT/cupy_cache.tgz -C ~/.cupy kernel_cache
