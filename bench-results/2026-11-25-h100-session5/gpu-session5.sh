#!/usr/bin/env bash
# One device call of this session: resolve crossover, replay A/B (base commit in .wt/base vs this tree), GPU tests.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
log=$PWD/.data/sx-mathoverflow.events.parquet
python3 .ci/gpu-profile-replay.py "$log" "$OUT/new" coo > "$OUT/ab.txt" 2>&1
(cd .wt/base && python3 .ci/gpu-profile-replay.py "$log" /tmp/base coo) >> "$OUT/ab.txt" 2>&1
python3 .ci/gpu-profile-replay.py "$log" /tmp/new2 coo >> "$OUT/ab.txt" 2>&1
grep -E "timed|profiled" "$OUT/ab.txt"
MODE=crossover python3 .ci/gpu-profile-batch.py "$OUT" > "$OUT/crossover.txt" 2>&1; tail -12 "$OUT/crossover.txt"
VINESTREAM_BACKEND=gpu timeout 300 python3 -m pytest -q -x -p no:cacheprovider tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_pagerank_kernels.py tests/test_results_layout.py tests/test_sync_budget.py > "$OUT/tests.txt" 2>&1; tail -3 "$OUT/tests.txt"
tar czf "$OUT/cupy_cache.tgz" -C ~/.cupy kernel_cache 2>/dev/null; ls -la "$OUT"
