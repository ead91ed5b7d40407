#!/usr/bin/env bash
# Session 14, closing replays: fresh CLI replays of the starting code, the session's start and this tree at the closing
# code, five rounds (each line with its `build ms`). Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup replay-gpu.txt
replay_rounds 5
