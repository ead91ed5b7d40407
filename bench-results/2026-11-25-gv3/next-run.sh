#!/bin/bash
# The device run this branch still needs (NOT RUN: the session's device budget fell under the helpers'
# floor before it), from the repository root of /work/main on the GPU box, this worktree carried as .wt/gv3
# (run carry [".wt/gv3", ".data"], timeout_s 240):
#   bash .wt/gv3/bench-results/2026-11-25-gv3/next-run.sh
# Compile check; GraphVine's GPU tests (fused == array program with both new paths on and off, the graph path
# against kernel-by-kernel and the array program, large batches on the key side); phase timing with the new
# paths on (phase_new_paths.py) / main's checkout / this branch's defaults (new paths off); the 1e6-edge
# key-side vs rows'-side bench at R-MAT 22; small batches graph vs kernels at R-MAT 20.  Each step has its own
# limit; at most 8 files come back (5 written here).
ROOT=$(pwd); WT=$ROOT/.wt/gv3; D=$WT/bench-results/2026-11-25-gv; D3=$WT/bench-results/2026-11-25-gv3
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/tests.txt
mkdir -p ~/.cupy && tar xzf $ROOT/.data/cupy_cache.tgz -C ~/.cupy 2>/dev/null
cd $WT
timeout 60 python -c "
import cupy
from vinestream.structures import graphvine_kernels as gk
gk.preload(cupy, gk.KERNELS); print('compiled', len(gk.KERNELS), 'kernels')" >> $OUT/tests.txt 2>&1
echo "compile rc=$?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt; echo "t=$SECONDS"
timeout 105 python -m pytest -q -x -p no:randomly tests/test_graphvine_fused_gpu.py tests/test_structure_contract.py \
  tests/test_kernels_compile.py -k "graphvine or fused or graph_path" >> $OUT/tests.txt 2>&1
echo "tests rc=$?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt; echo "t=$SECONDS"
cd $WT && echo "new paths: $(timeout 30 python $D3/phase_new_paths.py --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> $OUT/phase.txt
cd $ROOT && echo "old: $(timeout 30 python -m tests.phase_timing --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> $OUT/phase.txt
cat $OUT/phase.txt; echo "t=$SECONDS"
left() { echo $((232 - SECONDS)); }
cd $WT && timeout 45 python $D3/big_bench.py --scale 22 --rounds 3 --out $OUT > $OUT/big22.txt 2>&1
echo "rc=$?" >> $OUT/big22.txt; tail -7 $OUT/big22.txt; echo "t=$SECONDS"
[ $(left) -gt 20 ] && cd $WT && timeout 20 python $D3/small_bench.py --scale 20 --rounds 30 --out /tmp > $OUT/small20.txt 2>&1
echo "rc=$?" >> $OUT/small20.txt; tail -4 $OUT/small20.txt; echo "t=$SECONDS"
if [ $(left) -gt 28 ]; then
  cd $WT && echo "new paths: $(timeout 27 python $D3/phase_new_paths.py --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> $OUT/phase.txt
fi
if [ $(left) -gt 28 ]; then
  cd $ROOT && echo "old: $(timeout 27 python -m tests.phase_timing --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> $OUT/phase.txt
fi
if [ $(left) -gt 28 ]; then
  cd $WT && echo "defaults: $(timeout 27 python -m tests.phase_timing --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> $OUT/phase.txt
fi
tail -3 $OUT/phase.txt; echo "t=$SECONDS"
