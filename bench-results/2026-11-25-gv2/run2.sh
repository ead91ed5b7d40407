#!/bin/bash
# Device run 2, from the repository root of /work/main on the GPU box (this worktree carried as .wt/gv):
#   bash .wt/gv/bench-results/2026-11-25-gv2/run2.sh
# GraphVine's GPU tests; phase timing old (main's checkout) / new (this branch) interleaved; bench structures
# graphvine,csr at R-MAT 22 (new); the structure profile at R-MAT 20 (new), then, as time allows, at R-MAT 22
# (new) and R-MAT 20 (old).  Every step has its own time limit so that what finished comes back.
ROOT=$(pwd); WT=$ROOT/.wt/gv; D=$WT/bench-results/2026-11-25-gv
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $OUT/gpu.txt
cd $WT
timeout 75 python -m pytest -q -x -p no:randomly tests/test_graphvine_fused_gpu.py tests/test_graphvine_kernels_compile.py \
  tests/test_kernels_compile.py -k "graphvine or fused or budget or new_vertices or one_sync" > $OUT/tests.txt 2>&1
echo "tests rc=$?" >> $OUT/tests.txt; tail -2 $OUT/tests.txt
for who in new old new old; do
  if [ $who = new ]; then cd $WT; else cd $ROOT; fi
  echo "$who: $(timeout 30 python -m tests.phase_timing --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> $OUT/phase.txt
done
cat $OUT/phase.txt; echo "t=$SECONDS"
cd $WT && timeout 110 python $D/bench22.py graphvine,csr $OUT/bench22-new.json > $OUT/bench22.txt 2>&1
echo "bench rc=$?" >> $OUT/bench22.txt; head -20 $OUT/bench22.txt; echo "t=$SECONDS"
left() { echo $((292 - SECONDS)); }
if [ $(left) -gt 25 ]; then
  cd $WT && timeout $(left) python $D/gv_profile.py --label new --scale 20 --rounds 10 --out $OUT > $OUT/profile-new.log 2>&1
  head -2 $OUT/profile-new.log; echo "t=$SECONDS"
fi
if [ $(left) -gt 40 ]; then
  cd $WT && timeout $(left) python $D/gv_profile.py --label new22 --scale 22 --rounds 5 --out $OUT > $OUT/profile-new22.log 2>&1
  head -2 $OUT/profile-new22.log; echo "t=$SECONDS"
fi
if [ $(left) -gt 25 ]; then
  cd $ROOT && timeout $(left) python $D/gv_profile.py --label old --scale 20 --rounds 10 --out $OUT > $OUT/profile-old.log 2>&1
  head -2 $OUT/profile-old.log
fi
echo "t=$SECONDS"
