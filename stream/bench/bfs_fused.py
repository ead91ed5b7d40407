"""`vinestream bench bfs-fused`: direction-optimizing BFS kernels against the array program and peers.

On a Graph500-style R-MAT graph (undirected: every edge both ways, so the
in-adjacency is the out-adjacency), BFS from the highest-degree vertex by

* ``fused``      - :func:`algorithms.bfs_kernels.bfs_direction_optimizing` on the plain CSR;
* ``fused_fl``   - the same kernels reading the Fixed-Length bit-packed CSR in place;
* ``array``      - the level-synchronous array program (:func:`algorithms.bfs.bfs_arrays`);
* ``cupy_spmv``  - a plain CuPy program a user would write: one sparse matrix-vector
  product per level (cupyx / cuSPARSE), the frontier as a 0/1 vector;
* ``cugraph``    - ``pylibcugraph.bfs`` where it is importable.

``job_static`` (:func:`bench_bfs_job`): the BFS *job's* static run on a directed R-MAT graph of the
same scale and edge factor 16 (the graphs of ``bench algorithms``), which builds the in-edge
transpose its bottom-up levels and in-edge index read, split into that transpose (``transpose_job``,
the form the job takes, and each form timed: the counting-sort kernels with and without their row
sort, cuSPARSE with and without the sort of its rows, the array program's sort), the fused
traversal alone, and the rest; beside it the plain CuPy program (one transposed SpMV per level) and cuGraph's
top-down BFS (the graph is directed) where importable.

GTEPS = arcs of the graph / seconds (the same numerator for every method); Graph500 counts
undirected edges, half the arcs here, so its GTEPS are half these (``gteps_graph500``).
Median of ``repeat`` runs after one warm-up; distances are checked equal across methods.
"""
from __future__ import annotations

import numpy as np

from vinestream.algorithms import bfs_kernels as bk
from vinestream.algorithms import create_job
from vinestream.algorithms import transpose_kernels as tk
from vinestream.algorithms.bfs import bfs_arrays, csr_expander
from vinestream.algorithms.compressed import FixedLengthCSR
from vinestream.algorithms.edge_index import transpose
from vinestream.connectors.synthetic import rmat_simple_edges
from vinestream.structures.backend import to_numpy
from vinestream.structures.csr_types import CSR, csr_from_edges
from vinestream.structures.registry import build

from .algorithms import IdentityVertexMap, rmat_edges
from .peers import spmv_bfs, warm_timed


def _cugraph_bfs(xp, csr, n, source, direction_optimizing=False, symmetric=True):
    import pylibcugraph as plc
    handle = plc.ResourceHandle()
    props = plc.GraphProperties(is_symmetric=symmetric, is_multigraph=False)
    # cuGraph takes int32 offsets and indices here (edge ids are int32: fewer than 2**31 arcs)
    graph = plc.SGGraph(handle, props, csr.offsets.astype(np.int32), csr.cols.astype(np.int32), None,
                        store_transposed=False, renumber=False, do_expensive_check=False,
                        input_array_format="CSR")

    def run():
        dist, _pred, verts = plc.bfs(handle, graph, xp.asarray([source], dtype=np.int32),
                                     direction_optimizing, -1, False, False)
        return dist, verts
    return run


