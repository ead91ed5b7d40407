#!/bin/bash
# Device run 2, from this worktree's root, carried as .wt/gv4 inside /work/main's checkout:
#   cd .wt/gv4 && bash bench-results/2026-11-25-gv4/run2.sh
# GraphVine's GPU tests (fused == array program on every path; the structure contract's CuPy cases);
# big_bench.py at R-MAT 22 (the shift's state against the rows' side's, then every variant timed, per-kernel
# device times, device span against wall); the 1,000-event phase timing of this branch and of main's checkout,
# interleaved (the small path); big_bench also times queries against csr and memory after 50% churn; as time
# allows, bench structures graphvine,csr at R-MAT 22 (insert, delete, query, memory after
# churn, against csr).  Every step has its own limit.
WT=$(pwd); ROOT=$(cd ../.. && pwd); D=$WT/bench-results/2026-11-25-gv4; G=$WT/bench-results/2026-11-25-gv
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/gpu.txt
mkdir -p ~/.cupy && tar xzf $ROOT/.data/cupy_cache.tgz -C ~/.cupy 2>/dev/null
git -C $WT log --oneline -1 >> $OUT/gpu.txt
timeout 85 python -m pytest -q -x -p no:randomly tests/test_graphvine_fused_gpu.py tests/test_structure_contract.py \
  -k "graphvine or fused or graph_path" > $OUT/tests.txt 2>&1
echo "tests rc=$?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt; echo "t=$SECONDS"
timeout 90 python $D/big_bench.py --scale 22 --rounds 3 --variants rows,staged,shift,shift-warps,shift-tiny128,shift-big256,shift-big4096 \
  --out $OUT > $OUT/big22.txt 2>&1
echo "rc=$?" >> $OUT/big22.txt; tail -16 $OUT/big22.txt; echo "t=$SECONDS"
for who in new old; do
  if [ $who = new ]; then cd $WT; else cd $ROOT; fi
  echo "$who: $(timeout 25 python -m tests.phase_timing --backend gpu --scale 20 --structures graphvine 2>&1 | tail -1)" >> $OUT/phase.txt
done
cat $OUT/phase.txt; echo "t=$SECONDS"
left() { echo $((292 - SECONDS)); }
cd $WT && timeout $(left) python $G/bench22.py graphvine,csr $OUT/bench22.json > $OUT/bench22.txt 2>&1
echo "bench rc=$?" >> $OUT/bench22.txt; head -20 $OUT/bench22.txt; echo "t=$SECONDS"
