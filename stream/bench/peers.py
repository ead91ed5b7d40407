"""The peers `vinestream bench algorithms` measures side by side: scipy, NetworKit, cupyx, pylibcugraph.

Each peer runs on its own representation of the same graph, built outside the
timed region (a peer's graph is "already updated" when it recomputes).  A peer
that is not installed is skipped; the `peers` extra installs scipy and
networkit.  All functions take host NumPy edge arrays (0-based ``src``, ``dst``,
``n`` vertices) except the GPU ones, which take CuPy arrays.

What is timed, per job:

* PageRank: the power iteration ``x <- d A^T D^-1 x + (d * dangling + 1 - d) / n``
  until ``||x_new - x||_1 < tol`` (the stopping rule of vinestream's static form),
  from the uniform vector (static) or from the previous ranks (the warm-started
  recompute); scipy's time includes its transpose when static (the graph is
  given as out-CSR, as to vinestream) and excludes it when warm (an updated peer
  keeps its transpose).  NetworKit's ``PageRank`` with the L1 norm and ``tol``.
* BFS: ``scipy.sparse.csgraph.breadth_first_order``; NetworKit ``BFS``; and
  NetworKit ``DynBFS.updateBatch`` for a batch (its graph updated untimed first).
* Triangles: NetworKit ``TriangleEdgeScore`` (per-edge counts, summed / 3) on the
  undirected graph; scipy ``(U @ U) .* U`` only on graphs small enough for it.
* On a GPU: cupyx's power iteration (cuSPARSE SpMV), BFS by one SpMV a level (:func:`spmv_bfs`), and
  ``(U @ U) .* U`` by cuSPARSE's SpGEMM on small graphs; pylibcugraph's three where installed.
"""
from __future__ import annotations

import importlib
import statistics
import time

import numpy as np

from vinestream.stream.errors import UsageError
from vinestream.structures.backend import synchronize

SCIPY_TRIANGLES_MAX_EDGES = 400_000     # scipy's SpGEMM triangle count takes minutes beyond this
#: cupyx's SpGEMM triangle count holds every 2-path's endpoints: up to n^2 entries on R-MAT, whose hubs reach most
#: vertices (R-MAT 16, 955k edges, could ask for tens of GB); R-MAT 14 (228k) took 18 ms on an H100
CUPYX_TRIANGLES_MAX_EDGES = 400_000


def available() -> dict:
    """Which peers import here: {"scipy": bool, "networkit": bool, "cupyx": bool, "pylibcugraph": bool}."""
    out = {}
    for name in ("scipy", "networkit", "cupyx", "pylibcugraph"):
        try:
            __import__(name)
            out[name] = True
        except Exception:        # ImportError, or a broken CUDA install
            out[name] = False
    return out


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def warm_timed(xp, fn, repeats: int):
    """(median seconds, last result) of ``fn()`` over ``repeats`` runs after one untimed run (a first call
    pays compilation, handles and allocator growth), the device synchronised around each."""
    fn()
    synchronize(xp)
    times, out = [], None
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        out = fn()
        synchronize(xp)
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


# -- scipy -----------------------------------------------------------------------------------
def scipy_matrix(src, dst, n):
    import scipy.sparse as sp
    return sp.csr_matrix((np.ones(src.shape[0]), (src, dst)), shape=(n, n))


def scipy_pagerank(a, n: int, *, tol: float, damping: float = 0.85, x0=None, at=None, max_iter: int = 1000):
    """(seconds, ranks, iterations) of the power iteration on csr matrix ``a`` (see module docstring)."""
    def run():
        t = at if at is not None else a.T.tocsr()
        deg = np.diff(a.indptr)
        inv = np.where(deg > 0, 1.0 / np.maximum(deg, 1), 0.0)
        dangling = deg == 0
        x = np.full(n, 1.0 / n) if x0 is None else x0 / x0.sum()
        for it in range(1, max_iter + 1):
            y = damping * (t @ (x * inv))
            y += (damping * x[dangling].sum() + 1.0 - damping) / n
            err = np.abs(y - x).sum()
            x = y
            if err < tol:
                return x, it
        return x, max_iter
    secs, (x, it) = _timed(run)
    return secs, x, it


