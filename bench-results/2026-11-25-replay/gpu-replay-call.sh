#!/usr/bin/env bash
# The replay helper's device call (run from .wt/replay): device tests of what it changed, the first-call costs
# of a fresh CuPy process, CLI replays of sx-mathoverflow (all three jobs, 1e4-event batches, --out; the second
# run of a fresh process, kernels in CuPy's cache) of orig (.wt/orig, the issue's starting code, stream.cli),
# main (the checkout root: this session's main) and new (this worktree), with each process's wall; a fresh
# process's replay timed by parts (read-ahead and push graphs on / off, one profiled); an in-process profile.
set -u
HERE=$PWD                       # .wt/replay
ROOT=$(cd ../.. && pwd)         # the checkout root (main)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
LOG=$ROOT/.data/sx-mathoverflow.events.parquet
[ -f "$ROOT/.data/cupy_cache.tgz" ] && mkdir -p ~/.cupy && tar xzf "$ROOT/.data/cupy_cache.tgz" -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
nproc >> "$OUT/gpu.txt"
TEST_LIMIT=${TEST_LIMIT:-120}
T0=$(date +%s)

# 1. a fresh process's first calls (before anything else touches the cache: elementwise kernels may compile)
timeout 60 python3 .ci/gpu-first-calls.py > "$OUT/first_calls.json" 2>&1

# 2. device tests (background) while the first runs of each tree fill CuPy's kernel cache
( VINESTREAM_BACKEND=gpu timeout $TEST_LIMIT python3 -m pytest -q -p no:cacheprovider -x \
    tests/test_pagerank_fused_gpu.py tests/test_pagerank.py > "$OUT/tests_pagerank.txt" 2>&1
  echo "rc=$?" >> "$OUT/tests_pagerank.txt" ) &
( timeout $TEST_LIMIT python3 -m pytest -q -p no:cacheprovider -x tests/test_replay_read_ahead.py \
    tests/test_parquet_connectors.py tests/test_pagerank_kernels.py > "$OUT/tests_cpu.txt" 2>&1
  echo "rc=$?" >> "$OUT/tests_cpu.txt" ) &
cli() {   # cli SIDE STRUCTURE LIMIT: one CLI replay; its report into /tmp/replay-SIDE-STRUCTURE.txt
  local side=$1 s=$2 t=$3
  case $side in
    orig) (cd "$ROOT/.wt/orig" && rm -rf /tmp/r-$s-orig && timeout $t python3 -m stream.cli replay "$LOG" --backend gpu \
            --structure $s --jobs pagerank,bfs,triangles --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-orig \
            --no-progress) ;;
    main) (cd "$ROOT" && timeout $t python3 -m vinestream replay "$LOG" --backend gpu --structure $s \
            --jobs pagerank,bfs,triangles --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-main --overwrite --no-progress) ;;
    new)  (cd "$HERE" && timeout $t python3 -m vinestream replay "$LOG" --backend gpu --structure $s \
            --jobs pagerank,bfs,triangles --bfs-source 1 --batch-size 10000 --out /tmp/r-$s-new --overwrite --no-progress) ;;
  esac > /tmp/replay-$side-$s.txt 2>&1
}
for s in coo graphvine; do for side in orig main new; do cli $side $s 170 & done; done
wait
echo "warm-up and tests done at $(( $(date +%s) - T0 )) s" | tee "$OUT/timeline.txt"
tail -3 "$OUT"/tests_*.txt

# 3. timed CLI replays, each the second run of a fresh process; the process's wall from the shell
timed() {
  local side=$1 s=$2 a b
  a=$(date +%s.%N); cli $side $s 60; b=$(date +%s.%N)
  echo "$side $s process_wall $(awk "BEGIN{printf \"%.3f\", $b - $a}") $(grep -E 'wall seconds|events / s|resolve ms|pagerank ms|bfs ms|triangles ms|insert ms' \
      /tmp/replay-$side-$s.txt | tr -s ' ' | tr '\n' ';')" | tee -a "$OUT/replay.txt"
  tail -2 /tmp/replay-$side-$s.txt >> "$OUT/replay_log.txt"
}
for s in coo graphvine; do for side in orig main new; do timed $side $s; done; done
for side in new main orig; do timed $side coo; done
echo "cli done at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/timeline.txt"

# 4. fresh processes timed by parts (new, coo): default, read-ahead off, push graphs off; one profiled
timeout 40 python3 .ci/gpu-replay-startup.py "$LOG" "$OUT/startup-default.json" coo | tee -a "$OUT/startup.txt"
READ_AHEAD=0 timeout 40 python3 .ci/gpu-replay-startup.py "$LOG" "$OUT/startup-noreadahead.json" coo | tee -a "$OUT/startup.txt"
PUSH_GRAPH=0 timeout 40 python3 .ci/gpu-replay-startup.py "$LOG" "$OUT/startup-nograph.json" coo | tee -a "$OUT/startup.txt"
(cd "$ROOT" && timeout 40 python3 "$HERE/.ci/gpu-replay-startup.py" "$LOG" "$OUT/startup-main.json" coo) | tee -a "$OUT/startup.txt"
PROFILE=1 timeout 60 python3 .ci/gpu-replay-startup.py "$LOG" "$OUT/startup-profile.json" coo | tail -2 | tee -a "$OUT/startup.txt"
echo "startup done at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/timeline.txt"

# 5. in-process: warm-up, timed, profiled (the apply thread's view, all threads on 3.12)
timeout 60 python3 .ci/gpu-profile-replay.py "$LOG" "$OUT" coo 2>&1 | tail -3 | tee -a "$OUT/timeline.txt"
echo "all done at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/timeline.txt"
