#!/usr/bin/env bash
# Session 6, first GPU call: the GPU paths not run since their commits (COO query kernel and lookup trim,
# index merges, the structure contract of every structure on CuPy, bench bfs-incremental's CLI entry),
# then where a 1,000-event coo batch's time goes, and COO queries against csr.
set -u
GPU_TEST_LIMIT=200; source .ci/gpu-lib.sh
gpu_setup tests_rc.txt
run tests/test_coo_fused_gpu.py tests/test_coo_csr.py tests/test_resolve_kernels_gpu.py tests/test_vertex_map_fused_gpu.py
run tests/test_bfs_in_edge_log.py tests/test_bfs_repair.py tests/test_sync_budget.py
run tests/test_pipeline_contract.py
for s in "csr and not diffcsr" coo graphvine diffcsr gpma custinger "aimgraph and not faimgraph" faimgraph ourograph slabhash hornet; do
  run tests/test_structure_contract.py -k "cupy and $s"
done
( timeout 200 python3 -m vinestream bench bfs-incremental --backend gpu --scales 18 --json "$OUT/bfs_incremental_cli.json" > "$GPU_TEST_LOGS/zz_bfs_cli.log" 2>&1; echo "rc=$? bench bfs-incremental" >> "$GPU_TEST_LOGS/rc" ) &
tests_done tests_rc.txt
for l in "$GPU_TEST_LOGS"/*.log; do echo "===== $l"; tail -n 25 "$l"; done > "$OUT/tests.log"
STRUCTURES=coo python3 .ci/gpu-profile-batch.py "$OUT/profile" > "$OUT/profile_batch.txt" 2>&1
python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo | tee "$OUT/phase.txt"
python3 - <<'PY' 2>&1 | tee "$OUT/structures.txt"
import json, os
from vinestream.stream.bench.structures import bench_structures
from vinestream.structures.backend import get_backend
r = bench_structures(get_backend("gpu"), structures=["csr", "coo"], scales=[20], batch_sizes=[1000, 1000000])
json.dump(r, open(os.environ["OUT"] + "/structures.json", "w"), indent=1, default=str)
PY
