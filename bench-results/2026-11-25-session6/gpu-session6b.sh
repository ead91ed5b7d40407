#!/usr/bin/env bash
# Session 6, second GPU call: COO's new kernels (query, one-block find, rows, vertex flags) against the array
# program on CuPy, the 1,000-event batch phases, and where a coo replay's time goes now.
set -u
source .ci/gpu-lib.sh
gpu_setup
VINESTREAM_BACKEND=gpu timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_coo_fused_gpu.py tests/test_coo_csr.py tests/test_pipeline_jobs.py -x 2>&1 | tail -n 15 >> "$OUT/tests.txt" &
python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo | tee "$OUT/phase.txt"
wait
python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo | tee -a "$OUT/phase.txt"
timeout 150 python3 .ci/gpu-profile-replay.py .data/sx-mathoverflow.events.parquet "$OUT" coo > "$OUT/replay_log.txt" 2>&1
