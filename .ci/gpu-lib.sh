# Shared by the .ci/gpu-*.sh device scripts (source it after `set -u`, from the repository root):
# the machine's set-up, device test runs in parallel with their logs, and 1,000-event phase timings of
# two trees side by side.  $OUT is the folder that comes back from the device.
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
GPU_TEST_LIMIT=${GPU_TEST_LIMIT:-150}      # seconds per pytest run
GPU_TEST_LOGS=$(mktemp -d)

# gpu_setup [FILE]: CuPy's kernel cache from .data (when carried), kafka-python from .whl (when carried),
# the GPU's name into $OUT/FILE (default tests.txt)
gpu_setup() {
  [ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
  ls .whl/kafka*.whl > /dev/null 2>&1 && \
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/kafka*.whl .whl/crc32c*.whl 2>/dev/null
  export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/${1:-tests.txt}"
}

# graphvine_compile FILE: compile (or read from CuPy's cache) and load GraphVine's kernel module in a process of its
# own, its time appended to $OUT/FILE: the first process after a kernel change pays the compile, not a timed run
graphvine_compile() {
  PYTHONPATH=$PWD:${PYTHONPATH:-} python3 - <<'P' 2>&1 | tail -3 | tee -a "$OUT/$1"
import time, cupy as cp
from vinestream.structures import graphvine_kernels as gk
t = time.time(); gk.preload(cp, ["gv_insert_shift", "gv_delete_shift", "gv_tile_keys", "gv_rank"])
print("module compiled and loaded in", round(time.time() - t, 1), "s")
P
}

# run PYTEST-ARGS...: one pytest run on the GPU, in the background (tests_done waits for them all)
run() {
  ( VINESTREAM_BACKEND=gpu timeout "$GPU_TEST_LIMIT" python3 -m pytest -q -p no:cacheprovider "$@" \
      > "$GPU_TEST_LOGS/$(echo "$*" | tr -c "a-zA-Z0-9_" _ | cut -c1-80).log" 2>&1
    echo "rc=$? $*" >> "$GPU_TEST_LOGS/rc" ) &
}

# tests_done [FILE]: wait for the runs; their exit codes and the tails of their logs into $OUT/FILE
tests_done() {
  wait
  sort "$GPU_TEST_LOGS/rc" | tee -a "$OUT/${1:-tests.txt}"
  for l in "$GPU_TEST_LOGS"/*.log; do echo "===== $l"; tail -n 15 "$l"; done >> "$OUT/${1:-tests.txt}"
}

# phase_timing STRUCTURES LIMIT SIDE...: tests.phase_timing on R-MAT 20 for each SIDE in turn, "base" the
# tree in .wt/base, "new" this one, each line prefixed by its side, into $OUT/phase.txt; PHASE_ARGS: more options
phase_timing() {
  local structures=$1 limit=$2 side dir
  shift 2
  for side in "$@"; do
    dir=$PWD; [ "$side" = base ] && dir=$PWD/.wt/base
    (cd "$dir" && timeout "$limit" python3 -m tests.phase_timing --backend gpu --scale 20 --structures "$structures" \
       ${PHASE_ARGS:-}) | sed "s/^/$side /" | tee -a "$OUT/phase.txt"
  done
}

# replay_line SIDE STRUCTURE: the figures of the last replay report (/tmp/replay.txt) as one line of $OUT/replay.txt
replay_line() {
  echo "$1 $2 $(grep -E 'events / s|build ms|resolve ms|vertices ms|csr ms|insert ms|pagerank ms|bfs ms|triangles ms|wall seconds' \
    /tmp/replay.txt | tr -s ' ' | tr '\n' ';')" | tee -a "$OUT/replay.txt"
}

# replay_once SIDE STRUCTURE LIMIT: one fresh-process CLI replay of the sx-mathoverflow log (.data), all three
# jobs, 1e4-event batches, --out; SIDE "orig" the issue's starting code in .wt/orig, else this tree; its figures
# and the whole process's wall time into /tmp/replay.txt (replay_line reads them)
replay_once() {
  local t0 log=$PWD/.data/sx-mathoverflow.events.parquet
  t0=$(date +%s%N)
  if [ "$1" = orig ]; then
    (cd .wt/orig && rm -rf /tmp/r-$2-orig && timeout $3 python3 -m stream.cli replay "$log" --backend gpu --structure $2 \
       --jobs pagerank,bfs,triangles --bfs-source 1 --batch-size 10000 --out /tmp/r-$2-orig --no-progress) > /tmp/replay.txt 2>&1
  else
    timeout $3 python3 -m vinestream replay "$log" --backend gpu --structure $2 --jobs pagerank,bfs,triangles \
       --bfs-source 1 --batch-size 10000 --out /tmp/r-$2-new --overwrite --no-progress > /tmp/replay.txt 2>&1
  fi
  echo "process wall seconds $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> /tmp/replay.txt
}

# tree_once SIDE STRUCTURE: replay_once for the tree in .wt/SIDE (an earlier commit's checkout), into /tmp/replay.txt
tree_once() {
  local t0 log=$PWD/.data/sx-mathoverflow.events.parquet
  t0=$(date +%s%N)
  (cd .wt/$1 && timeout 60 python3 -m vinestream replay "$log" --backend gpu --structure $2 --jobs pagerank,bfs,triangles \
     --bfs-source 1 --batch-size 10000 --out /tmp/r-$2-$1 --overwrite --no-progress) > /tmp/replay.txt 2>&1
  echo "process wall seconds $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> /tmp/replay.txt
}

# base_once STRUCTURE: tree_once for .wt/base (a session's start)
base_once() {
  tree_once base "$1"
}

# all_test_groups: every device test file in parallel groups (run), the structure contract in three parts
all_test_groups() {
  run tests/test_pagerank_fused_gpu.py tests/test_pagerank.py tests/test_pagerank_kernels.py
  run tests/test_bfs.py tests/test_bfs_repair.py tests/test_bfs_in_edge_log.py tests/test_bfs_kernels.py tests/test_transpose_kernels.py tests/test_bench_algorithms.py \
      tests/test_bfs_small_batches.py tests/test_bfs_gone_log.py tests/test_bfs_host_repair.py
  run -rx tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_coo_fused_gpu.py tests/test_sync_budget.py tests/test_work_counters.py tests/test_replay_warm_up.py tests/test_replay_read_ahead.py tests/test_vertex_table.py tests/test_metrics.py \
      tests/test_backend_context.py tests/test_backend_lazy_imports.py tests/test_results_layout.py tests/test_job_outputs.py \
      tests/test_fill_at.py tests/test_output_kernels.py
  run tests/test_graphvine_fused_gpu.py tests/test_graphvine_combined.py tests/test_concurrent_phases_gpu.py tests/test_graphvine.py
  run tests/test_triangles_fused_gpu.py tests/test_triangles.py tests/test_triangle_kernels.py tests/test_triangles_delta.py tests/test_triangles_recount.py
  run tests/test_pipeline_jobs.py tests/test_kernels_compile.py tests/test_cli.py
  run tests/test_graphvine_kernels_compile.py tests/test_faimgraph_kernels_compile.py tests/test_gpma_kernels_compile.py \
      tests/test_slabhash_kernels_compile.py tests/test_contiguous_kernels_compile.py
  run tests/test_hornet_fused_gpu.py tests/test_faimgraph_fused_gpu.py tests/test_gpma_fused_gpu.py tests/test_custinger_fused_gpu.py tests/test_slabhash_fused_gpu.py
  run tests/test_structure_contract.py -k "cupy and (csr or coo or graphvine or slabhash)"
  run tests/test_structure_contract.py -k "cupy and (hornet or gpma or faimgraph or diffcsr)"
  run tests/test_structure_contract.py -k "cupy and (custinger or aimgraph or ourograph)"
  run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
}

# graphvine_test_groups: GraphVine's device tests, the structure contract's GraphVine cases and the pipeline contract's GPU
# part, in five parallel groups (run)
graphvine_test_groups() {
  run tests/test_graphvine_fused_gpu.py
  run tests/test_graphvine_combined.py tests/test_concurrent_phases_gpu.py tests/test_graphvine.py
  run tests/test_structure_contract.py -k "cupy and graphvine"
  run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
  run tests/test_graphvine_kernels_compile.py tests/test_sync_budget.py tests/test_graphvine_paper_bench.py
}

# replay_sides ROUNDS SIDE...: ROUNDS rounds of fresh replays, coo then graphvine, each SIDE in turn ("orig" the
# issue's starting code in .wt/orig, "new" this tree, any other name the checkout .wt/NAME), into $OUT/replay.txt,
# with this tree's timelines (.ci/gpu-replay-timeline.py) into $OUT/timeline.txt ($TIMELINES=all: every side's)
replay_sides() {
  local rounds=$1 r s side t0 t1
  shift
  nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/replay.txt"
  for r in $(seq 1 "$rounds"); do
    for s in coo graphvine; do
      for side in "$@"; do
        t0=$(date +%s.%N)
        case $side in
          orig) replay_once orig $s 90 ;;
          new) replay_once new $s 60 ;;
          *) tree_once $side $s ;;
        esac
        t1=$(date +%s.%N)
        replay_line $side $s
        if [ "$side" = new ] || [ "${TIMELINES:-}" = all ]; then
          echo "== $side $s round $r" >> "$OUT/timeline.txt"
          python3 .ci/gpu-replay-timeline.py /tmp/r-$s-$side $t0 $t1 >> "$OUT/timeline.txt" 2>&1
        fi
      done
    done
  done
}

# replay_rounds ROUNDS: replay_sides for the issue's starting code, the session's start (.wt/base) and this tree
replay_rounds() {
  replay_sides "$1" orig base new
}

# gv_setup: gpu_setup, this tree first on PYTHONPATH, GraphVine's kernel module compiled in a process of its own
gv_setup() {
  gpu_setup tests.txt
  export PYTHONPATH=$PWD:/tmp/site
  graphvine_compile tests.txt
}

# bench_sides ROUNDS SIDES STRUCTURES SCALES BATCHES JSON_DIR FILE: `vinestream bench structures` for each of SIDES
# (space-separated; "new" is this tree, "LABEL:DIR" or "DIR" the checkout .wt/DIR, run as LABEL or DIR) in turn,
# ROUNDS times: each run's JSON as JSON_DIR/LABEL-ROUND.json, its table appended to $OUT/FILE, its rc to tests.txt, its
# graphvine rows printed.  Round r starts at side r (the order rotates): the run that opens a round tended to be the
# slower one whatever its code (bench-results/2026-11-27-session25, calls 9 and 10), so that with ROUNDS a multiple
# of the sides' count each side opens as many rounds
bench_sides() {
  local r i spec label dir
  local -a sides
  read -r -a sides <<< "$2"
  for r in $(seq 1 "$1"); do
    for i in $(seq 0 $((${#sides[@]} - 1))); do
      spec=${sides[$(( (i + r - 1) % ${#sides[@]} ))]}
      label=${spec%%:*}; dir=$PWD; [ "$spec" != new ] && dir=$PWD/.wt/${spec#*:}
      (cd "$dir" && PYTHONPATH=$dir:/tmp/site timeout 240 python3 -m vinestream bench structures --backend gpu \
         --structures "$3" --scales "$4" --batch-sizes "$5" --json "$6/$label-$r.json" > /tmp/structures.txt 2>&1)
      echo "structures $label-$r rc=$?" | tee -a "$OUT/tests.txt"
      { echo "== $label-$r"; cat /tmp/structures.txt; } >> "$OUT/$7"
      grep -E "graphvine" /tmp/structures.txt | head -4
    done
  done
}

# structures_sides ROUNDS START STRUCTURES JSON_DIR: bench_sides at R-MAT 22 (1,000 and 1e6 edges) for this tree
# ("new") and the checkout .wt/START ("start"), into $OUT/structures.txt
structures_sides() {
  bench_sides "$1" "new start:$2" "$3" 22 1000,1000000 "$4" structures.txt
}

# merge_json DIR FILE: the JSON files DIR/*-*.json together as $OUT/FILE ({"NAME": ...}), when there are any
merge_json() {
  python3 - "$1" "$OUT/$2" <<'P'
import glob, json, os, sys
got = {os.path.basename(p)[:-5]: json.load(open(p)) for p in sorted(glob.glob(sys.argv[1] + "/*-*.json"))}
if got:
    json.dump(got, open(sys.argv[2], "w"))
P
}

# onepass_bench VARIANTS: .ci/gpu-gv-onepass.py at R-MAT 22, 1e6-edge batches, 5 rounds (the one pass's whole state
# checked against the rows' side) into $OUT/bench22.txt and $OUT/big-22.json; its rc into tests.txt, its checks,
# registers and figures printed
onepass_bench() {
  timeout 300 python3 .ci/gpu-gv-onepass.py --scale 22 --big 1000000 --rounds 5 --variants "$1" \
    --out "$OUT" > "$OUT/bench22.txt" 2>&1
  echo "bench rc=$?" | tee -a "$OUT/tests.txt"
  grep -E "checks|registers" "$OUT/bench22.txt"; tail -n 7 "$OUT/bench22.txt"
}

# host_timeline: .ci/gpu-gv-host-timeline.py at R-MAT 22 (1e6-edge insert and delete) into $OUT/timeline.txt and
# timeline.json; its rc into tests.txt, its head printed
host_timeline() {
  timeout 200 python3 .ci/gpu-gv-host-timeline.py --scale 22 --big 1000000 --out "$OUT" > "$OUT/timeline.txt" 2>&1
  echo "timeline rc=$?" | tee -a "$OUT/tests.txt"
  head -40 "$OUT/timeline.txt"
}

# tests_by_choice CHOICE [LIMIT]: the device tests a session script's TESTS names - "gv": GraphVine's five groups
# (graphvine_tests, LIMIT seconds each, default 200), "all": every group (all_test_groups, default 300; their counts
# printed), empty: none
tests_by_choice() {
  case "$1" in
    gv) graphvine_tests "${2:-200}" ;;
    all) GPU_TEST_LIMIT=${2:-300}; all_test_groups; tests_done tests.txt
         grep -E "^rc=|passed|failed" "$OUT/tests.txt" ;;
  esac
}

# tree_timeline DIR NAME LINES [OPTIONS...]: .ci/gpu-gv-host-timeline.py at R-MAT 22 (1e6-edge calls, five rounds, the
# last reported) for the checkout DIR ("." this tree) with OPTIONS, into $OUT/timeline-NAME.txt; its rc into tests.txt,
# its lines matching the regular expression LINES printed
tree_timeline() {
  local dir=$1 name=$2 lines=$3
  shift 3
  (cd "$dir" && PYTHONPATH=$PWD:/tmp/site timeout 150 python3 "$OLDPWD/.ci/gpu-gv-host-timeline.py" --scale 22 \
     --big 1000000 --rounds 5 "$@" --out /tmp > "$OUT/timeline-$name.txt" 2>&1)
  echo "timeline-$name rc=$?" | tee -a "$OUT/tests.txt"
  grep -E "$lines" "$OUT/timeline-$name.txt" | head -16
}

# graphvine_tests LIMIT: GraphVine's five device test groups (graphvine_test_groups), LIMIT seconds each, waited for;
# their exit codes and counts printed
graphvine_tests() {
  GPU_TEST_LIMIT=$1
  graphvine_test_groups
  tests_done tests.txt
  grep -E "^rc=|passed|failed" "$OUT/tests.txt"
}

# replay_kill_resume STRUCTURE: a GPU replay of the bundled sample with every job, and the same killed by SIGKILL after
# its first checkpoint and resumed; the results of the two compared (summary rows, each job's outputs) into tests.txt
replay_kill_resume() {
  local structure=$1
  rm -rf /tmp/ref /tmp/kill /tmp/ck                # a second call starts from nothing, as the first
  echo "== kill/resume $structure" | tee -a "$OUT/tests.txt"
  r() { timeout 120 python3 -m vinestream replay --backend gpu --structure "$structure" --jobs pagerank,bfs,triangles \
          --batch-size 2000 --no-progress "$@"; }
  r --out /tmp/ref > /tmp/ref.txt 2>&1; echo "reference rc=$?" | tee -a "$OUT/tests.txt"
  # the replay itself in the background (not `r`, a function: $! would be its subshell, and a SIGKILL to that or to
  # `timeout` leaves the Python process running on to the end, so the resume found a run finished or in use:
  # session 33, call 4, "--out /tmp/kill is in use by another vinestream run")
  python3 -m vinestream replay --backend gpu --structure "$structure" --jobs pagerank,bfs,triangles --batch-size 2000 \
    --no-progress --out /tmp/kill --checkpoint-dir /tmp/ck --checkpoint-every-batches 3 > /tmp/k1.txt 2>&1 &
  pid=$!
  for i in $(seq 1 600); do [ -f /tmp/ck/LATEST ] && break; sleep 0.05; done
  kill -9 $pid; wait $pid; echo "killed rc=$? (LATEST: $(cat /tmp/ck/LATEST 2>/dev/null))" | tee -a "$OUT/tests.txt"
  pgrep -f "vinestream replay.*/tmp/ck" > /dev/null && echo "a replay process outlived the kill" | tee -a "$OUT/tests.txt"
  ls /tmp/ck | tr '\n' ' ' | sed 's/^/checkpoints left by the killed run: /' | tee -a "$OUT/tests.txt"; echo >> "$OUT/tests.txt"
  r --out /tmp/kill --checkpoint-dir /tmp/ck --resume > /tmp/k2.txt 2>&1; echo "resumed rc=$?" | tee -a "$OUT/tests.txt"
  python3 - <<'P' 2>&1 | tee -a "$OUT/tests.txt"
import numpy as np
from vinestream import read_results
a, b = read_results("/tmp/ref"), read_results("/tmp/kill")
cols = ["epoch", "batches", "events", "updated", "invalid", "vertices", "edges", "triangles", "bfs_reached"]
sa = a["summary"].select([c for c in cols if c in a["summary"].column_names]).to_pylist()
sb = b["summary"].select([c for c in cols if c in b["summary"].column_names]).to_pylist()
print("summary rows", len(sa), len(sb), "equal", sa == sb)
def rows(t, col):
    t = t.sort_by([("epoch", "ascending"), ("vertex", "ascending")])
    return np.asarray(t["epoch"]), np.asarray(t["vertex"]), np.asarray(t[col])
for job, col in (("bfs", "distance"), ("triangles", "triangles"), ("pagerank", "rank")):
    if job not in a or job not in b:
        print(job, "missing"); continue
    (ea, va, xa), (eb, vb, xb) = rows(a[job], col), rows(b[job], col)
    same_keys = np.array_equal(ea, eb) and np.array_equal(va, vb)
    diff = float(np.abs(xa - xb).max()) if same_keys and len(xa) else None
    print(job, "rows", len(xa), len(xb), "same epochs and vertices", same_keys, "largest difference", diff)
P
}