def scipy_bfs(a, source: int):
    from scipy.sparse.csgraph import breadth_first_order
    secs, (order, _) = _timed(lambda: breadth_first_order(a, source, directed=True, return_predecessors=True))
    return secs, int(order.shape[0])


def scipy_bfs_distances(a, source: int):
    """The hop distances from ``source`` on csr matrix ``a`` (int64, -1: unreached), untimed: a check of ours."""
    from scipy.sparse.csgraph import shortest_path
    d = shortest_path(a, method="D", directed=True, unweighted=True, indices=int(source))
    return np.where(np.isfinite(d), d, -1).astype(np.int64)


def scipy_module(name: str, why: str):
    """``scipy.<name>`` for a bench that cannot run without it: a UsageError saying ``why`` (and how to install
    the ``peers`` extra) where SciPy is not installed."""
    try:
        return importlib.import_module(f"scipy.{name}")
    except ImportError:
        raise UsageError(f"{why}; SciPy is not installed: pip install 'vinestream[peers]'") from None


def _sparse(xp):
    """The sparse-matrix module of ``xp``: scipy.sparse on NumPy (a UsageError without SciPy), cupyx.scipy.sparse
    on CuPy."""
    if xp is np:
        return scipy_module("sparse", "on the CPU this bench compares with SciPy's sparse matrices")
    import cupyx.scipy.sparse as sp
    return sp


def _undirected_matrix(xp, src, dst, n: int):
    """U, the symmetric 0/1 matrix of the undirected simple graph of the edges (self-loops and duplicates
    dropped), in ``xp``'s sparse module."""
    lo, hi = xp.minimum(src, dst), xp.maximum(src, dst)
    keep = lo != hi
    u = _sparse(xp).coo_matrix((xp.ones(int(keep.sum()), dtype=np.float64), (lo[keep], hi[keep])),
                               shape=(n, n)).tocsr()
    u.sum_duplicates()
    u.data[:] = 1.0
    return (u + u.T).tocsr()


def _spgemm_triangles(u) -> int:
    """The triangles of U by SpGEMM: ``sum((U @ U) .* U) / 6``."""
    return int(round(float((u @ u).multiply(u).sum()) / 6))


def scipy_triangles(src, dst, n):
    u = _undirected_matrix(np, src, dst, n)
    return _timed(lambda: _spgemm_triangles(u))


# -- NetworKit -------------------------------------------------------------------------------
def _nk_timed(fn):
    """:func:`_timed` of a NetworKit run, whose own SIGINT handler turns Ctrl-C into ``RuntimeError("Received
    CTRL+C/SIGINT")`` (bench said "internal error ... a bug"): a KeyboardInterrupt again, as anywhere else."""
    try:
        return _timed(fn)
    except RuntimeError as exc:
        if "SIGINT" in str(exc):
            raise KeyboardInterrupt from None
        raise


def nk_graph(src, dst, n, directed: bool = True):
    import networkit as nk
    g = nk.Graph(int(n), directed=directed)
    if not directed:
        lo, hi = np.minimum(src, dst), np.maximum(src, dst)
        keys = np.sort((lo[lo != hi].astype(np.int64) << 32) | hi[lo != hi])
        keep = np.ones(keys.shape[0], dtype=bool)
        keep[1:] = keys[1:] != keys[:-1]
        keys = keys[keep]
        src, dst = keys >> 32, keys & 0xFFFFFFFF
    g.addEdges((np.asarray(src, dtype=np.uint64), np.asarray(dst, dtype=np.uint64)), checkMultiEdge=False)
    return g


def nk_pagerank(g, *, tol: float, damping: float = 0.85):
    import networkit as nk
    pr = nk.centrality.PageRank(g, damping, tol)
    pr.norm = nk.centrality.Norm.L1_NORM
    secs, _ = _nk_timed(pr.run)
    return secs, int(pr.numberOfIterations()), np.asarray(pr.scores(), dtype=np.float64)


def nk_bfs(g, source: int):
    import networkit as nk
    bfs = nk.distance.BFS(g, int(source), storePaths=False)
    secs, _ = _nk_timed(bfs.run)
    return secs


