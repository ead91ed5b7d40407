#!/bin/bash
# Device run 1, from the repository root of /work/main on the GPU box (this worktree carried as .wt/gv4):
#   bash .wt/gv4/bench-results/2026-11-25-gv4/run1.sh
# Compile; GraphVine's GPU tests (fused == array program, the large batches on the rows' side, the staged key
# side and the in-place shift); big_bench.py at R-MAT 22: the shift's whole state against the rows' side's,
# then rows / staged / shift timed interleaved, per-kernel device times, device span against wall.
ROOT=$(pwd); WT=$ROOT/.wt/gv4; D=$WT/bench-results/2026-11-25-gv4
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/gpu.txt
mkdir -p ~/.cupy && tar xzf $ROOT/.data/cupy_cache.tgz -C ~/.cupy 2>/dev/null
cd $WT
timeout 60 python -c "
import cupy
from vinestream.structures import graphvine_kernels as gk
gk.preload(cupy, gk.KERNELS); print('compiled', len(gk.KERNELS), 'kernels')" > $OUT/tests.txt 2>&1
echo "compile rc=$?" >> $OUT/tests.txt; tail -2 $OUT/tests.txt; echo "t=$SECONDS"
timeout 110 python -m pytest -q -x -p no:randomly tests/test_graphvine_fused_gpu.py >> $OUT/tests.txt 2>&1
echo "tests rc=$?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt; echo "t=$SECONDS"
left() { echo $((285 - SECONDS)); }
timeout $(left) python $D/big_bench.py --scale 22 --rounds 3 --out $OUT > $OUT/big22.txt 2>&1
echo "rc=$?" >> $OUT/big22.txt; tail -12 $OUT/big22.txt; echo "t=$SECONDS"
