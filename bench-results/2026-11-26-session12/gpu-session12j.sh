#!/usr/bin/env bash
# Session 12, closing replays: the starting code, the session's start and this tree (with the CLI's early
# CUDA context), fresh processes alternating, three rounds, with timelines. Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
replay_rounds 3
