#!/usr/bin/env bash
# Session 13 (ran at 883b7de; the parts since reverted): GraphVine's batches in parts on the device (its fused tests, the combined phases, the structure
# contract, the pipeline's), then fresh CLI replays: the starting code, the session's start and this tree, three
# rounds, with timelines. Carry .data .whl .wt/orig .wt/base.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_graphvine_fused_gpu.py tests/test_graphvine_combined.py
run tests/test_structure_contract.py -k "cupy and graphvine"
run tests/test_pipeline_contract.py -k "cupy or gpu or replay"
tests_done tests.txt
replay_rounds 3
