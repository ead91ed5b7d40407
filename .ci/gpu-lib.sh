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
  echo "$1 $2 $(grep -E 'events / s|resolve ms|vertices ms|csr ms|insert ms|pagerank ms|bfs ms|triangles ms|wall seconds' \
    /tmp/replay.txt | tr -s ' ' | tr '\n' ';')" | tee -a "$OUT/replay.txt"
}
