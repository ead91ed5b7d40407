#!/bin/bash
# Session 16, closing figures: five rounds of fresh replays (the starting code, the session's start, this
# tree, with every side's first epochs), `bench algorithms` on R-MAT 20 (the GPU's incremental jobs against their
# static forms and the peers) and the 1,000-event batch's phases on R-MAT 20 (tests.phase_timing).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
FIRST_PHASES=1 TIMELINES=all replay_sides 5 orig base new
timeout 150 python3 -m vinestream bench algorithms --backend gpu --scales 20 --json "$OUT/alg20.json" > "$OUT/alg20.txt" 2>&1
phase_timing coo,graphvine 120 new
