#!/bin/bash
# Session 18, call 3: the corrections' race under load (the session's start in .wt/base against this tree: eight
# processes at once each, .ci/gpu-probe-corrections.py), every device test file at this tree, then three rounds of
# fresh replays, the starting code against this tree, with the per-round ratios by both windows.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
here=$PWD
for side in base new; do
  dir=$here; [ $side = base ] && dir=$here/.wt/base
  for i in 1 2 3 4 5 6 7 8; do
    (cd "$dir" && timeout 120 python3 "$here/.ci/gpu-probe-corrections.py" 25 > "/tmp/race-$side-$i.txt" 2>&1) &
  done
  wait
  echo "== $side: $(grep -h 'left its sum' /tmp/race-$side-*.txt | tr '\n' ' ')" >> "$OUT/race.txt"
  grep -h "^rep" /tmp/race-$side-*.txt | grep -v "^rep 0 " | head -20 >> "$OUT/race.txt"
done
GPU_TEST_LIMIT=400
run tests/test_compact.py tests/test_kernel_shared_reuse.py
all_test_groups
tests_done tests.txt
replay_sides 3 orig new
python3 .ci/gpu-replay-ratios.py "$OUT/replay.txt" > "$OUT/ratios.txt" 2>&1
tar czf "$OUT/logs.tgz" -C "$GPU_TEST_LOGS" . 2>/dev/null
