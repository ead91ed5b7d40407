#!/bin/bash
# Session 19, call 1 (after the probe): GraphVine's one-pass shifts (gv_insert_shift / gv_delete_shift) -
# compiled first (the module is new, so the first process compiles it), then the 1e6-edge bench at R-MAT 22
# (rows' side, staged key side, one pass at three tile sizes, interleaved) and GraphVine's device tests.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
export PYTHONPATH=$PWD:/tmp/site
graphvine_compile tests.txt
timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 --variants ${VARIANTS:-rows,staged,tiles,tiles1024} --out "$OUT" > "$OUT/bench22.txt" 2>&1
echo "bench rc=$?" | tee -a "$OUT/tests.txt"
tail -n 25 "$OUT/bench22.txt"
GPU_TEST_LIMIT=${LIMIT:-200}
run tests/test_graphvine_fused_gpu.py
run tests/test_graphvine_kernels_compile.py tests/test_structure_contract.py -k "compile or (cupy and graphvine)"
tests_done tests.txt
tail -n 40 "$OUT/tests.txt"
