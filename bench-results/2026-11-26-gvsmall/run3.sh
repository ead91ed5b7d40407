#!/usr/bin/env bash
# Device call 3 (from the repository root on the GPU box; .wt/gvsmall, .wt/gvsmall-v1 (this branch at 9e0ba74, the
# code calls 1 and 2 ran: `git archive 9e0ba74`), .wt/base and .data carried): this branch's GPU tests of its area
# (as call 1), graphvine's kernels one by one (kernel_profile.py, per-kernel part), then tests.phase_timing of the
# base tree, 9e0ba74 and this branch interleaved (3 rounds), then the batch profile of this branch.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/log.txt"
NEW=$PWD/.wt/gvsmall; V1=$PWD/.wt/gvsmall-v1; BASE=$PWD/.wt/base; B=bench-results/2026-11-26-gvsmall
T() { (cd "$NEW" && VINESTREAM_BACKEND=gpu timeout 100 python3 -m pytest -q -p no:cacheprovider "$@"); }
(T tests/test_graphvine_fused_gpu.py -k "combined or pipeline_with or graph_path" > "$OUT/tests1.txt" 2>&1
 echo "rc=$? tests1 (combined, pipeline, graph path)" >> "$OUT/log.txt") &
(T tests/test_graphvine_fused_gpu.py tests/test_graphvine_kernels_compile.py -k "not (combined or pipeline_with or graph_path)" \
   > "$OUT/tests2.txt" 2>&1; echo "rc=$? tests2 (graphvine fused, nvcc)" >> "$OUT/log.txt") &
(T tests/test_resolve_kernels_gpu.py tests/test_pipeline_contract.py tests/test_structure_contract.py \
   -k "graphvine and not numpy" > "$OUT/tests3.txt" 2>&1; echo "rc=$? tests3 (pipelines, contracts)" >> "$OUT/log.txt") &
wait
for f in tests1 tests2 tests3; do tail -n 2 "$OUT/$f.txt" | sed "s/^/$f: /" >> "$OUT/log.txt"; done
echo "t=$SECONDS" >> "$OUT/log.txt"
(cd "$NEW" && KP_PER_KERNEL_ONLY=1 timeout 40 python3 "$B/kernel_profile.py" "$OUT" new 2>&1 | tail -3) >> "$OUT/log.txt"
echo "t=$SECONDS" >> "$OUT/log.txt"
for i in 1 2 3; do
  for side in base v1 new; do
    dir=$NEW; [ $side = base ] && dir=$BASE; [ $side = v1 ] && dir=$V1
    (cd "$dir" && timeout 40 python3 -m tests.phase_timing --backend gpu --scale 20 --structures graphvine,coo 2>&1 \
       | tail -1) | sed "s/^/$side $i /" | tee -a "$OUT/phase.txt"
  done
done
echo "t=$SECONDS" >> "$OUT/log.txt"
(cd "$NEW" && timeout 40 python3 "$NEW/$B/profile_gv.py" "$OUT" new graphvine 2>&1 | tail -2) >> "$OUT/log.txt"
echo "t=$SECONDS" >> "$OUT/log.txt"
