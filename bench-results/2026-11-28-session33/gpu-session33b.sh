#!/usr/bin/env bash
# Session 33, call 2 (typed into the device tool as one line; kept here as it ran): the CPU's layout, then
# tests.phase_timing (R-MAT 20, 100 batches of 1,000 events) in 12 fresh processes: unpinned, pinned to core 3,
# pinned to core 11, four times in turn.  Each line: pin, coo ms, graphvine ms.
set -u; export PYTHONPATH=$PWD:/tmp/site
(lscpu | grep -E "Model name|Socket|NUMA|Thread|MHz"; numactl --hardware 2>&1 | head -5) | tee $OUT/cpu.txt
for i in 1 2 3 4; do for pin in none 3 11; do
  if [ $pin = none ]; then c=""; else c="taskset -c $pin"; fi
  echo "pin=$pin $($c timeout 100 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine \
    --batches 100 | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["coo"]["update_wall_ms"], d["graphvine"]["update_wall_ms"])')" \
    | tee -a $OUT/pin.txt
done; done
