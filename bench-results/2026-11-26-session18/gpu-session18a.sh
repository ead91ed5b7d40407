#!/bin/bash
# Session 18, call 1 (a fresh machine, no kernel cache carried): fresh replays that fill CuPy's kernel cache
# (brought back as $OUT/cupy_cache.tgz), where a fresh replay's window goes (.ci/gpu-replay-startup.py, with and
# without cProfile; the sampling profiler per thread), then two rounds of the starting code against this tree.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
for s in coo graphvine; do
  replay_once new $s 300; replay_line cold-new $s
  replay_once orig $s 300; replay_line cold-orig $s
done
tar czf "$OUT/cupy_cache.tgz" -C ~/.cupy .
log=.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do
  python3 .ci/gpu-replay-startup.py $log "$OUT/startup-$s.json" $s > "$OUT/startup-$s.txt" 2>&1
  PROFILE=1 python3 .ci/gpu-replay-startup.py $log "$OUT/startup-$s-prof.json" $s >> "$OUT/startup-$s.txt" 2>&1
  python3 .ci/gpu-sample-replay.py $s > "$OUT/sample-$s.txt" 2>&1
done
replay_sides 2 orig new
