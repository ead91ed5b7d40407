#!/bin/bash
# Session 22, call 16: gv_prep finding each edge's row by a gallop from its block's first edge's row (one binary
# search a block instead of one a thread) - the 1e6-edge bench at R-MAT 22 (whole state checked; gv_prep against call
# 15's 0.042-0.043 ms on an H100) and GraphVine's five device test groups.
# Not kept: gv_prep took 0.051 ms against 0.042 (the block waits for its first thread's search): prep-gallop.patch in
# bench-results/2026-11-26-session22.
set -u
exec bash bench-results/2026-11-26-session22/gpu-session22l.sh "$@"
