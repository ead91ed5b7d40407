#!/bin/bash
# Session 21, call 12 (review mends): the shifts keep their row's gv_shift_row as one local (no copy into eight), and the
# 1e6-edge benches load their graph through .ci/gv_rmat_held_out.py -
# the 1e6-edge bench at R-MAT 22 (rows' side, one pass; whole state checked) and GraphVine's five device test groups.
# (The steps of call 11's script, which this call ran as they are.)
exec bash bench-results/2026-11-26-session21/gpu-session21i.sh "$@"
