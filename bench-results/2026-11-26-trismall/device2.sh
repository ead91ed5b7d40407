#!/usr/bin/env bash
# trismall's second device call (run from the repository root = main's checkout = base; this tree in .wt/trismall):
# the job's device tests on this tree; the direct replay loop of sx-mathoverflow, base / mine alternating (3 rounds);
# the triangles job's R-MAT 20 rows (bench algorithms' method) base / mine alternating (3 rounds); the recount
# scan on R-MAT 14-18 (this tree, incremental forced); one profiled direct pass of this tree (coo).
# At most 8 files come back: tests.txt direct.txt bench.txt scan.txt and all.tgz (JSON, profiles).
# Carry .wt/trismall .data .whl.
set -u
GPU_TEST_LIMIT=${GPU_TEST_LIMIT:-110}; source .ci/gpu-lib.sh
gpu_setup tests.txt
ROOT=$PWD; W=$ROOT/.wt/trismall; B=$W/bench-results/2026-11-26-trismall
log=$ROOT/.data/sx-mathoverflow.events.parquet
mkdir -p /tmp/keep
cd "$W"
run tests/test_triangles_fused_gpu.py tests/test_triangles.py tests/test_triangles_recount.py tests/test_triangles_delta.py \
    tests/test_triangle_kernels.py
run tests/test_pipeline_jobs.py
run tests/test_sync_budget.py tests/test_work_counters.py
tests_done tests.txt
cd "$ROOT"
echo "t=$SECONDS tests done" | tee -a "$OUT/tests.txt"
for i in 1 2 3; do
  [ $SECONDS -gt 170 ] && break
  echo "=== base round $i" >> "$OUT/direct.txt"
  ROUNDS=1 timeout 40 python3 .ci/gpu-replay-direct.py "$log" "/tmp/keep/direct-base-$i.json" coo graphvine >> "$OUT/direct.txt" 2>&1
  echo "=== mine round $i" >> "$OUT/direct.txt"
  (cd "$W" && ROUNDS=1 timeout 40 python3 .ci/gpu-replay-direct.py "$log" "/tmp/keep/direct-mine-$i.json" coo graphvine) >> "$OUT/direct.txt" 2>&1
  echo "t=$SECONDS direct round $i" | tee -a "$OUT/direct.txt"
done
for i in 1 2 3; do
  [ $SECONDS -gt 235 ] && break
  BATCHES=3 timeout 30 python3 "$B/tri_bench.py" base "/tmp/keep/bench-base-$i.json" 20 1e-4,1e-3,1e-2 >> "$OUT/bench.txt" 2>&1
  (cd "$W" && BATCHES=3 timeout 30 python3 "$B/tri_bench.py" mine "/tmp/keep/bench-mine-$i.json" 20 1e-4,1e-3,1e-2) >> "$OUT/bench.txt" 2>&1
  echo "t=$SECONDS bench round $i" | tee -a "$OUT/bench.txt"
done
[ $SECONDS -lt 255 ] && (cd "$W" && BATCHES=2 timeout $((280 - SECONDS)) python3 "$B/tri_bench.py" scan /tmp/keep/scan.json 14,16,18 2e-3,1e-2 '{"recount_edges": 0}') > "$OUT/scan.txt" 2>&1
echo "t=$SECONDS scan" | tee -a "$OUT/scan.txt"
[ $SECONDS -lt 272 ] && (cd "$W" && PROFILE=1 ROUNDS=1 timeout $((292 - SECONDS)) python3 .ci/gpu-replay-direct.py "$log" /tmp/keep/profile-mine.json coo) > /tmp/keep/profile.txt 2>&1
tar czf "$OUT/all.tgz" -C /tmp/keep .
echo "t=$SECONDS end" | tee -a "$OUT/tests.txt"
