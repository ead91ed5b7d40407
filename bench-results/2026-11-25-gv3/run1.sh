#!/bin/bash
# Device run 1, from the repository root of /work/main on the GPU box (this worktree carried as .wt/gv3):
#   bash .wt/gv3/bench-results/2026-11-25-gv3/run1.sh
# GraphVine's GPU tests (fused == array program; large batches now on the key-side path); phase timing
# old (main's checkout) / new interleaved; the 1e6-edge key-side vs rows'-side bench at R-MAT 22 and 20;
# gv_profile at R-MAT 20, new then old.  Every step has its own time limit.
ROOT=$(pwd); WT=$ROOT/.wt/gv3; D=$WT/bench-results/2026-11-25-gv; D3=$WT/bench-results/2026-11-25-gv3
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/gpu.txt
mkdir -p ~/.cupy && tar xzf $ROOT/.data/cupy_cache.tgz -C ~/.cupy 2>/dev/null
cd $WT
timeout 70 python -m pytest -q -x -p no:randomly tests/test_graphvine_fused_gpu.py tests/test_kernels_compile.py \
  -k "graphvine or fused" > $OUT/tests.txt 2>&1
echo "tests rc=$?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt; echo "t=$SECONDS"
for who in new old new old; do
  if [ $who = new ]; then cd $WT; else cd $ROOT; fi
  echo "$who: $(timeout 25 python -m tests.phase_timing --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> $OUT/phase.txt
done
cat $OUT/phase.txt; echo "t=$SECONDS"
cd $WT && timeout 60 python $D3/big_bench.py --scale 22 --rounds 3 --out $OUT > $OUT/big22.txt 2>&1
echo "rc=$?" >> $OUT/big22.txt; tail -8 $OUT/big22.txt; echo "t=$SECONDS"
left() { echo $((232 - SECONDS)); }
if [ $(left) -gt 25 ]; then
  cd $WT && timeout $(left) python $D/gv_profile.py --label new --scale 20 --rounds 10 --out $OUT > $OUT/profile-new.log 2>&1
  head -2 $OUT/profile-new.log; echo "t=$SECONDS"
fi
if [ $(left) -gt 25 ]; then
  cd $ROOT && timeout $(left) python $D/gv_profile.py --label old --scale 20 --rounds 10 --out $OUT > $OUT/profile-old.log 2>&1
  head -2 $OUT/profile-old.log
fi
echo "t=$SECONDS"
