#!/usr/bin/env bash
# Session 7, second GPU call (about 5 minutes): device tests of the fused BFS repair's new cases, CLI
# replays of sx-mathoverflow (all three jobs, 1e4-event batches) of the issue's starting code (.wt/orig =
# 2633564), the session's start (.wt/base = 6e303ba) and this tree, a profiled replay, a profiled batch.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/kafka*.whl .whl/crc32c*.whl 2>/dev/null
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/tests.txt"
logs=$(mktemp -d)
run() { ( VINESTREAM_BACKEND=gpu timeout 120 python3 -m pytest -q -p no:cacheprovider "$@" > "$logs/$(echo "$*" | tr -c "a-zA-Z0-9_" _ | cut -c1-80).log" 2>&1
          echo "rc=$? $*" >> "$logs/rc" ) & }
run tests/test_bfs_repair.py tests/test_bfs.py
run tests/test_pipeline_jobs.py
wait
sort "$logs/rc" | tee -a "$OUT/tests.txt"
for l in "$logs"/*.log; do echo "===== $l"; tail -n 15 "$l"; done >> "$OUT/tests.txt"
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  for side in orig base new; do
    dir=$PWD; [ $side != new ] && dir=$PWD/.wt/$side
    for i in 1 2; do       # the second run: kernels compiled (CuPy's cache) by the first
      (cd "$dir" && timeout 40 python3 -m vinestream replay "$log" --backend gpu --structure $s --jobs pagerank,bfs,triangles \
         --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-$side --overwrite --no-progress) > /tmp/replay.txt 2>&1
    done
    echo "$side $s $(grep -E 'events / s|resolve ms|vertices ms|csr ms|insert ms|pagerank ms|bfs ms|triangles ms|wall seconds' /tmp/replay.txt | tr -s ' ' | tr '\n' ';')" | tee -a "$OUT/replay.txt"
  done
done
JOBS=pagerank,bfs,triangles timeout 60 python3 .ci/gpu-profile-replay.py "$log" /tmp/rp coo > "$OUT/replay_log.txt" 2>&1
cp /tmp/rp/replay-coo.txt "$OUT/replay-profile-coo.txt" 2>/dev/null
timeout 90 python3 .ci/gpu-profile-batch.py /tmp/pb > "$OUT/profile_batch.txt" 2>&1
cat /tmp/pb/profile-coo.txt /tmp/pb/profile-graphvine.txt > "$OUT/profile-batch.txt" 2>/dev/null
