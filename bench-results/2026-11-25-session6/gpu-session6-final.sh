#!/usr/bin/env bash
# Session 6, closing GPU call (about 8 minutes): tests of the paths changed since the last device
# runs, 1,000-event batches of the session's start (.wt/base = 5cf2165) and of main interleaved, structures
# at R-MAT 22 and 20, the algorithms bench (incremental against static), and CLI replays (all three jobs) of both trees.
set -u
GPU_TEST_LIMIT=140; source .ci/gpu-lib.sh
gpu_setup
run tests/test_coo_fused_gpu.py tests/test_pagerank_fused_gpu.py
run tests/test_pipeline_jobs.py
run tests/test_graphvine_fused_gpu.py tests/test_sync_budget.py
run tests/test_structure_contract.py -k "cupy and coo"
run tests/test_structure_contract.py -k "cupy and graphvine"
run tests/test_pagerank.py tests/test_concurrent_phases_gpu.py
run tests/test_graphvine.py
tests_done
phase_timing coo,graphvine 60 base new base new
BENCH='import json, sys, cupy as cp
from vinestream.stream.bench.algorithms import bench_algorithms, format_table
r = bench_algorithms(cp, scales=(20,), fractions=(1e-4, 1e-3, 1e-2), repeats=3, batches=3, peers=False)
json.dump(r, open(sys.argv[1], "w"), indent=1); print(format_table(r))'
timeout 70 python3 -c "$BENCH" "$OUT/algorithms.json" > "$OUT/algorithms.txt" 2>&1; echo "rc=$?" >> "$OUT/algorithms.txt"
timeout 80 python3 bench-results/2026-11-25-gv/bench22.py csr,coo,graphvine "$OUT/structures22.json" > "$OUT/structures.txt" 2>&1
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  for side in base new; do
    dir=$PWD; [ $side = base ] && dir=$PWD/.wt/base
    for i in 1 2; do       # the second run: kernels compiled (CuPy's cache) by the first
      (cd "$dir" && timeout 50 python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
         --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-$side --overwrite --no-progress) > /tmp/replay.txt 2>&1
    done
    echo "$side $s $(grep -E 'events / s|pagerank ms|bfs ms|triangles ms' /tmp/replay.txt | tr -s ' ' | tr '\n' ';')" | tee -a "$OUT/replay.txt"
  done
done
timeout 70 python3 - <<'PY' >> "$OUT/structures.txt" 2>&1
import json, os
from vinestream.stream.bench.structures import bench_structures, format_table
from vinestream.structures.backend import get_backend
r = bench_structures(get_backend("gpu"), structures=["csr", "coo", "graphvine"], batch_sizes=[1000, 1000000],
                     graphs=[{"kind": "rmat", "scale": 20, "edge_factor": 16}], repeat=3, real_graph=None)
print(format_table(r))
json.dump(r, open(os.environ["OUT"] + "/structures20.json", "w"), indent=1, default=str)
PY
