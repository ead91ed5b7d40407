#!/usr/bin/env bash
# Session 6, last GPU minutes: 1,000-event coo batches of the session's start (.wt/base = 5cf2165) and of
# main interleaved, after the last trims of the pipeline's host operations.
set -u
source .ci/gpu-lib.sh
gpu_setup phase.txt
PHASE_ARGS="--batches 20" phase_timing coo 45 new base new base
