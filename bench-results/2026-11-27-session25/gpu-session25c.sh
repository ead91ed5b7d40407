#!/bin/bash
# Session 25, call 5 (ran at 6589657, whose gv_plan_scan by warp shuffles and scan_columns' own tile size were reverted
# after it, and the timeline's --scan-tile / --column-scan-tile with them): GraphVine's five device test groups, then
# the host timeline of this tree's 1e6-edge calls (R-MAT 22, five rounds, the last reported) with the scans' tiles
# varied (VARIANTS: name=options, space-separated), and the start's (.wt/s24), each into $OUT/timeline-NAME.txt; the
# scans' and the plan's lines printed.
set -u
source .ci/gpu-lib.sh
gv_setup
[ -n "${TESTS-gv}" ] && graphvine_tests "${TEST_LIMIT:-200}"
lines="^(insert|delete)|gv_prep|gv_scan|gv_walk_keys|gv_plan_scan|gv_insert_plan|gv_delete_plan"
for v in ${VARIANTS:-base=}; do
  opts=${v#*=}
  # shellcheck disable=SC2086
  tree_timeline . "${v%%=*}" "$lines" ${opts//,/ }
done
tree_timeline .wt/s24 start "$lines"
