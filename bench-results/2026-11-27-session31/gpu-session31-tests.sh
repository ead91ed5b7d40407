#!/usr/bin/env bash
# Session 31's device tests after the QA branches' merges: every device test group (all_test_groups), the files
# the branches changed or added tests to, on the GPU backend, a GPU replay of the bundled sample with every job
# killed by SIGKILL after its first checkpoint and resumed (its results against an uninterrupted run's), and the
# 1,000-event update (tests.phase_timing, R-MAT 20) in PHASE_PROCESSES fresh processes.
set -u
source .ci/gpu-lib.sh
gv_setup
git log --oneline -1 2>/dev/null | sed 's/^/copy .git names: /' | tee -a "$OUT/tests.txt"
GPU_TEST_LIMIT=${LIMIT:-330}
if [ "${GROUPS_ALL:-1}" = 1 ]; then all_test_groups; fi
run tests/test_api.py tests/test_replay_resume.py tests/test_parquet_connectors.py tests/test_results_layout.py \
    tests/test_replay_read_ahead.py tests/test_convert.py tests/test_produce_order.py
run tests/test_cli_errors.py tests/test_cli_mistakes.py tests/test_bench_runner.py tests/test_bench_algorithms.py \
    tests/test_kafka.py ${EXTRA_TESTS:-}
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
r() { timeout 120 python3 -m vinestream replay --backend gpu --structure graphvine --jobs pagerank,bfs,triangles \
        --batch-size 2000 --no-progress "$@"; }
r --out /tmp/ref > /tmp/ref.txt 2>&1; echo "reference rc=$?" | tee -a "$OUT/tests.txt"
r --out /tmp/kill --checkpoint-dir /tmp/ck --checkpoint-every-batches 3 > /tmp/k1.txt 2>&1 &
pid=$!
for i in $(seq 1 600); do [ -f /tmp/ck/LATEST ] && break; sleep 0.05; done
kill -9 $pid; wait $pid; echo "killed rc=$? (LATEST: $(cat /tmp/ck/LATEST 2>/dev/null))" | tee -a "$OUT/tests.txt"
r --out /tmp/kill --checkpoint-dir /tmp/ck --resume > /tmp/k2.txt 2>&1; echo "resumed rc=$?" | tee -a "$OUT/tests.txt"
python3 - <<'P' 2>&1 | tee -a "$OUT/tests.txt"
import numpy as np
from vinestream import read_results
a, b = read_results("/tmp/ref"), read_results("/tmp/kill")
cols = ["epoch", "batches", "events", "updated", "invalid", "vertices", "edges", "triangles", "bfs_reached"]
sa = a["summary"].select([c for c in cols if c in a["summary"].column_names]).to_pylist()
sb = b["summary"].select([c for c in cols if c in b["summary"].column_names]).to_pylist()
print("summary rows", len(sa), len(sb), "equal", sa == sb)
def rows(t, col):
    t = t.sort_by([("epoch", "ascending"), ("vertex", "ascending")])
    return np.asarray(t["epoch"]), np.asarray(t["vertex"]), np.asarray(t[col])
for job, col in (("bfs", "distance"), ("triangles", "triangles"), ("pagerank", "rank")):
    if job not in a or job not in b:
        print(job, "missing"); continue
    (ea, va, xa), (eb, vb, xb) = rows(a[job], col), rows(b[job], col)
    same_keys = np.array_equal(ea, eb) and np.array_equal(va, vb)
    diff = float(np.abs(xa - xb).max()) if same_keys and len(xa) else None
    print(job, "rows", len(xa), len(xb), "same epochs and vertices", same_keys, "largest difference", diff)
P
for i in $(seq 1 "${PHASE_PROCESSES:-4}"); do
  timeout 150 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine | tee -a "$OUT/phase.txt"
done
