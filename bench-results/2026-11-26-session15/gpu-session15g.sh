#!/bin/bash
# Session 15, closing call: fresh replays, seven rounds (the starting code, the session's start, this tree),
# and `bench algorithms` on R-MAT 20 (the GPU's incremental jobs against their static forms and the peers).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
replay_rounds 7
timeout 150 python3 -m vinestream bench algorithms --backend gpu --scales 20 --json "$OUT/alg20.json" > "$OUT/alg20.txt" 2>&1
