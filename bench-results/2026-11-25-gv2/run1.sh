#!/bin/bash
# Device run 1 (from the repository root of /work/main on the GPU box, this worktree carried as .wt/gv):
# GraphVine's GPU tests, then old (main's checkout) against new (this branch) side by side.
ROOT=$(pwd); WT=$ROOT/.wt/gv; D=$WT/bench-results/2026-11-25-gv
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $OUT/gpu.txt
cd $WT
timeout 90 python -m pytest -q -x -p no:randomly tests/test_graphvine_fused_gpu.py tests/test_graphvine_kernels_compile.py \
  tests/test_kernels_compile.py -k "graphvine or fused or budget or new_vertices" > $OUT/tests.txt 2>&1; echo "tests rc=$?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt
for who in new old; do
  if [ $who = new ]; then cd $WT; else cd $ROOT; fi
  echo "$who: $(timeout 40 python -m tests.phase_timing --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> $OUT/phase.txt
done
cat $OUT/phase.txt
cd $WT && timeout 45 python $D/gv_profile.py --label new --scale 20 --rounds 10 --out $OUT > $OUT/profile-new.log 2>&1
head -3 $OUT/profile-new.log
cd $WT && timeout 75 python $D/gv_profile.py --label new22 --scale 22 --rounds 5 --out $OUT > $OUT/profile-new22.log 2>&1
head -3 $OUT/profile-new22.log
