#!/usr/bin/env bash
# Session 11: the triangles job's fused intersections without the index's compaction: its device tests, then
# `bench algorithms` at R-MAT 20, the commit before (.wt/pretri) and this tree alternating, two rounds.
# Carry .data .wt/pretri .whl.
set -u
GPU_TEST_LIMIT=150; source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_triangles_fused_gpu.py tests/test_triangles.py tests/test_triangles_recount.py tests/test_triangles_delta.py tests/test_triangle_kernels.py
run tests/test_pipeline_jobs.py tests/test_work_counters.py
tests_done
for i in 1 2; do for side in pretri new; do
  dir=$PWD; [ $side = pretri ] && dir=$PWD/.wt/pretri
  (cd "$dir" && timeout 90 python3 -m vinestream bench algorithms --backend gpu --scales 20 --json /tmp/alg.json) \
     > /tmp/alg.txt 2>&1
  grep -E "rmat|triangles|^ +0\.0?1%|^ +1%" /tmp/alg.txt | sed "s/^/$side$i /" >> "$OUT/bench.txt"
done; done
echo "t=$SECONDS" >> "$OUT/bench.txt"
