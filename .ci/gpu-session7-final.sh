#!/usr/bin/env bash
# Session 7, closing GPU call (about 6-7 minutes): device tests of every path changed this session (merged
# branches included), 1,000-event batches base (.wt/base = 6e303ba, the session's start) / new, `bench
# algorithms` on R-MAT 20, the incremental BFS profile on R-MAT 22, and CLI replays of sx-mathoverflow of the
# issue's starting code (.wt/orig = 2633564, whose CLI is stream.cli) and of this tree.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/kafka*.whl .whl/crc32c*.whl 2>/dev/null
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/tests.txt"
logs=$(mktemp -d)
run() { ( VINESTREAM_BACKEND=gpu timeout 170 python3 -m pytest -q -p no:cacheprovider "$@" > "$logs/$(echo "$*" | tr -c "a-zA-Z0-9_" _ | cut -c1-80).log" 2>&1
          echo "rc=$? $*" >> "$logs/rc" ) & }
run tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_concurrent_phases_gpu.py
run tests/test_bfs.py tests/test_bfs_repair.py tests/test_bfs_in_edge_log.py tests/test_bfs_kernels.py tests/test_triangles_fused_gpu.py tests/test_triangles.py
run tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_coo_fused_gpu.py tests/test_sync_budget.py tests/test_work_counters.py
run tests/test_pipeline_contract.py -x
run tests/test_pipeline_jobs.py tests/test_graphvine_fused_gpu.py tests/test_structure_contract.py -k "cupy or gpu or jobs or fused"
wait
sort "$logs/rc" | tee -a "$OUT/tests.txt"
for l in "$logs"/*.log; do echo "===== $l"; tail -n 12 "$l"; done >> "$OUT/tests.txt"
for side in base new base new; do
  dir=$PWD; [ $side = base ] && dir=$PWD/.wt/base
  (cd "$dir" && timeout 60 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine) | sed "s/^/$side /" | tee -a "$OUT/phase.txt"
done
BENCH='import json, sys, cupy as cp
from vinestream.stream.bench.algorithms import bench_algorithms, format_table
r = bench_algorithms(cp, scales=(20,), fractions=(1e-4, 1e-3, 1e-2), repeats=3, batches=3, peers=False)
json.dump(r, open(sys.argv[1], "w"), indent=1); print(format_table(r))'
timeout 100 python3 -c "$BENCH" "$OUT/algorithms.json" > "$OUT/algorithms.txt" 2>&1; echo "rc=$?" >> "$OUT/algorithms.txt"
SCALE=22 timeout 100 python3 .ci/gpu-profile-bfs.py /tmp/bfs22.txt 2>&1 | head -1 | tee -a "$OUT/algorithms.txt"
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  for side in orig new; do
    for t in 150 40; do       # the second run: kernels compiled (CuPy's cache) by the first
      if [ $side = orig ]; then
        (cd .wt/orig && rm -rf /tmp/r-$s-orig && timeout $t python3 -m stream.cli replay "$log" --backend gpu --structure $s \
           --jobs pagerank,bfs,triangles --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-orig --no-progress) > /tmp/replay.txt 2>&1
      else
        timeout $t python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
           --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-new --overwrite --no-progress > /tmp/replay.txt 2>&1
      fi
    done
    echo "$side $s $(grep -E 'events / s|resolve ms|vertices ms|csr ms|insert ms|pagerank ms|bfs ms|triangles ms|wall seconds' /tmp/replay.txt | tr -s ' ' | tr '\n' ';')" | tee -a "$OUT/replay.txt"
    tail -2 /tmp/replay.txt >> "$OUT/replay_log.txt"
  done
done
