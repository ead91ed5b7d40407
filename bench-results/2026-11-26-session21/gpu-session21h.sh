#!/bin/bash
# Session 21, call 10 (a form not kept: the shifts took 0.794 / 0.590 ms against 0.630 / 0.565, the contiguous runs'
# uncoalesced loads costing more than the row changes they saved; the session's README says what it was): the shifts visiting each entry in the table scan's last pass (gv_tile_table's visit: a thread's
# contiguous run, one row change a row) instead of a strided pass after one more barrier -
# the 1e6-edge bench at R-MAT 22 (rows' side, one pass; whole state
# checked), where the device idles (.ci/gpu-gv-host-timeline.py), and GraphVine's five device test groups.
# (The steps of call 5's script, which this call ran as they are.)
exec bash bench-results/2026-11-26-session21/gpu-session21d.sh "$@"
