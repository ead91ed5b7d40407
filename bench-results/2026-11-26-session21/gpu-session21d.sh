#!/bin/bash
# Session 21, call 5 (and call 6, with the scans strided and a block-width at a time: scan_columns by the same two
# kernels): the large batches' prefix sums by this module's kernels (scan_rows, scan_columns) instead of
# CuPy's cumsum, and gv_prep filling the flags - the 1e6-edge bench at R-MAT 22 (rows' side, one pass; whole state
# checked), where the device idles (.ci/gpu-gv-host-timeline.py), and GraphVine's five device test groups.
set -u
source .ci/gpu-lib.sh
gv_setup
onepass_bench "${VARIANTS:-rows,tiles}"
host_timeline
graphvine_tests "${LIMIT:-300}"
