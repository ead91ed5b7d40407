"""The slides' slabhash experiment (``papers/dynamic-graphs-slides.txt``, "Memory Usage" and the
Luxembourg table): insert luxembourg_osm (114,599 vertices; 119,666 edges directed, 239,332
bidirectional) with each insert strategy, edges per second; and bytes per edge of slabhash on the
road graph against R-MAT and coAuthorsDBLP (low-degree graphs leave most of a 128-byte slab empty).

Strategies: ``thread`` (one thread per edge, atomicCAS) and ``warp`` (warp-cooperative work
sharing) are the GPU kernels; ``array`` is the array program, the only one on a CPU.
``vinestream bench slabhash-road`` runs it; the result is a JSON-serialisable dict.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from vinestream.connectors.shared_data import ENV_VAR as SHARED_ENV_VAR
from vinestream.connectors.shared_data import shared_data_file
from vinestream.stream.errors import UsageError
from vinestream.structures import backend
from vinestream.structures.csr_types import VERTEX_DTYPE, CSRBatch
from vinestream.structures.registry import create

from .structures import load_edge_file, rmat_edges

ROAD = "static/luxembourg_osm.mtx.gz"
DBLP = "static/coAuthorsDBLP.mtx.gz"
SLIDES_EDGES_PER_SECOND = {"thread": {"directed": 14e6, "bidirectional": 24e6},
                           "warp": {"directed": 9e6, "bidirectional": 14e6}}


def _graph(path: str, directed: bool):
    """(src, dst, n) of a shared MatrixMarket graph: the stored triangle, or both directions."""
    found = shared_data_file(path)
    if found is None:
        raise UsageError(f"bench slabhash-road reads {path} from the shared data folder, which is not on this machine "
                         f"(${SHARED_ENV_VAR}, or shared/data beside the repository)")
    src, dst = load_edge_file(str(found))
    if directed:                  # load_edge_file mirrors symmetric files: keep the stored half
        half = src.shape[0] // 2
        src, dst = src[:half], dst[:half]
    n = int(max(src.max(), dst.max())) + 1
    return src, dst, n


def _insert_rate(xp, strategy: str, src, dst, n: int, weighted: bool, repeat: int, batch_size: int | None):
    """Best / median edges per second of inserting every edge into a fresh slabhash (vertices
    inserted first, not timed), and its memory afterwards."""
    opts = {"weighted": weighted}
    if strategy == "array":
        opts["fused"] = False
    else:
        opts["insert_strategy"] = strategy
    s = xp.asarray(src.astype(VERTEX_DTYPE))
    d = xp.asarray(dst.astype(VERTEX_DTYPE))
    m = int(s.shape[0])
    step = batch_size or m
    batches = [CSRBatch.from_edges(xp, s[i:i + step], d[i:i + step]) for i in range(0, m, step)]
    times, mem = [], None
    for _ in range(repeat + 1):                              # the first run warms up (JIT, pools)
        g = create("slabhash", xp, **opts)
        g.insert_vertices(xp.arange(n, dtype=np.int32))
        backend.synchronize(xp)
        t0 = time.perf_counter()
        for b in batches:
            g.insert_edges(b)
        backend.synchronize(xp)
        times.append(time.perf_counter() - t0)
        mem = g.memory()
    times = times[1:]
    return {"edges": m, "distinct_edges": g.num_edges, "batches": len(batches), "seconds_best": min(times),
            "edges_per_second": m / min(times), "edges_per_second_median": m / statistics.median(times),
            "bytes_per_edge": mem["bytes_per_edge"], "slab_bytes_per_edge": mem["slab_bytes_per_edge"],
            "slot_fill": mem["slot_fill"], "slabs_in_use": mem["slabs_in_use"]}


def _memory_point(xp, name: str, src, dst, n: int, weighted: bool) -> dict:
    g = create("slabhash", xp, weighted=weighted)
    g.insert_vertices(xp.arange(n, dtype=np.int32))
    g.insert_edges(CSRBatch.from_edges(xp, xp.asarray(src.astype(VERTEX_DTYPE)),
                                       xp.asarray(dst.astype(VERTEX_DTYPE))))
    mem = g.memory()
    e = g.num_edges
    csr_bytes = 8 * (n + 1) + (4 + (4 if weighted else 0)) * e
    return {"graph": name, "weighted": weighted, "vertices": n, "edges": e, "average_degree": e / max(n, 1),
            "bytes_per_edge": mem["bytes_per_edge"], "slab_bytes_per_edge": mem["slab_bytes_per_edge"],
            "slot_fill": mem["slot_fill"], "csr_bytes_per_edge": csr_bytes / max(e, 1)}


def bench_slabhash_road(xp, strategies=None, repeat: int = 3, rmat_scale: int | None = None,
                        batch_size: int | None = None) -> dict:
    """The Luxembourg insert table (per strategy, directed and bidirectional) and the memory table."""
    gpu = backend.is_gpu(xp)
    strategies = strategies or (("thread", "warp", "array") if gpu else ("array",))
    rmat_scale = rmat_scale or (20 if gpu else 16)
    result = {"strategies": list(strategies), "inserts": {}, "memory": [],
              "slides_edges_per_second": SLIDES_EDGES_PER_SECOND}
    for mode in ("directed", "bidirectional"):
        src, dst, n = _graph(ROAD, directed=(mode == "directed"))
        for strategy in strategies:
            for weighted in (False, True):
                key = f"{strategy}/{mode}/{'weighted' if weighted else 'unweighted'}"
                result["inserts"][key] = _insert_rate(xp, strategy, src, dst, n, weighted, repeat, batch_size)
    rs, rd = rmat_edges(xp, rmat_scale)
    rs, rd = backend.to_numpy(rs), backend.to_numpy(rd)
    graphs = [("luxembourg_osm", *_graph(ROAD, directed=False)),
              (f"rmat{rmat_scale}", rs, rd, int(max(rs.max(), rd.max())) + 1)]
    if shared_data_file(DBLP):
        graphs.append(("coAuthorsDBLP", *_graph(DBLP, directed=False)))
    for weighted in (False, True):
        for name, s, d, n in graphs:
            result["memory"].append(_memory_point(xp, name, s, d, n, weighted))
    return result


def format_table(result: dict) -> str:
    rows = ["slabhash: insert luxembourg_osm (114,599 vertices), edges per second"
            " (slides, older GPU: thread 14M / 24M, warp 9M / 14M)",
            f"{'strategy/graph/slab':<40} {'edges':>8} {'batches':>7} {'edges/s':>12} {'B/edge':>7} {'fill':>5}"]
    for key, r in result["inserts"].items():
        rows.append(f"{key:<40} {r['edges']:>8,} {r['batches']:>7} {r['edges_per_second']:>12,.0f} "
                    f"{r['bytes_per_edge']:>7.1f} {r['slot_fill']:>5.2f}")
    rows += ["", "slabhash bytes per edge (all edges inserted; CSR for scale)",
             f"{'graph':<16} {'slab':<10} {'avg deg':>7} {'B/edge':>7} {'slab B/edge':>11} {'fill':>5} "
             f"{'CSR B/edge':>10}"]
    for r in result["memory"]:
        rows.append(f"{r['graph']:<16} {'15 pairs' if r['weighted'] else '30 keys':<10} {r['average_degree']:>7.2f} "
                    f"{r['bytes_per_edge']:>7.1f} {r['slab_bytes_per_edge']:>11.1f} {r['slot_fill']:>5.2f} "
                    f"{r['csr_bytes_per_edge']:>10.1f}")
    return "\n".join(rows)