def nk_bfs_distances(g, source: int):
    """NetworKit's BFS hop distances from ``source`` (int64, -1: unreached), untimed: a check of ours."""
    import networkit as nk
    bfs = nk.distance.BFS(g, int(source), storePaths=False)
    _nk_timed(bfs.run)
    d = np.asarray(bfs.getDistances(), dtype=np.float64)
    return np.where(d < np.finfo(np.float64).max / 2, d, -1).astype(np.int64)


def nk_triangles(gu):
    import networkit as nk
    gu.indexEdges()
    score = nk.sparsification.TriangleEdgeScore(gu)
    secs, _ = _nk_timed(score.run)
    return secs, int(round(sum(score.scores()) / 3))


def nk_dynbfs(g, source: int):
    """A DynBFS from ``source`` on ``g``, already run (untimed)."""
    import networkit as nk
    dyn = nk.distance.DynBFS(g, int(source))
    _nk_timed(dyn.run)
    return dyn


def nk_apply_and_update(g, dyn, ins_s, ins_d, del_s, del_d) -> float:
    """Apply the batch to ``g`` (untimed) and time ``dyn.updateBatch`` on its events."""
    import networkit as nk
    kind = nk.dynamics.GraphEventType
    events = []
    for u, v in zip(del_s.tolist(), del_d.tolist()):
        g.removeEdge(u, v)
        events.append(nk.dynamics.GraphEvent(kind.EDGE_REMOVAL, u, v, 1.0))
    for u, v in zip(ins_s.tolist(), ins_d.tolist()):
        g.addEdge(u, v)
        events.append(nk.dynamics.GraphEvent(kind.EDGE_ADDITION, u, v, 1.0))
    secs, _ = _nk_timed(lambda: dyn.updateBatch(events))
    return secs


# -- GPU peers (cupyx SpMV power iteration; pylibcugraph where present) ------------------------
def cupyx_pagerank(xp, offsets, cols, n: int, *, tol: float, damping: float = 0.85, x0=None, repeats: int = 3):
    """The scipy power iteration on cupyx.scipy.sparse (cuSPARSE SpMV); (seconds, ranks, iterations).

    Timed by :func:`warm_timed` (its untimed first run pays cuSPARSE's handle and CuPy's kernels:
    0.1-0.6 s), the matrix and its transpose built inside each run."""
    secs, (x, iterations) = warm_timed(xp, lambda: _cupyx_power_iteration(xp, offsets, cols, n, tol, damping, x0),
                                       repeats)
    return secs, x, iterations


def _cupyx_power_iteration(xp, offsets, cols, n: int, tol: float, damping: float, x0):
    import cupyx.scipy.sparse as sp
    a = sp.csr_matrix((xp.ones(cols.shape[0], dtype=np.float64), cols, offsets[: n + 1]), shape=(n, n))
    at = a.T.tocsr()
    deg = xp.diff(offsets[: n + 1])
    inv = xp.where(deg > 0, 1.0 / xp.maximum(deg, 1), 0.0)
    dangling = (deg == 0).astype(np.float64)
    x = xp.full(n, 1.0 / n) if x0 is None else x0 / x0.sum()
    iterations = 0
    while iterations < 1000:
        y = damping * (at @ (x * inv))
        y += (damping * (x * dangling).sum() + 1.0 - damping) / n
        err = float(xp.abs(y - x).sum())
        x = y
        iterations += 1
        if err < tol:
            break
    return x, iterations


def spmv_bfs(xp, offsets, cols, n: int, source: int, directed: bool = False):
    """The plain CuPy / SciPy BFS a user would write: a frontier vector and one SpMV per level, the next
    frontier ``A x`` on a symmetric graph, ``A^T x`` (the library's transposed SpMV) on a directed one; the
    distances (-1: unreached)."""
    a = _sparse(xp).csr_matrix((xp.ones(cols.shape[0], dtype=np.float32), cols, offsets[: n + 1]), shape=(n, n))
    step = a.T if directed else a
    dist = xp.full(n, -1, dtype=np.int32)
    dist[source] = 0
    x = xp.zeros(n, dtype=np.float32)
    x[source] = 1
    level = 0
    while True:
        y = step @ x
        new = (y > 0) & (dist < 0)
        if not bool(new.any()):
            return dist
        level += 1
        dist[new] = level
        x = new.astype(np.float32)


