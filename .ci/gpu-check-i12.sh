#!/usr/bin/env bash
# GPU checks of GraphVine size classes, tri_support and concurrent phases (run on the lent device)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export PYTHONUNBUFFERED=1 VINESTREAM_BACKEND=gpu
OUT=${OUT:-/tmp/out}
timeout 280 python3 -m pytest -q -p no:cacheprovider -x tests/test_graphvine_fused_gpu.py tests/test_graphvine.py tests/test_concurrent_phases_gpu.py tests/test_triangles_fused_gpu.py tests/test_triangles.py tests/test_bfs_kernels.py 2>&1 | tail -n 25
timeout 150 python3 -m vinestream bench structures --backend gpu --structures graphvine,slabhash,csr --scales 20 --batch-sizes 1000,10000,1000000 --json $OUT/structures-i12.json > $OUT/structures-i12.txt 2>&1; tail -n 40 $OUT/structures-i12.txt
timeout 90 python3 - <<'PY' 2>&1 | tee $OUT/tri.txt
import time, cupy as cp
from vinestream.stream.bench.structures import rmat_edges
from vinestream.algorithms import triangle_kernels as tk
from vinestream.algorithms.triangles import count_static_fused, symmetric_keys
s, d = rmat_edges(cp, 20, 16, 0); n = 1 << 20
def t(f, r=5):
    f(); cp.cuda.Device().synchronize(); t0 = time.perf_counter()
    for _ in range(r): out = f()
    cp.cuda.Device().synchronize(); return (time.perf_counter() - t0) / r, out
for lanes in (1, 4, 8, 16, 32):
    sec, (_, i) = t(lambda: tk.count_static_oriented(cp, n, s, d, lanes))
    print(f"tri_support lanes={lanes}: {sec*1e3:.1f} ms  {i['edges']/sec:.3g} und. edges/s  {i['triangles']} triangles")
sec, (_, i) = t(lambda: count_static_fused(cp, n, symmetric_keys(cp, s, d)))
print(f"previous tri_static + symmetric sort: {sec*1e3:.1f} ms  {i['edges']/sec:.3g} edges/s  {i['triangles']} triangles")
PY
