#!/usr/bin/env bash
# The session's closing GPU call: tests of every changed GPU path, small-batch phases, replay against the
# commit the issues measured (.wt/orig = 2633564), and the algorithm / structure benchmarks.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/kafka*.whl .whl/crc32c*.whl .whl/networkit*.whl 2>/dev/null
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/tests_rc.txt"
# 1. tests (files in parallel)
logs=$(mktemp -d)
for f in ${TEST_FILES:-tests/test_coo_fused_gpu.py tests/test_coo_csr.py tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_pagerank_fused_gpu.py tests/test_triangles_fused_gpu.py tests/test_structure_contract.py tests/test_pipeline_contract.py tests/test_sync_budget.py tests/test_graphvine_fused_gpu.py tests/test_graphvine.py tests/test_bfs_kernels.py tests/test_bfs.py tests/test_bfs_repair.py tests/test_bfs_in_edge_log.py tests/test_concurrent_phases_gpu.py tests/test_pipeline_jobs.py tests/test_pagerank.py tests/test_triangles.py}; do
  ( VINESTREAM_BACKEND=gpu timeout 300 python3 -m pytest -q -p no:cacheprovider "$f" > "$logs/$(basename "$f" .py).log" 2>&1
    echo "rc=$? $f" >> "$logs/rc" ) &
done
wait
sort "$logs/rc" | tee -a "$OUT/tests_rc.txt"
for l in "$logs"/*.log; do echo "===== $l"; tail -n 30 "$l"; done > "$OUT/tests.log"
# 2. small batches
python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine | tee "$OUT/phase.txt"
# 3. replay, this tree against 2633564, second run of each (kernels compiled by the first)
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  for side in orig new; do
    dir=$PWD; [ $side = orig ] && dir=$PWD/.wt/orig
    for i in 1 2; do
      (cd "$dir" && timeout 120 python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
         --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-$side --overwrite --no-progress) > /tmp/replay.txt 2>&1
    done
    echo "$side $s $(grep -E 'events / s' /tmp/replay.txt)" | tee -a "$OUT/replay.txt"; cat /tmp/replay.txt >> /tmp/replay_detail.txt
  done
done
cat /tmp/replay_detail.txt >> "$OUT/replay.txt"