def cupyx_bfs(xp, offsets, cols, n: int, source: int, repeats: int = 1):
    """:func:`spmv_bfs` on cupyx.scipy.sparse over the out-CSR (directed: ``A^T x`` a level), timed by
    :func:`warm_timed` with the matrix built inside each run: (seconds, distances)."""
    return warm_timed(xp, lambda: spmv_bfs(xp, offsets, cols, n, source, directed=True), repeats)


def cupyx_triangles(xp, src, dst, n: int, repeats: int = 1):
    """The scipy peer's ``(U @ U) .* U`` on cupyx.scipy.sparse (cuSPARSE's SpGEMM), U built untimed:
    (seconds, total).  Only on graphs of at most :data:`CUPYX_TRIANGLES_MAX_EDGES` edges."""
    u = _undirected_matrix(xp, src, dst, n)
    return warm_timed(xp, lambda: _spgemm_triangles(u), repeats)


def cugraph_runs(xp, offsets, cols, n: int, source: int, *, tol: float, repeats: int = 3) -> dict:
    """pylibcugraph PageRank / BFS / triangle count on the same CSR, where installed.

    Each is run once untimed (cuGraph's first call allocates its workspace) and then timed
    ``repeats`` times (median).  PageRank: ``epsilon=tol``, from the uniform vector, its ranks
    returned for an accuracy check.  BFS: top-down (``direction_optimizing`` needs a symmetric
    graph), distances returned.  Triangles: on the graph made undirected by cuGraph itself
    (``symmetrize``, self-loops and duplicates dropped; that build is not timed), the total
    returned.  Returns {"pagerank_seconds", "pagerank_ranks", "bfs_seconds", "bfs_distances",
    "triangles_seconds", "triangles_total"} for what ran and "error" for what did not.
    """
    try:
        import pylibcugraph as plc
    except Exception:
        return {}
    def timed(fn):
        return warm_timed(xp, fn, repeats)

    out, errors = {}, []
    res = plc.ResourceHandle()
    off32, cols32 = offsets[: n + 1].astype(np.int32), cols.astype(np.int32)
    try:
        g = plc.SGGraph(res, plc.GraphProperties(is_symmetric=False, is_multigraph=False), off32, cols32, None,
                        store_transposed=True, renumber=False, do_expensive_check=False, input_array_format="CSR")
        secs, (verts, vals) = timed(lambda: plc.pagerank(res, g, None, None, None, None, alpha=0.85, epsilon=tol,
                                                         max_iterations=1000, do_expensive_check=False))
        ranks = xp.zeros(n, dtype=np.float64)
        ranks[verts] = vals
        out["pagerank_seconds"], out["pagerank_ranks"] = secs, ranks
    except Exception as exc:        # an API this version lacks: report, do not fail the bench
        errors.append(f"pagerank {type(exc).__name__}: {exc}")
    try:
        g2 = plc.SGGraph(res, plc.GraphProperties(is_symmetric=False, is_multigraph=False), off32, cols32, None,
                         store_transposed=False, renumber=False, do_expensive_check=False,
                         input_array_format="CSR")
        secs, (dist, _pred, verts) = timed(lambda: plc.bfs(res, g2, xp.asarray([source], dtype=np.int32), False,
                                                           -1, False, False))
        d = xp.full(n, -1, dtype=np.int64)
        reached = dist < np.iinfo(np.int32).max
        d[verts[reached]] = dist[reached]
        out["bfs_seconds"], out["bfs_distances"] = secs, d
    except Exception as exc:
        errors.append(f"bfs {type(exc).__name__}: {exc}")
    try:
        rows = xp.repeat(xp.arange(n, dtype=np.int32), xp.diff(offsets[: n + 1]).astype(np.int64))
        g3 = plc.SGGraph(res, plc.GraphProperties(is_symmetric=True, is_multigraph=False), rows, cols32, None,
                         store_transposed=False, renumber=False, do_expensive_check=False, input_array_format="COO",
                         drop_self_loops=True, drop_multi_edges=True, symmetrize=True)
        secs, (_v, counts) = timed(lambda: plc.triangle_count(res, g3, None, False))
        out["triangles_seconds"], out["triangles_total"] = secs, int(counts.sum()) // 3
    except Exception as exc:
        errors.append(f"triangles {type(exc).__name__}: {exc}")
    if errors:
        out["error"] = "; ".join(errors)[:600]
    return out
