"""Incremental BFS against static BFS, side by side in one process (issue 11, item 5).

On an R-MAT graph (``csr`` structure, the benchmark's ``rmat_edges``) from the highest out-degree vertex,
per batch fraction ``batches`` consecutive random deltas (half deletions, half insertions;
:func:`stream.bench.algorithms.random_delta`), each applied once; then, in an order that alternates from
batch to batch, on the already-updated graph:

* ``fused``        - ``BFS.update`` with the fused repair kernels (the GPU default);
* ``array``        - ``BFS.update`` by the array program (``fused=False``, its own state);
* ``static``       - a fresh ``BFS.run_static`` as the job runs it (on a GPU: the transpose for the
  in-edges, the fused direction-optimizing kernels, parents);
* ``static_array`` - a fresh ``BFS.run_static`` with ``fused=False`` (the array direction-optimizing BFS);
* ``static_kernels`` - the fused static kernels alone on an in-CSR built beforehand (no transpose):
  the least a static BFS can cost here.

Every batch checks each method's distances against scipy's BFS on a host copy of the graph (``wrong``:
vertices whose distance differs, per method and batch).  Medians per fraction; ratios of medians.
The first pass over the fractions is a warm-up (kernel compilation) and is not reported.
"""
from __future__ import annotations

import statistics
import time

from vinestream.algorithms import bfs_kernels as bk
from vinestream.algorithms.bfs import BFS, _padded_offsets, bfs_scipy
from vinestream.algorithms.edge_index import transpose
from vinestream.structures.backend import backend_name, synchronize, to_numpy
from vinestream.structures.csr_types import CSR
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build

from .algorithms import IdentityVertexMap, random_delta, rmat_edges


def _timed(xp, fn):
    synchronize(xp)
    t = time.perf_counter()
    fn()
    synchronize(xp)
    return time.perf_counter() - t


def _runs(xp, jobs, fresh, graph, delta, vm, out_csr, in_csr, source, cap) -> dict:
    return {"fused": lambda: jobs["fused"].update(graph, delta, vm),
            "array": lambda: jobs["array"].update(graph, delta, vm),
            "static": lambda: fresh["static"].run_static(graph, vm),
            "static_array": lambda: fresh["static_array"].run_static(graph, vm),
            "static_kernels": lambda: bk.bfs_direction_optimizing(
                xp, out_csr, in_csr, xp.asarray([source]), cap, parents=True, sorted_rows=True)}


def bench_bfs_incremental(xp, scale: int = 20, edge_factor: int = 16, fractions=(1e-4, 1e-3, 1e-2),
                          batches: int = 5, seed: int = 0) -> dict:
    s, d = rmat_edges(xp, scale, edge_factor, seed)
    n = 1 << int(scale)
    graph = build("csr", xp, s, d, n)
    del s, d
    vm = IdentityVertexMap(xp)
    m = int(graph.num_edges)
    source = int(to_numpy(xp.argmax(xp.diff(graph.adjacency().offsets))))
    jobs = {"fused": BFS(xp, sources=[source], fused=True), "array": BFS(xp, sources=[source], fused=False)}
    for j in jobs.values():
        j.run_static(graph, vm)
    out = {"backend": backend_name(xp), "graph": f"rmat{scale}-{edge_factor}", "vertices": n, "edges": m,
           "source": source, "fractions": [float(f) for f in fractions], "rows": []}
    methods = ("fused", "array", "static", "static_array", "static_kernels")
    for warm in (True, False):
        for i, f in enumerate(fractions):
            k = max(2, int(round(f * m)))
            times = {name: [] for name in methods}
            rec = {"fraction": float(f), "changes": k, "exact": True, "modes": [], "syncs": [], "iterations": [],
                   "invalidated": [], "edges_touched": [], "index_edges": []}
            for b in range(1 if warm else batches):
                delta = random_delta(xp, graph, k, seed + (0 if warm else 1000) + 1 + i * 97 + b)
                apply_delta(graph, delta)
                fresh = {"static": BFS(xp, sources=[source], fused=True),
                         "static_array": BFS(xp, sources=[source], fused=False)}
                csr = graph.adjacency()
                cap = int(jobs["fused"]._live_mask.shape[0])
                in_csr = transpose(xp, csr, cap)
                out_csr = CSR(offsets=_padded_offsets(xp, csr.offsets, cap), cols=csr.cols, weights=None)
                runs = _runs(xp, jobs, fresh, graph, delta, vm, out_csr, in_csr, source, cap)
                order = list(methods) if b % 2 == 0 else list(reversed(methods))
                for name in order:
                    times[name].append(_timed(xp, runs[name]))
                # the reference: scipy's BFS on a host copy of the graph
                host = CSR(offsets=to_numpy(csr.offsets), cols=to_numpy(csr.cols), weights=None)
                ref = bfs_scipy(host, cap, [source])[0]
                for name, job in (("fused", jobs["fused"]), ("array", jobs["array"]), ("static", fresh["static"]),
                                  ("static_array", fresh["static_array"])):
                    got = to_numpy(job.dist)[: ref.shape[0]]
                    wrong = int((got != ref).sum())
                    rec["exact"] &= wrong == 0
                    rec.setdefault("wrong", {}).setdefault(name, []).append(wrong)
                w = jobs["fused"].work
                rec["modes"].append(("fused " if w.get("fused") else "") + w["mode"])
                for key in ("syncs", "iterations", "invalidated", "edges_touched", "index_edges"):
                    rec[key].append(int(w.get(key, 0)))
            if warm:
                continue
            med = {name: statistics.median(v) for name, v in times.items()}
            rec["median_seconds"] = med
            rec["seconds"] = times
            rec["static_over_fused"] = med["static"] / med["fused"]
            rec["static_kernels_over_fused"] = med["static_kernels"] / med["fused"]
            rec["static_over_array"] = med["static"] / med["array"]
            rec["static_array_over_array"] = med["static_array"] / med["array"]
            rec["array_over_fused"] = med["array"] / med["fused"]
            out["rows"].append(rec)
    return out


def format_table(res: dict) -> str:
    rows = [f"incremental BFS ({res['backend']}) on {res['graph']}: {res['vertices']:,} vertices, "
            f"{res['edges']:,} edges, source {res['source']}",
            f"{'batch':>7} {'changes':>8} | {'fused':>8} {'array':>8} {'static':>8} {'st.array':>8} "
            f"{'st.kern':>8} ms | static/fused  kernels/fused  static/array  exact  syncs"]
    for r in res["rows"]:
        m = r["median_seconds"]
        rows.append(f"{r['fraction']:7.2%} {r['changes']:8,} | {m['fused'] * 1e3:8.3f} {m['array'] * 1e3:8.3f} "
                    f"{m['static'] * 1e3:8.3f} {m['static_array'] * 1e3:8.3f} {m['static_kernels'] * 1e3:8.3f} | "
                    f"{r['static_over_fused']:12.2f} {r['static_kernels_over_fused']:14.2f} "
                    f"{r['static_over_array']:13.2f}  {r['exact']!s:5}  {sorted(set(r['syncs']))}")
    return "\n".join(rows)
