#!/usr/bin/env bash
# trismall's device call (run from the repository root = main's checkout = base; this tree in .wt/trismall):
# the job's device tests on this tree; the direct replay loop of sx-mathoverflow, base / mine alternating;
# the triangles job's R-MAT 20 rows (bench algorithms' method) base / mine; the recount scan on R-MAT 14-18.
# Carry .wt/trismall .data .whl.
set -u
GPU_TEST_LIMIT=${GPU_TEST_LIMIT:-100}; source .ci/gpu-lib.sh
gpu_setup tests.txt
ROOT=$PWD; W=$ROOT/.wt/trismall; B=$W/bench-results/2026-11-26-trismall
log=$ROOT/.data/sx-mathoverflow.events.parquet
cd "$W"
run tests/test_triangles_fused_gpu.py tests/test_triangles.py tests/test_triangles_recount.py tests/test_triangle_kernels.py
run tests/test_pipeline_jobs.py
run tests/test_sync_budget.py tests/test_work_counters.py
tests_done tests.txt
cd "$ROOT"
echo "t=$SECONDS tests done" | tee -a "$OUT/tests.txt"
for i in 1 2 3; do
  [ $SECONDS -gt 175 ] && break
  ROUNDS=1 timeout 40 python3 .ci/gpu-replay-direct.py "$log" "$OUT/direct-base-$i.json" coo graphvine > "$OUT/direct-base-$i.txt" 2>&1
  (cd "$W" && ROUNDS=1 timeout 40 python3 .ci/gpu-replay-direct.py "$log" "$OUT/direct-mine-$i.json" coo graphvine) > "$OUT/direct-mine-$i.txt" 2>&1
  echo "t=$SECONDS direct round $i" | tee -a "$OUT/direct-times.txt"
done
BATCHES=3 timeout 45 python3 "$B/tri_bench.py" base "$OUT/bench-base.json" 20 1e-4,1e-3,1e-2 > "$OUT/bench-base.txt" 2>&1
(cd "$W" && BATCHES=3 timeout 45 python3 "$B/tri_bench.py" mine "$OUT/bench-mine.json" 20 1e-4,1e-3,1e-2) > "$OUT/bench-mine.txt" 2>&1
echo "t=$SECONDS bench" | tee -a "$OUT/direct-times.txt"
[ $SECONDS -lt 265 ] && (cd "$W" && BATCHES=2 timeout $((290 - SECONDS)) python3 "$B/tri_bench.py" scan "$OUT/scan.json" 14,16,18 2e-3,1e-2 '{"recount_edges": 0}') > "$OUT/scan.txt" 2>&1
echo "t=$SECONDS end" | tee -a "$OUT/direct-times.txt"
