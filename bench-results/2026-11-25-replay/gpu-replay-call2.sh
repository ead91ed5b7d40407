#!/usr/bin/env bash
# The replay helper's second device call (run from .wt/replay): device tests of what it changed (PageRank's
# push graphs and static residual, the small-graph transpose BFS uses, the warm-up and read-ahead); CLI replays
# of sx-mathoverflow (all three jobs, 1e4-event batches, --out; the second run of a fresh process, kernels in
# CuPy's cache) of orig (.wt/orig, the issue's starting code, stream.cli), main (the checkout root) and new (this
# worktree), each with its process's wall; fresh processes of new timed by parts with each change off in turn
# (and main), some with the same replay again in the process; one profiled; an in-process profile.
set -u
HERE=$PWD                       # .wt/replay
ROOT=$(cd ../.. && pwd)         # the checkout root (main)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
LOG=$ROOT/.data/sx-mathoverflow.events.parquet
[ -f "$ROOT/.data/cupy_cache.tgz" ] && mkdir -p ~/.cupy && tar xzf "$ROOT/.data/cupy_cache.tgz" -C ~/.cupy
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
(cd "$ROOT" && git log --oneline -1) >> "$OUT/gpu.txt"
TEST_LIMIT=${TEST_LIMIT:-110}
T0=$(date +%s)

( VINESTREAM_BACKEND=gpu timeout $TEST_LIMIT python3 -m pytest -q -p no:cacheprovider \
    tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_replay_warm_up.py > "$OUT/tests_pagerank.txt" 2>&1
  echo "rc=$?" >> "$OUT/tests_pagerank.txt" ) &
( VINESTREAM_BACKEND=gpu timeout $TEST_LIMIT python3 -m pytest -q -p no:cacheprovider \
    tests/test_bfs.py tests/test_bfs_repair.py > "$OUT/tests_bfs.txt" 2>&1
  echo "rc=$?" >> "$OUT/tests_bfs.txt" ) &
( timeout $TEST_LIMIT python3 -m pytest -q -p no:cacheprovider tests/test_replay_read_ahead.py tests/test_replay_warm_up.py \
    tests/test_parquet_connectors.py tests/test_pagerank_kernels.py tests/test_replay_resume.py > "$OUT/tests_cpu.txt" 2>&1
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
for side in new main orig new main; do timed $side coo; done
echo "cli done at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/timeline.txt"

# 4. fresh processes of new timed by parts (coo): everything on, then each change off, all off, main
st() {   # st NAME [ENV=VALUE ...]: one fresh process
  local name=$1; shift
  env "$@" timeout 45 python3 .ci/gpu-replay-startup.py "$LOG" "$OUT/startup-$name.json" ${STRUCT:-coo} 2>>"$OUT/startup_err.txt" \
    | head -1 | sed "s/^/$name /" | tee -a "$OUT/startup.txt"
}
st default INPROC=1
st noreadahead READ_AHEAD=0
st nowarmup WARM_UP=0
st libtranspose LIB_TRANSPOSE=1
st nograph PUSH_GRAPH=0 INPROC=1
st alloff READ_AHEAD=0 WARM_UP=0 LIB_TRANSPOSE=1 PUSH_GRAPH=0
(cd "$ROOT" && env INPROC=1 timeout 45 python3 "$HERE/.ci/gpu-replay-startup.py" "$LOG" "$OUT/startup-main.json" coo \
   2>>"$OUT/startup_err.txt" | head -1 | sed "s/^/main /" | tee -a "$OUT/startup.txt")
st default2
STRUCT=graphvine st graphvine
st profile PROFILE=1
echo "startup done at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/timeline.txt"

# 5. in-process: warm-up, timed, profiled (the apply thread's view, all threads on 3.12)
timeout 60 python3 .ci/gpu-profile-replay.py "$LOG" "$OUT" coo 2>&1 | tail -3 | tee -a "$OUT/timeline.txt"
echo "all done at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/timeline.txt"
