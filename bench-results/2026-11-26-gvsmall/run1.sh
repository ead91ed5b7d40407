#!/usr/bin/env bash
# Device call (from the repository root on the GPU box; .wt/gvsmall, .wt/base and .data carried): this branch's
# GPU tests of its area (graphvine fused vs array program, combined edge phases, the pipeline on graphvine, the
# contracts on CuPy), then tests.phase_timing (R-MAT 20, graphvine and coo) of the base tree (a4f0b6b) and this
# branch interleaved, then the batch profile of graphvine in both trees.  Everything into $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/log.txt"
python3 -c "import cupy; print('cupy', cupy.__version__)" >> "$OUT/log.txt" 2>&1
NEW=$PWD/.wt/gvsmall; BASE=$PWD/.wt/base; B=bench-results/2026-11-26-gvsmall
PAIRS=${PAIRS:-3}; TLIM=${TLIM:-100}
T() { (cd "$NEW" && VINESTREAM_BACKEND=gpu timeout "$TLIM" python3 -m pytest -q -p no:cacheprovider "$@"); }
(T tests/test_graphvine_fused_gpu.py -k "combined or pipeline_with or graph_path" > "$OUT/tests1.txt" 2>&1
 echo "rc=$? tests1 (combined, pipeline, graph path)" >> "$OUT/log.txt") &
(T tests/test_graphvine_fused_gpu.py tests/test_graphvine_kernels_compile.py -k "not (combined or pipeline_with or graph_path)" \
   > "$OUT/tests2.txt" 2>&1; echo "rc=$? tests2 (graphvine fused, nvcc)" >> "$OUT/log.txt") &
(T tests/test_resolve_kernels_gpu.py tests/test_pipeline_contract.py tests/test_structure_contract.py \
   -k "graphvine and not numpy" > "$OUT/tests3.txt" 2>&1; echo "rc=$? tests3 (pipelines, contracts)" >> "$OUT/log.txt") &
wait
for f in tests1 tests2 tests3; do tail -n 3 "$OUT/$f.txt" | sed "s/^/$f: /" >> "$OUT/log.txt"; done
echo "t=$SECONDS" >> "$OUT/log.txt"
for i in $(seq 1 "$PAIRS"); do
  for side in base new; do
    dir=$NEW; [ $side = base ] && dir=$BASE
    (cd "$dir" && timeout 40 python3 -m tests.phase_timing --backend gpu --scale 20 --structures graphvine,coo 2>&1 \
       | tail -1) | sed "s/^/$side $i /" | tee -a "$OUT/phase.txt"
  done
done
echo "t=$SECONDS" >> "$OUT/log.txt"
for side in base new; do
  dir=$NEW; [ $side = base ] && dir=$BASE
  (cd "$dir" && timeout 45 python3 "$NEW/$B/profile_gv.py" "$OUT" "$side" graphvine 2>&1 | tail -3) >> "$OUT/log.txt"
done
echo "t=$SECONDS" >> "$OUT/log.txt"
