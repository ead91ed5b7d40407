"""Static triangle count on the GPU: checks, then times every variant of the hashed count against the
tri_support count (the last session's), on R-MAT 20 (and 22) as `vinestream bench` generates them.

python bench-results/2026-11-25-trigpu/tri_hashed_bench.py OUT.json
"""
import json
import sys
import time

import cupy as cp
import networkx as nx
import numpy as np

from vinestream.algorithms import triangle_kernels as tk
from vinestream.algorithms.triangles import Triangles, count_static, undirected_keys
from vinestream.stream.bench.algorithms import IdentityVertexMap, rmat_edges
from vinestream.structures.registry import build

out = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "checks": {}, "rmat": {}}
sync = cp.cuda.Device().synchronize


def timed(fn, repeats=7):
    fn()
    sync()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)) * 1e3, float(min(ts)) * 1e3


def nx_counts(s, d, n):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((int(a), int(b)) for a, b in zip(s, d) if a != b)
    t = nx.triangles(G)
    return np.array([t[v] for v in range(n)], dtype=np.int64)


VARIANTS = {
    "default": {},
    "shift2": {"table_shift": 2},
    "blocktask64": {"per_block_task": 64},
    "blocktask1024": {"per_block_task": 1024},
    "light16": {"light": 16},
    "light64": {"light": 64, "table_shift": 1},
    "bps4": {"blocks_per_sm": 4},
    "bps16": {"blocks_per_sm": 16},
    "slots10_fallback": {"block_slot_bits": 10},
}

# -- checks: random graphs and R-MAT 12 against networkx, R-MAT 16 against the array program -------
rng = np.random.default_rng(2025)
bad = 0
for trial in range(40):
    n = int(rng.integers(1, 70))
    s, d = np.nonzero(rng.random((n, n)) < rng.random() * 0.8)
    ref = nx_counts(s, d, n)
    for name, kw in VARIANTS.items():
        got, info = tk.count_static_hashed(cp, n, cp.asarray(s), cp.asarray(d), **kw)
        ok = np.array_equal(cp.asnumpy(got), ref) and info["triangles"] * 3 == int(ref.sum())
        bad += not ok
out["checks"]["random_vs_networkx_failures"] = bad
s, d = rmat_edges(np, 12, 16, 12)
ref = nx_counts(s, d, 1 << 12)
out["checks"]["rmat12_vs_networkx"] = {
    name: bool(np.array_equal(cp.asnumpy(tk.count_static_hashed(cp, 1 << 12, cp.asarray(s), cp.asarray(d), **kw)[0]), ref))
    for name, kw in VARIANTS.items()}
for scale in (16, 20):
    s, d = rmat_edges(cp, scale, 16, 7)
    n = 1 << scale
    ref = count_static(cp, n, undirected_keys(cp, s, d))[0] if scale == 16 else tk.count_static_oriented(cp, n, s, d)[0]
    res = {}
    for name, kw in VARIANTS.items():
        got, info = tk.count_static_hashed(cp, n, s, d, **kw)
        res[name] = bool(cp.array_equal(got, ref)) and info["triangles"] * 3 == int(ref.sum())
    out["checks"][f"rmat{scale}_vs_reference"] = res
print("checks", json.dumps(out["checks"]), flush=True)


# -- timing ------------------------------------------------------------------------------------------
def kernel_only(n, s, d, **kw):
    """The two hashed kernels alone: their launches recorded once, then replayed on reset outputs."""
    calls = []
    saved = tk.block_launcher
    tk.block_launcher = lambda xp, name, grid, block, args, shared: calls.append((name, grid, block, args, shared))
    try:
        tk.count_static_hashed(cp, n, s, d, **kw)
    finally:
        tk.block_launcher = saved
    counts, result, nxt = calls[0][3][-2], calls[0][3][-1], calls[0][3][-3].base

    def run(which=(0, 1)):
        counts.fill(0)
        result.fill(0)
        nxt.fill(0)
        for i in which:
            name, grid, block, args, shared = calls[i]
            saved(cp, name, grid, block, args, shared)
    return run


for scale in (20, 22):
    s, d = rmat_edges(cp, scale, 16, 1)
    n = 1 << scale
    res = {"directed_edges": int(s.shape[0])}
    _, info = tk.count_static_hashed(cp, n, s, d)
    res.update(info)
    res["baseline_support_ms"] = timed(lambda: tk.count_static_oriented(cp, n, s, d))
    for name, kw in VARIANTS.items():
        if scale == 22 and name not in ("default", "shift2"):
            continue
        whole = timed(lambda: tk.count_static_hashed(cp, n, s, d, **kw))
        run = kernel_only(n, s, d, **kw)
        both = timed(run)
        blk = timed(lambda: run((0,)))
        wrp = timed(lambda: run((1,)))
        res[name] = {"whole_ms": whole, "kernels_ms": both, "block_kernel_ms": blk, "warp_kernel_ms": wrp,
                     "edges_per_s": info["edges"] / whole[0] * 1e3}
        print(scale, name, res[name], flush=True)
    # the job as the bench runs it (CSR graph, run_static)
    graph = build("csr", cp, s, d, n)
    vm = IdentityVertexMap(cp)
    job = Triangles(cp)
    res["job_run_static_ms"] = timed(lambda: job.run_static(graph, vm))
    res["job_undirected_edges"] = int(job.work["undirected_edges"])
    res["job_edges_per_s"] = res["job_undirected_edges"] / res["job_run_static_ms"][0] * 1e3
    out["rmat"][scale] = res
    print(scale, {k: v for k, v in res.items() if not isinstance(v, dict)}, flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
