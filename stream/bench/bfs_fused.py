"""`vinestream bench bfs-fused`: direction-optimizing BFS kernels against the array program and peers.

On a Graph500-style R-MAT graph (undirected: every edge both ways, so the
in-adjacency is the out-adjacency), BFS from the highest-degree vertex by

* ``fused``      - :func:`algorithms.bfs_kernels.bfs_direction_optimizing` on the plain CSR;
* ``fused_fl``   - the same kernels reading the Fixed-Length bit-packed CSR in place;
* ``array``      - the level-synchronous array program (:func:`algorithms.bfs.bfs_arrays`);
* ``cupy_spmv``  - a plain CuPy program a user would write: one sparse matrix-vector
  product per level (cupyx / cuSPARSE), the frontier as a 0/1 vector;
* ``cugraph``    - ``pylibcugraph.bfs`` where it is importable.

GTEPS = arcs of the graph / seconds (the same numerator for every method); Graph500 counts
undirected edges, half the arcs here, so its GTEPS are half these (``gteps_graph500``).
Median of ``repeat`` runs after one warm-up; distances are checked equal across methods.
"""
from __future__ import annotations

import numpy as np

from vinestream.algorithms import bfs_kernels as bk
from vinestream.algorithms.bfs import bfs_arrays, csr_expander
from vinestream.algorithms.compressed import FixedLengthCSR
from vinestream.connectors.synthetic import rmat_simple_edges
from vinestream.structures.backend import to_numpy
from vinestream.structures.csr_types import csr_from_edges

from .peers import warm_timed


def _spmv_bfs(xp, csr, n, source):
    """The plain CuPy / SciPy program: frontier vector, one SpMV per level (A symmetric)."""
    if xp is np:
        import scipy.sparse as sp
    else:
        import cupyx.scipy.sparse as sp
    a = sp.csr_matrix((xp.ones(csr.num_edges, dtype=np.float32), csr.cols, csr.offsets), shape=(n, n))
    dist = xp.full(n, -1, dtype=np.int32)
    dist[source] = 0
    x = xp.zeros(n, dtype=np.float32)
    x[source] = 1
    level = 0
    while True:
        y = a @ x
        new = (y > 0) & (dist < 0)
        if not bool(new.any()):
            return dist
        level += 1
        dist[new] = level
        x = new.astype(np.float32)


def _cugraph_bfs(xp, csr, n, source, direction_optimizing=False):
    import pylibcugraph as plc
    handle = plc.ResourceHandle()
    props = plc.GraphProperties(is_symmetric=True, is_multigraph=False)
    # cuGraph takes int32 offsets and indices here (edge ids are int32: fewer than 2**31 arcs)
    graph = plc.SGGraph(handle, props, csr.offsets.astype(np.int32), csr.cols.astype(np.int32), None,
                        store_transposed=False, renumber=False, do_expensive_check=False,
                        input_array_format="CSR")

    def run():
        dist, _pred, verts = plc.bfs(handle, graph, xp.asarray([source], dtype=np.int32),
                                     direction_optimizing, -1, False, False)
        return dist, verts
    return run


