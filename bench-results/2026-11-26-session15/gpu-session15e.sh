#!/bin/bash
# Session 15, call 7: fresh replays, five rounds: the starting code (.wt/orig), the session's start
# (.wt/base) and this tree, coo then graphvine, with this tree's timelines (replay_rounds).
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
replay_rounds 5