def bench_bfs_job(xp, scale: int = 20, edge_factor: int = 16, repeat: int = 7, seed: int = 0) -> dict:
    """The BFS job's static run on a directed R-MAT graph (``bench algorithms``' graphs, source: the
    highest out-degree) split into its in-edge transpose, the fused traversal and the rest, each
    transpose form timed and checked equal, distances checked against the plain program's."""
    s, d = rmat_edges(xp, scale, edge_factor, seed)
    n = 1 << int(scale)
    graph = build("csr", xp, s, d, n)
    vm = IdentityVertexMap(xp)
    csr = graph.adjacency()
    cap = int(graph.vertex_capacity)
    source = int(to_numpy(xp.argmax(xp.diff(csr.offsets))))
    m = int(csr.num_edges)
    res = {"graph": f"rmat-s{scale}-ef{edge_factor} (directed)", "vertices": n, "edges": m, "source": source,
           "times_ms": {}}
    t = res["times_ms"]
    gpu = xp is not np
    jobs = {"job_static": create_job("bfs", xp, sources=[source])}
    if gpu:
        jobs["job_static_library_transpose"] = create_job("bfs", xp, sources=[source], fused_transpose=False)
    for name, job in jobs.items():
        secs, _ = warm_timed(xp, lambda job=job: job.run_static(graph, vm), repeat)
        t[name] = secs * 1e3
    job = jobs["job_static"]
    res["job_work"] = {k: v for k, v in job.work.items() if isinstance(v, (int, float, str))}
    job_form = {}
    forms = {"transpose_job": lambda: transpose(xp, csr, cap, True, fused=job.fused_transpose, info=job_form),
             "transpose_library": lambda: transpose(xp, csr, cap, True),
             "transpose_sort": lambda: transpose(xp, csr, cap, False)}
    if gpu:
        import cupyx.scipy.sparse as sps
        off32 = csr.offsets.astype(np.int32)
        if off32.shape[0] < cap + 1:
            off32 = xp.concatenate([off32, xp.full(cap + 1 - off32.shape[0], m, dtype=np.int32)])
        forms = {"transpose_fused": lambda: tk.transpose_fused(xp, csr, cap),
                 "transpose_fused_unsorted_rows": lambda: tk.transpose_fused(xp, csr, cap, sort_rows=False),
                 # cuSPARSE's csr2csc alone, without the sort_indices that transpose() adds
                 "transpose_library_no_sort": lambda: sps.csr_matrix(
                     (xp.ones(m, dtype=np.float32), csr.cols, off32),
                     shape=(cap, cap)).T.tocsr(), **forms}
    outs = {}
    for name, fn in forms.items():
        secs, outs[name] = warm_timed(xp, fn, repeat)
        t[name] = secs * 1e3
    ref = outs["transpose_sort"]
    res["transposes_equal"] = {k: bool((o.offsets == ref.offsets).all() and (o.cols == ref.cols).all())
                               for k, o in outs.items()
                               if k in ("transpose_job", "transpose_fused", "transpose_library")}
    res["transpose_job_form"] = job_form.get("form")
    if gpu:
        parts = {}
        tk.transpose_fused(xp, csr, cap, parts=parts)
        res["transpose_fused_rows_by_class"] = parts
        in_csr = outs["transpose_job"]
        secs, res["job_in_csr_rows_sorted"] = warm_timed(xp, lambda: tk.rows_sorted(xp, in_csr.offsets, in_csr.cols),
                                                         repeat)
        t["check_rows_sorted"] = secs * 1e3
        out = CSR(offsets=csr.offsets, cols=csr.cols, weights=None)
        for name, par in (("traversal_fused", True), ("traversal_fused_no_parents", False)):
            secs, got = warm_timed(xp, lambda par=par: bk.bfs_direction_optimizing(
                xp, out, in_csr, xp.asarray([source]), cap, parents=par, sorted_rows=True), repeat)
            t[name] = secs * 1e3
        res["traversal_info"] = got[3]
        t["job_rest"] = t["job_static"] - t["transpose_job"] - t["traversal_fused"]
    secs, spmv_dist = warm_timed(xp, lambda: spmv_bfs(xp, csr.offsets, csr.cols, cap, source, directed=True),
                                 max(3, repeat // 2))
    t["cupy_spmv"] = secs * 1e3
    ref_dist = to_numpy(spmv_dist)
    res["same_distances"] = {name: bool((to_numpy(j.dist)[:cap] == ref_dist).all()) for name, j in jobs.items()}
    if gpu:
        res["same_parents"] = bool((jobs["job_static"].parent == jobs["job_static_library_transpose"].parent).all())
    try:
        run = _cugraph_bfs(xp, csr, cap, source, direction_optimizing=False, symmetric=False)
        secs, (dist, verts) = warm_timed(xp, run, repeat)
        t["cugraph"] = secs * 1e3
        got = np.full(cap, -1, dtype=np.int64)
        dh, vh = to_numpy(dist).astype(np.int64), to_numpy(verts).astype(np.int64)
        ok = dh < np.iinfo(np.int32).max
        got[vh[ok]] = dh[ok]
        res["cugraph_same_distances"] = bool((got == ref_dist.astype(np.int64)).all())
    except Exception as exc:      # not installed (the usual case)
        res["cugraph"] = {"available": False, "error": f"{type(exc).__name__}: {exc}"[:200]}
    if "cugraph" in t:
        res["job_static_vs_cugraph"] = t["cugraph"] / t["job_static"]
    res["job_static_vs_cupy_spmv"] = t["cupy_spmv"] / t["job_static"]
    return res


def bench_bfs_fused(xp, scale: int = 22, edge_factor: int = 64, repeat: int = 5, seed: int = 0,
                    job: bool = True) -> dict:
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
        "cupy_spmv": lambda: (spmv_bfs(xp, csr.offsets, csr.cols, n, source),),
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
    if job:
        res["job_static"] = bench_bfs_job(xp, scale, 16, seed=seed)
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
    if "job_static" in res:
        j = res["job_static"]
        rows.append(f"BFS job's static run, {j['graph']}, {j['edges']:,} edges, source {j['source']} (ms): "
                    + ", ".join(f"{k} {v:.3f}" for k, v in j["times_ms"].items()))
    return "\n".join(rows)
