#!/bin/bash
# Device run 2, from the repository root of /work/main on the GPU box (this worktree carried as .wt/gv3):
#   bash .wt/gv3/bench-results/2026-11-25-gv3/run2.sh
# Compile check; GraphVine's GPU tests (fused == array program, the graph path, large batches on the key
# side); phase timing new / old (main's checkout); the 1e6-edge key-side vs rows'-side bench at R-MAT 22;
# small batches graph vs kernels at R-MAT 20; gv_profile at R-MAT 20 new / old.  Each step has its own limit.
ROOT=$(pwd); WT=$ROOT/.wt/gv3; D=$WT/bench-results/2026-11-25-gv; D3=$WT/bench-results/2026-11-25-gv3
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/tests.txt
mkdir -p ~/.cupy && tar xzf $ROOT/.data/cupy_cache.tgz -C ~/.cupy 2>/dev/null
cd $WT
timeout 60 python -c "
import cupy
from vinestream.structures import graphvine_kernels as gk
gk.preload(cupy, gk.KERNELS); print('compiled', len(gk.KERNELS), 'kernels')" >> $OUT/tests.txt 2>&1
echo "compile rc=$?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt; echo "t=$SECONDS"
timeout 90 python -m pytest -q -x -p no:randomly tests/test_graphvine_fused_gpu.py tests/test_structure_contract.py \
  tests/test_kernels_compile.py -k "graphvine or fused or graph_path" >> $OUT/tests.txt 2>&1
echo "tests rc=$?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt; echo "t=$SECONDS"
for who in new old; do
  if [ $who = new ]; then cd $WT; else cd $ROOT; fi
  echo "$who: $(timeout 30 python -m tests.phase_timing --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> $OUT/phase.txt
done
cat $OUT/phase.txt; echo "t=$SECONDS"
cd $WT && timeout 50 python $D3/big_bench.py --scale 22 --rounds 3 --out $OUT > $OUT/big22.txt 2>&1
echo "rc=$?" >> $OUT/big22.txt; tail -7 $OUT/big22.txt; echo "t=$SECONDS"
cd $WT && timeout 25 python $D3/small_bench.py --scale 20 --rounds 30 --out /tmp > $OUT/small20.txt 2>&1
echo "rc=$?" >> $OUT/small20.txt; tail -4 $OUT/small20.txt; echo "t=$SECONDS"
left() { echo $((230 - SECONDS)); }
if [ $(left) -gt 20 ]; then
  cd $WT && timeout $(left) python $D/gv_profile.py --label new --scale 20 --rounds 10 --out $OUT > /tmp/profile-new.log 2>&1
  head -2 /tmp/profile-new.log; echo "t=$SECONDS"
fi
for who in new old; do
  if [ $(left) -gt 28 ]; then
    if [ $who = new ]; then cd $WT; else cd $ROOT; fi
    echo "$who: $(timeout 27 python -m tests.phase_timing --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> $OUT/phase.txt
  fi
done
tail -2 $OUT/phase.txt; echo "t=$SECONDS"
