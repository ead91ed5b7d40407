#!/usr/bin/env bash
# Session 14, closing measurements: GraphVine's growth script (the session's start and each change, warm, alternating),
# `bench structures` on R-MAT 22 (graphvine, coo: 1e3 / 1e6-edge batches, memory after churn), then fresh CLI
# replays of the starting code, the session's start and this tree, five rounds. Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup bench.txt
python3 .ci/gpu-graphvine-growth.py > "$OUT/growth.txt" 2>&1
timeout 200 python3 -m vinestream bench structures --backend gpu --structures graphvine,coo --batch-sizes 1000,1000000 \
  --scales 22 --json "$OUT/structures22.json" > "$OUT/structures22.txt" 2>&1
replay_rounds 5
