#!/usr/bin/env bash
# The device check of a session's tree (carry .data and .whl): every device test group (gpu-lib.sh's
# all_test_groups) and TESTS (more pytest arguments, one run, e.g. the files a session changed) on the GPU backend,
# the GPU replay of the bundled sample killed by SIGKILL after its first checkpoint and resumed (its results against
# an uninterrupted run's), and the 1,000-event update (tests.phase_timing, R-MAT 20) in PHASE_PROCESSES fresh
# processes.  LIMIT: seconds per pytest run (default 330); GROUPS_ALL=0 skips the groups.  Results in $OUT.
set -u
source .ci/gpu-lib.sh
gv_setup
GPU_TEST_LIMIT=${LIMIT:-330}
if [ "${GROUPS_ALL:-1}" = 1 ]; then all_test_groups; fi
if [ -n "${TESTS:-}" ]; then run ${TESTS}; fi
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
replay_kill_resume graphvine
for i in $(seq 1 "${PHASE_PROCESSES:-2}"); do
  timeout 150 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine | tee -a "$OUT/phase.txt"
done
