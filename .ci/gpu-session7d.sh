#!/usr/bin/env bash
# Session 7, fourth GPU call (about 4 minutes): device tests of the fused in-edge-log fold and the BFS
# paths, the profile of an incremental BFS update (R-MAT 20, 0.01%), CLI replays of sx-mathoverflow (orig =
# 2633564, the issue's start, with a package shim; new).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/kafka*.whl .whl/crc32c*.whl 2>/dev/null
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/tests.txt"
logs=$(mktemp -d)
run() { ( VINESTREAM_BACKEND=gpu timeout 150 python3 -m pytest -q -p no:cacheprovider "$@" > "$logs/$(echo "$*" | tr -c "a-zA-Z0-9_" _ | cut -c1-80).log" 2>&1
          echo "rc=$? $*" >> "$logs/rc" ) & }
run tests/test_bfs_in_edge_log.py tests/test_bfs_repair.py tests/test_bfs.py tests/test_bfs_kernels.py
run tests/test_sync_budget.py tests/test_pipeline_jobs.py
wait
sort "$logs/rc" | tee -a "$OUT/tests.txt"
for l in "$logs"/*.log; do echo "===== $l"; tail -n 15 "$l"; done >> "$OUT/tests.txt"
timeout 90 python3 .ci/gpu-profile-bfs.py "$OUT/bfs-profile.txt" 2>&1 | head -3
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo; do
  for side in orig new; do
    dir=$PWD; [ $side != new ] && dir=$PWD/.wt/$side
    for t in 150 40; do       # the second run: kernels compiled (CuPy's cache) by the first
      (cd "$dir" && timeout $t python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
         --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-$side --overwrite --no-progress) > /tmp/replay.txt 2>&1
    done
    echo "$side $s $(grep -E 'events / s|resolve ms|vertices ms|csr ms|insert ms|pagerank ms|bfs ms|triangles ms|wall seconds' /tmp/replay.txt | tr -s ' ' | tr '\n' ';')" | tee -a "$OUT/replay.txt"
    tail -3 /tmp/replay.txt >> "$OUT/replay_log.txt"
  done
done