def bench_bfs_fused(xp, scale: int = 22, edge_factor: int = 64, repeat: int = 5, seed: int = 0) -> dict:
    src, dst = rmat_simple_edges(xp, scale, edge_factor, seed=seed)
    n = 1 << int(scale)
    s = xp.concatenate([src, dst])
    d = xp.concatenate([dst, src])
    csr = csr_from_edges(xp, s, d, None, n)
    fl = FixedLengthCSR.from_csr(xp, csr, n)
    arcs = int(csr.num_edges)
    source = int(to_numpy(xp.argmax(xp.diff(csr.offsets))))
    sources = xp.asarray([source])
    res = {"graph": f"rmat-s{scale}-ef{edge_factor} (undirected)", "vertices": n, "arcs": arcs, "source": source,
           "plain_bytes": int(csr.offsets.nbytes + csr.cols.nbytes), "fl_bytes": fl.nbytes(), "fl_bits": fl.bits,
           "methods": {}}
    runs = {
        "fused": lambda: bk.bfs_direction_optimizing(xp, csr, csr, sources, n, parents=False),
        "fused_fl": lambda: bk.bfs_direction_optimizing(xp, fl, fl, sources, n, parents=False),
        "fused_with_parents": lambda: bk.bfs_direction_optimizing(xp, csr, csr, sources, n, parents=True,
                                                                  sorted_rows=True),
        "array": lambda: bfs_arrays(xp, n, sources, csr_expander(xp, csr)),
        "cupy_spmv": lambda: (_spmv_bfs(xp, csr, n, source),),
    }
    if xp is np:
        del runs["fused"], runs["fused_fl"], runs["fused_with_parents"]        # CUDA kernels: GPU only
    reference = None
    for name, fn in runs.items():
        seconds, out = warm_timed(xp, fn, repeat if name != "array" else max(1, repeat // 2))
        dist = to_numpy(out[0])
        if reference is None:
            reference = dist
        entry = {"seconds": seconds, "gteps": arcs / seconds / 1e9, "gteps_graph500": arcs / 2 / seconds / 1e9,
                 "same_distances": bool((dist == reference).all())}
        if name.startswith("fused"):
            entry.update(out[3])
        res["methods"][name] = entry
    # cuGraph top-down and, the graph being symmetric, its direction-optimizing BFS; the faster
    # one is the peer.  Its distances are checked against ours (unreached: int32 max there).
    for name, do in (("cugraph", False), ("cugraph_do", True)):
        try:
            run = _cugraph_bfs(xp, csr, n, source, direction_optimizing=do)
            seconds, (dist, verts) = warm_timed(xp, run, repeat)
            d = np.full(n, -1, dtype=np.int64)
            dh, vh = to_numpy(dist).astype(np.int64), to_numpy(verts).astype(np.int64)
            ok = dh < np.iinfo(np.int32).max
            d[vh[ok]] = dh[ok]
            res["methods"][name] = {"seconds": seconds, "gteps": arcs / seconds / 1e9,
                                    "same_distances": bool((d == reference.astype(np.int64)).all())}
        except Exception as exc:      # not installed (the usual case), or an API it does not accept
            res["methods"][name] = {"available": False, "error": f"{type(exc).__name__}: {exc}"[:200]}
    best_peer = max((m["gteps"] for k, m in res["methods"].items()
                     if k in ("cupy_spmv", "cugraph", "cugraph_do") and "gteps" in m), default=None)
    if best_peer and "fused" in res["methods"]:
        res["fused_vs_best_peer"] = res["methods"]["fused"]["gteps"] / best_peer
        res["fl_vs_plain_time"] = res["methods"]["fused_fl"]["seconds"] / res["methods"]["fused"]["seconds"]
    return res


def format_table(res: dict) -> str:
    rows = [f"BFS {res['graph']}: {res['vertices']:,} vertices, {res['arcs']:,} arcs, source {res['source']}",
            f"{'method':<20} {'ms':>9} {'GTEPS':>8} {'Graph500':>9}  same distances"]
    for name, m in res["methods"].items():
        if "seconds" not in m:
            rows.append(f"{name:<20} {'-':>9} {'-':>8} {'-':>9}  ({m.get('error', 'unavailable')})")
            continue
        rows.append(f"{name:<20} {m['seconds'] * 1e3:9.2f} {m['gteps']:8.2f} {m.get('gteps_graph500', 0):9.2f}  "
                    f"{m.get('same_distances', '')}")
    if "fused_vs_best_peer" in res:
        rows.append(f"fused / best peer: {res['fused_vs_best_peer']:.2f}x; Fixed-Length / plain time: "
                    f"{res['fl_vs_plain_time']:.2f}x ({res['fl_bits']}-bit columns, "
                    f"{res['fl_bytes'] / 2**20:.0f} vs {res['plain_bytes'] / 2**20:.0f} MiB)")
    return "\n".join(rows)
