#!/usr/bin/env bash
# Session 33, call 5: the GPU replay killed by SIGKILL after its first checkpoint and resumed, with the harness
# that kills the replay process itself (call 4's killed `timeout`'s subshell; the replay ran on and the resume
# found its --out in use), after the layout fix (error_text in connectors/base.py).  Carry .data and .whl.
set -u
source .ci/gpu-lib.sh
gv_setup
replay_kill_resume graphvine
replay_kill_resume coo
