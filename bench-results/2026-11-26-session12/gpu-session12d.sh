#!/usr/bin/env bash
# Session 12, call 8: where a replay's apply thread spends its time now (cProfile, warm process), and
# graphvine's pool growth step (GROW_BY 1.25, the default, against 2) in fresh processes. Carry .data .whl.
set -u
source .ci/gpu-lib.sh
gpu_setup startup.txt
python3 .ci/gpu-profile-replay.py .data/sx-mathoverflow.events.parquet "$OUT" coo graphvine > "$OUT/profile-log.txt" 2>&1
for r in 1 2; do
  for g in 1.25 2; do GROW_BY=$g timeout 60 python3 .ci/gpu-startup.py graphvine 2>&1 | grep -E "window|resolved" | sed "s/^/GROW_BY=$g /" >> "$OUT/startup.txt"; done
  timeout 60 python3 .ci/gpu-startup.py coo 2>&1 | grep -E "window|resolved" >> "$OUT/startup.txt"
done
