"""Run 2: checks, variants of the hashed count (warp batches over concatenated suffixes), and the time
of every launch of the default pipeline (event pairs; "between" = the CuPy operations in between).

PYTHONPATH=. python bench-results/2026-11-25-trigpu/tri_hashed_bench2.py OUT.json
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

out = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cupy": cp.__version__,
       "accelerators": [str(a) for a in cp._core.get_routine_accelerators()], "checks": {}, "rmat": {}}
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
    "grab4": {"grab": 4},
    "grab8": {"grab": 8},
    "grab32": {"grab": 32},
    "blocktask64": {"per_block_task": 64},
    "blocktask1024": {"per_block_task": 1024},
    "shift1": {"table_shift": 1},
    "light16": {"light": 16},
    "light64": {"light": 64},
    "bps6": {"blocks_per_sm": 6},
    "slots10_fallback": {"block_slot_bits": 10},
}

rng = np.random.default_rng(2026)
bad = 0
for trial in range(40):
    n = int(rng.integers(1, 70))
    s, d = np.nonzero(rng.random((n, n)) < rng.random() * 0.8)
    ref = nx_counts(s, d, n)
    for name, kw in VARIANTS.items():
        got, info = tk.count_static_hashed(cp, n, cp.asarray(s), cp.asarray(d), **kw)
        bad += not (np.array_equal(cp.asnumpy(got), ref) and info["triangles"] * 3 == int(ref.sum()))
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
    out["checks"][f"rmat{scale}_vs_reference"] = {
        name: bool(cp.array_equal(tk.count_static_hashed(cp, n, s, d, **kw)[0], ref)) for name, kw in VARIANTS.items()}
print("checks", json.dumps(out["checks"]), flush=True)


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


def breakdown(fn):
    """GPU ms of every launch inside fn() and of the operations between launches (medians of 5)."""
    runs = []
    saved = tk.launcher, tk.block_launcher

    def wrap(f, events):
        def g(xp, name, *a):
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record()
            f(xp, name, *a)
            e1.record()
            events.append((name, e0, e1))
        return g
    for _ in range(6):
        events = []
        tk.launcher, tk.block_launcher = wrap(saved[0], events), wrap(saved[1], events)
        try:
            start, end = cp.cuda.Event(), cp.cuda.Event()
            sync()
            t0 = time.perf_counter()
            start.record()
            fn()
            end.record()
            end.synchronize()
            wall = (time.perf_counter() - t0) * 1e3
        finally:
            tk.launcher, tk.block_launcher = saved
        rows, prev = [], start
        for i, (name, e0, e1) in enumerate(events):
            rows.append((f"{i:02d} before {name}", cp.cuda.get_elapsed_time(prev, e0)))
            rows.append((f"{i:02d} {name}", cp.cuda.get_elapsed_time(e0, e1)))
            prev = e1
        rows.append(("zz after", cp.cuda.get_elapsed_time(prev, end)))
        rows.append(("total_gpu", cp.cuda.get_elapsed_time(start, end)))
        rows.append(("wall", wall))
        runs.append(dict(rows))
    runs = runs[1:]
    return {k: float(np.median([r[k] for r in runs])) for k in runs[0]}


for scale in (20, 22):
    s, d = rmat_edges(cp, scale, 16, 1)
    n = 1 << scale
    res = {"directed_edges": int(s.shape[0])}
    _, info = tk.count_static_hashed(cp, n, s, d)
    res.update(info)
    res["baseline_support_ms"] = timed(lambda: tk.count_static_oriented(cp, n, s, d))
    for name, kw in VARIANTS.items():
        if scale == 22 and name not in ("default", "grab8", "blocktask1024"):
            continue
        whole = timed(lambda: tk.count_static_hashed(cp, n, s, d, **kw))
        run = kernel_only(n, s, d, **kw)
        res[name] = {"whole_ms": whole, "kernels_ms": timed(run), "block_kernel_ms": timed(lambda: run((0,))),
                     "warp_kernel_ms": timed(lambda: run((1,))), "edges_per_s": info["edges"] / whole[0] * 1e3}
        print(scale, name, res[name], flush=True)
    graph = build("csr", cp, s, d, n)
    vm = IdentityVertexMap(cp)
    job = Triangles(cp)
    res["job_run_static_ms"] = timed(lambda: job.run_static(graph, vm))
    res["job_undirected_edges"] = int(job.work["undirected_edges"])
    res["job_edges_per_s"] = res["job_undirected_edges"] / res["job_run_static_ms"][0] * 1e3
    if scale == 20:
        res["breakdown_edge_list"] = breakdown(lambda: tk.count_static_hashed(cp, n, s, d))
        res["breakdown_job"] = breakdown(lambda: job.run_static(graph, vm))
        print("breakdown", json.dumps(res["breakdown_edge_list"], indent=0), flush=True)
        print("breakdown job", {k: round(v, 3) for k, v in res["breakdown_job"].items()}, flush=True)
    out["rmat"][scale] = res
    print(scale, {k: v for k, v in res.items() if not isinstance(v, dict)}, flush=True)
    json.dump(out, open(sys.argv[1], "w"), indent=1)
