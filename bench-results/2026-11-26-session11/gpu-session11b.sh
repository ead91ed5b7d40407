#!/usr/bin/env bash
# Session 11, second GPU call: CuPy's kernel cache refreshed (one replay per structure compiles what changed
# since .data/cupy_cache.tgz was made; the cache comes back as $OUT/cupy_cache.tgz), then a warm replay's
# threads under cProfile per structure, then fresh-process replays, orig and new alternating. Carry .data
# .wt/orig .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup replay.txt
log=$PWD/.data/sx-mathoverflow.events.parquet
for s in coo graphvine; do replay_once new $s 90; replay_once orig $s 90; done
tar czf "$OUT/cupy_cache.tgz" -C ~/.cupy . && echo "t=$SECONDS cache $(du -sh ~/.cupy)" >> "$OUT/replay.txt"
LABELS=warm,profiled timeout 100 python3 .ci/gpu-profile-replay.py "$log" "$OUT" coo graphvine > "$OUT/profile-log.txt" 2>&1
echo "t=$SECONDS" >> "$OUT/replay.txt"
for s in coo graphvine; do for side in orig new; do replay_once $side $s 60; replay_line $side $s; done; done
echo "t=$SECONDS" >> "$OUT/replay.txt"
