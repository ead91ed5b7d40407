#!/bin/bash
# Session 21, call 7 (a form not kept: gv_insert_new_keys took 0.128 ms against gv_insert_scatter's 0.135, too little for a
# second kernel; the tree it ran on is in the session's README): the one pass's new keys by gv_insert_new_keys (each row's gv_shift_row and the walked blocks' entry
# bases, instead of gv_insert_scatter's plan rows, walk table and chunk searches) -
# the 1e6-edge bench at R-MAT 22 (rows' side, one pass; whole state
# checked), where the device idles (.ci/gpu-gv-host-timeline.py), and GraphVine's five device test groups.
# (The steps of call 5's script, which this call ran as they are.)
exec bash bench-results/2026-11-26-session21/gpu-session21d.sh "$@"
