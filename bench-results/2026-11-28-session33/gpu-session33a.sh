#!/usr/bin/env bash
# Session 33, call 1: the slow first process of the 1,000-event update (.ci/gpu-first-process.py) in four fresh
# processes in a row (the first right after set-up), the last after 3 s of GPU spin; the CPU's governor and load.
set -u
source .ci/gpu-lib.sh
gv_setup
cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>&1 | sed 's/^/governor: /' | tee -a "$OUT/first.txt"
nproc | sed 's/^/cpus: /' | tee -a "$OUT/first.txt"; uptime | tee -a "$OUT/first.txt"
for i in 1 2 3; do
  timeout 150 python3 .ci/gpu-first-process.py | sed "s/^/process $i: /" | tee -a "$OUT/first.txt"
done
timeout 150 python3 .ci/gpu-first-process.py --spin 3 | sed "s/^/process 4 spin 3 s: /" | tee -a "$OUT/first.txt"
for i in 1 2; do
  timeout 150 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine | sed "s/^/phase_timing $i: /" | tee -a "$OUT/first.txt"
done
