#!/usr/bin/env bash
# Session 14: GraphVine at R-MAT 22 (`bench structures`, 1e3- and 1e6-edge batches, memory after 50% churn) with the
# pool's growth floor and buffers with room, against the session's start (.wt/base); coo beside it.
# Carry .data .whl .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup bench.txt
timeout 200 python3 -m vinestream bench structures --backend gpu --structures graphvine,coo --batch-sizes 1000,1000000 \
  --scales 22 --json "$OUT/structures22.json" > "$OUT/structures22.txt" 2>&1
(cd .wt/base && timeout 200 python3 -m vinestream bench structures --backend gpu --structures graphvine \
  --batch-sizes 1000,1000000 --scales 22 --json "$OUT/structures22-base.json") > "$OUT/structures22-base.txt" 2>&1
