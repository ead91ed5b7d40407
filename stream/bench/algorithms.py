"""`vinestream bench algorithms`: incremental against static PageRank, BFS and triangles.

On R-MAT graphs (generated here with ``xp``; Graph500 parameters a, b, c =
0.57, 0.19, 0.19) and optionally a real edge list, it measures:

- per job, for batches of 0.01 %, 0.1 %, 1 % and 10 % of |E| (half deletions of
  existing edges, half insertions of new ones): the incremental update time and
  work against a from-scratch run on the same graph;
- a static PageRank iteration against one sparse matrix-vector product of
  ``scipy.sparse`` (NumPy) or ``cupyx.scipy.sparse`` (CuPy) on the same CSR;
- BFS in edges traversed per second on the plain and the Fixed-Length
  compressed CSR, with both sizes;
- triangles in undirected edges per second (static) and changed edges per
  second (incremental).

**Peers** (:mod:`stream.bench.peers`, when installed: the `peers` extra): static
PageRank (same tolerance, iterations reported), BFS and triangles against scipy
and NetworKit (cupyx and pylibcugraph on a GPU), and every incremental update
against the peer's recompute on its already-updated graph (PageRank
warm-started from the previous ranks) and NetworKit's ``DynBFS.updateBatch``;
``ratio`` fields are vinestream's time over the best peer's (below 1: faster).
Each batch fraction runs ``batches`` consecutive batches and reports means.

Everything is measured side by side in one run; times are medians of
``repeats`` runs after a warm-up (kernel compilation on the GPU).  A static run
and its peers' are timed in ``pairs`` interleaved rounds (ours, peer, ..., then
the reverse order; BFS three times as many rounds) and compared by medians, the
minima kept beside them: a best-of-3 peer against our median had shown a 1.6x
that 15 interleaved pairs measured as 1.0x on a shared 2-core machine.  The result
is a JSON-serialisable dict; :func:`format_table` renders it.
"""
from __future__ import annotations

import statistics
import time

import numpy as np
import pyarrow as pa

from vinestream.algorithms import create_job
from vinestream.algorithms import pagerank_kernels as pk
from vinestream.algorithms.bfs import bfs_arrays, bfs_direction_optimizing, bfs_scipy, csr_expander
from vinestream.algorithms.compressed import FixedLengthCSR, bfs_compressed
from vinestream.algorithms.edge_index import transpose
from vinestream.connectors.synthetic import rmat_simple_edges
from vinestream.stream.bench.structures import load_edge_list
from vinestream.stream.events.schema import EVENT_SCHEMA
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures.array_ops import split_keys, unique_sorted
from vinestream.structures.backend import backend_name, synchronize, to_numpy
from vinestream.structures.csr_types import csr_from_edges
from vinestream.structures.delta import BatchDelta, apply_delta
from vinestream.structures.registry import build

from . import peers as pe

BATCH_FRACTIONS = (1e-4, 1e-3, 1e-2, 1e-1)
JOB_NAMES = ("pagerank", "bfs", "triangles")


class IdentityVertexMap:
    """Internal ids are the external ids (benchmark graphs are built on dense ids)."""

    def __init__(self, xp):
        self.xp = xp

    def lookup(self, external):
        return self.xp.asarray(external).astype(np.int32)

    def external(self, internal):
        return self.xp.asarray(internal).astype(np.int64)


def rmat_edges(xp, scale: int, edge_factor: int, seed: int = 0):
    """Distinct non-loop R-MAT edges (src, dst) as int64 on ``xp`` (Graph500 parameters)."""
    return rmat_simple_edges(xp, scale, edge_factor, seed)


def edge_keys_of(graph) -> object:
    """The graph's edges as sorted ``(src << 32) | dst`` keys."""
    csr = graph.adjacency()
    return unique_sorted(graph.xp, (csr.row_ids().astype(np.int64) << 32) | csr.cols.astype(np.int64))


def random_delta(xp, graph, changes: int, seed: int) -> BatchDelta:
    """Half deletions of existing edges, half insertions of absent non-loop edges."""
    rs = xp.random.RandomState(seed)
    keys = edge_keys_of(graph)
    live = graph.vertices().astype(np.int64)      # new edges join live vertices only (the interface)
    n = int(live.shape[0])
    n_del = changes // 2
    pos = unique_sorted(xp, rs.randint(0, keys.shape[0], size=n_del).astype(np.int64))
    del_s, del_d = split_keys(keys[pos])
    want = changes - int(pos.shape[0])
    s = live[rs.randint(0, n, size=2 * want + 16)]
    d = live[rs.randint(0, n, size=2 * want + 16)]
    cand = unique_sorted(xp, ((s << 32) | d)[s != d])
    cand = cand[~graph.contains((cand >> 32).astype(np.int32), (cand & 0xFFFFFFFF).astype(np.int32))][:want]
    ins_s, ins_d = split_keys(cand)
    e = xp.zeros(0, dtype=np.int32)
    return BatchDelta(0, e, e, ins_s, ins_d, xp.ones(ins_s.shape[0], dtype=np.float32),
                      del_s, del_d, e, e, xp.zeros(0, dtype=np.float32))


def _timed(xp, fn, repeats: int = 1):
    """(median seconds, last result) of ``fn()`` over ``repeats`` runs."""
    times, out = [], None
    for _ in range(max(1, repeats)):
        synchronize(xp)
        t0 = time.perf_counter()
        out = fn()
        synchronize(xp)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _spmv_seconds(xp, csr, repeats: int) -> float | None:
    """One y = A^T x on the same CSR with the library sparse matrix (the PageRank iteration's core); None on the
    host without SciPy (the ``peers`` extra), whose SpMV is the reference there."""
    n = csr.num_rows
    if xp is np:
        try:
            import scipy.sparse as sp
        except ImportError:
            return None
        a = sp.csr_matrix((np.ones(csr.num_edges), to_numpy(csr.cols), to_numpy(csr.offsets)), shape=(n, n))
    else:
        import cupyx.scipy.sparse as sp
        a = sp.csr_matrix((xp.ones(csr.num_edges, dtype=np.float64), csr.cols, csr.offsets), shape=(n, n))
    at = a.T
    x = xp.ones(n, dtype=np.float64) / n
    _ = at @ x                                                  # warm-up
    secs, _ = _timed(xp, lambda: at @ x, max(3, repeats))
    return secs


def _google_sweep_seconds(xp, csr, repeats: int, count: int = 30) -> float | None:
    """One fused Google-matrix sweep as the GPU's static run queues them (chunks of sweeps, one host read per
    chunk), from ``count`` sweeps with the stop test off; the time the static run adds per iteration (the
    transpose and the first iterate are its fixed costs).  None on the host (no fused sweep there)."""
    if xp is np:
        return None
    n = csr.num_rows
    sweep = pk.GoogleSweep(xp, csr, n, 0.85, xp.ones(n, dtype=bool))
    sweep.run(xp.full(n, 1.0 / n), n, 0.0, count)              # warm-up
    secs, _ = _timed(xp, lambda: sweep.run(xp.full(n, 1.0 / n), n, 0.0, count), max(3, repeats))
    return secs / count


def _host_edges(graph):
    csr = graph.adjacency()
    return to_numpy(csr.row_ids()).astype(np.int64), to_numpy(csr.cols).astype(np.int64)


def _ratio(ours, theirs: dict):
    """(best peer name, its seconds, ours / best) over the peers that ran."""
    ran = {k: v for k, v in theirs.items() if isinstance(v, (int, float)) and v > 0}
    if not ran or not ours:
        return None, None, None
    best = min(ran, key=ran.get)
    return best, ran[best], ours / ran[best]


#: static peer comparisons: rounds of interleaved runs (ours and every peer once each, the order reversed every
#: other round) after one untimed round; BFS, a few ms a run, takes BFS_PAIRS_FACTOR times as many rounds
STATIC_PAIRS = 5
BFS_PAIRS_FACTOR = 3


def _interleaved(runs: dict, pairs: int, warm_up: bool = True) -> dict:
    """Seconds of each run of ``runs`` (name -> callable returning its seconds) over ``pairs`` rounds in which
    every run goes once, in the given order on even rounds and reversed on odd ones (ours, peer, peer, ours,
    ...): on a shared, noisy machine a slow spell then hits both sides alike instead of one side's separate
    block of repeats.  ``warm_up``: one untimed round first (a peer's first call pays its own set-up)."""
    names = list(runs)
    if warm_up:
        for k in names:
            runs[k]()
    times = {k: [] for k in names}
    for r in range(max(1, int(pairs))):
        for k in (names if r % 2 == 0 else names[::-1]):
            times[k].append(float(runs[k]()))
    return times


def _paired_summary(times: dict, peers) -> dict:
    """Medians (the figures), minima, the best peer by median, ours over it by medians (``ratio``), by minima
    and the median of the per-round ratios, from :func:`_interleaved`'s ``times`` (``ours`` and ``peers``)."""
    med = {k: statistics.median(v) for k, v in times.items()}
    out = {k: med[k] for k in times if k != "ours"}
    out.update({f"{k}_min": min(v) for k, v in times.items() if k != "ours"})
    out["ours_min"] = min(times["ours"])
    out["pairs"] = len(times["ours"])
    out["seconds"] = {k: list(v) for k, v in times.items()}
    ran = [k for k in peers if k in med]
    if ran:
        best = min(ran, key=med.get)
        out["ratio_of_minima"] = min(times["ours"]) / min(times[best])
        out["pair_ratio_median"] = statistics.median(o / p for o, p in zip(times["ours"], times[best]) if p > 0)
    return out


def _static_peers(xp, graph, n: int, source: int, tol: float, ours: dict, have: dict,
                  reference: dict | None = None, pairs: int = STATIC_PAIRS) -> dict:
    """The peers' static PageRank, BFS and triangles on the same graph, with ratios to ours.

    ``ours``: per job, callables returning the seconds of one of our static runs (``"pagerank"``,
    ``"bfs"``, ``"triangles"``; ``"bfs_traversal"`` and ``"bfs_array_traversal"``: the traversal alone).
    Every job's runs and its peers' are interleaved (:func:`_interleaved`, ``pairs`` rounds; BFS
    ``BFS_PAIRS_FACTOR`` times as many) and the figures are medians (minima kept as ``*_min``):
    ``ratio`` = our median over the best peer's median.  pylibcugraph times itself (the median of its own
    repeats, :func:`peers.cugraph_runs`: one call runs all three jobs) and is compared as it reports.
    ``reference`` (our ranks, distances and triangle total) checks what every peer returns: the L1
    distance of its ranks to ours (``<peer>_l1_to_ours``), whether its BFS distances and its triangle total
    agree with ours (``<peer>_agrees``); :func:`peer_disagreements` lists those that do not.
    """
    out = {"pagerank": {}, "bfs": {}, "triangles": {}}
    runs = {"pagerank": {}, "bfs": {}, "triangles": {}}
    extra = {}                                     # what a peer's run returns besides its seconds (the last run)

    def keep(job, fn, **picks):
        def run():
            res = fn()
            for key, pick in picks.items():
                extra[job, key] = pick(res)
            return res[0] if isinstance(res, tuple) else res
        return run
    if xp is np:
        src, dst = _host_edges(graph)
        ref = reference or {}
        ranks = None if ref.get("ranks") is None else to_numpy(ref["ranks"])[:n]
        dist = None if ref.get("dist") is None else to_numpy(ref["dist"])[:n].astype(np.int64)

        def l1(x):
            return None if ranks is None else float(np.abs(np.asarray(x, dtype=np.float64) - ranks).sum())

        def same_dist(d):
            return None if dist is None else bool((np.asarray(d) == dist).all())
        if have.get("scipy"):
            a = pe.scipy_matrix(src, dst, n)
            # the ranks checked are the timed runs' (an extra untimed run computed them again)
            runs["pagerank"]["scipy"] = keep("pagerank", lambda: pe.scipy_pagerank(a, n, tol=tol),
                                             scipy_iterations=lambda r: r[2], scipy_l1_to_ours=lambda r: l1(r[1]))
            runs["bfs"]["scipy"] = lambda: pe.scipy_bfs(a, source)[0]
            extra["bfs", "scipy_agrees"] = same_dist(pe.scipy_bfs_distances(a, source))
            if src.shape[0] <= pe.SCIPY_TRIANGLES_MAX_EDGES:
                runs["triangles"]["scipy"] = keep("triangles", lambda: pe.scipy_triangles(src, dst, n),
                                                  scipy_total=lambda r: r[1])
        if have.get("networkit"):
            g = pe.nk_graph(src, dst, n)
            gu = pe.nk_graph(src, dst, n, directed=False)
            runs["pagerank"]["networkit"] = keep("pagerank", lambda: pe.nk_pagerank(g, tol=tol),
                                                 networkit_iterations=lambda r: r[1],
                                                 networkit_l1_to_ours=lambda r: l1(r[2]))
            runs["bfs"]["networkit"] = lambda: pe.nk_bfs(g, source)
            extra["bfs", "networkit_agrees"] = same_dist(pe.nk_bfs_distances(g, source))
            runs["triangles"]["networkit"] = keep("triangles", lambda: pe.nk_triangles(gu),
                                                  networkit_total=lambda r: r[1])
    else:
        csr = graph.adjacency()
        ref = reference or {}
        if have.get("cupyx"):                    # one timed run per call (each after its own untimed one)
            runs["pagerank"]["cupyx"] = keep("pagerank", lambda: pe.cupyx_pagerank(
                xp, csr.offsets, csr.cols, n, tol=tol, repeats=1), cupyx_iterations=lambda r: r[2])
            runs["bfs"]["cupyx"] = keep("bfs", lambda: pe.cupyx_bfs(
                xp, csr.offsets, csr.cols, n, source),
                cupyx_agrees=lambda r: None if ref.get("dist") is None else bool(
                    (r[1] == ref["dist"][:n].astype(np.int32)).all()))
            if csr.num_edges <= pe.CUPYX_TRIANGLES_MAX_EDGES:
                rows = csr.row_ids()
                runs["triangles"]["cupyx"] = keep("triangles", lambda: pe.cupyx_triangles(
                    xp, rows, csr.cols, n), cupyx_total=lambda r: r[1])
        if have.get("pylibcugraph"):
            cg = pe.cugraph_runs(xp, csr.offsets, csr.cols, n, source, tol=tol)
            if "pagerank_seconds" in cg:
                out["pagerank"]["pylibcugraph"] = cg["pagerank_seconds"]
                if ref.get("ranks") is not None:
                    out["pagerank"]["pylibcugraph_l1_to_ours"] = float(
                        xp.abs(cg["pagerank_ranks"] - ref["ranks"][:n]).sum())
            if "bfs_seconds" in cg:
                out["bfs"]["pylibcugraph"] = cg["bfs_seconds"]
                if ref.get("dist") is not None:
                    out["bfs"]["pylibcugraph_agrees"] = bool(
                        (cg["bfs_distances"] == ref["dist"][:n].astype(np.int64)).all())
            if "triangles_seconds" in cg:
                out["triangles"]["pylibcugraph"] = cg["triangles_seconds"]
                out["triangles"]["pylibcugraph_total"] = cg["triangles_total"]
                if ref.get("triangles") is not None:
                    out["triangles"]["pylibcugraph_agrees"] = cg["triangles_total"] == ref["triangles"]
            if "error" in cg:
                out["pylibcugraph_error"] = cg["error"]
    for job in ("pagerank", "bfs", "triangles"):
        mine = {"ours": ours[job]}
        if job == "bfs":                           # the traversal alone, in the same rounds
            mine.update({k: ours[f"bfs_{k[5:]}"] for k in ("ours_traversal", "ours_array_traversal")
                         if ours.get(f"bfs_{k[5:]}") is not None})
        times = _interleaved({**mine, **runs[job]}, pairs * (BFS_PAIRS_FACTOR if job == "bfs" else 1))
        out[job].update(_paired_summary(times, runs[job]))
        if job == "bfs" and "ours_traversal" not in times and "ours_array_traversal" in times:
            out[job]["ours_traversal"] = out[job]["ours_array_traversal"]    # the job's traversal (GPU)
        ours_med = statistics.median(times["ours"])
        best, secs, ratio = _ratio(ours_med, {k: v for k, v in out[job].items()
                                              if k in ("scipy", "networkit", "cupyx", "pylibcugraph")})
        out[job].update({"ours": ours_med, "best_peer": best, "best_peer_seconds": secs, "ratio": ratio})
    for (job, key), value in extra.items():
        out[job][key] = value
    tri_total = (reference or {}).get("triangles")
    if tri_total is not None:
        out["triangles"]["ours_total"] = int(tri_total)
        for key, total in list(out["triangles"].items()):
            # cuGraph's agreement is set above; ours is no peer (it "agreed" with itself, and counted as a check)
            if key.endswith("_total") and key not in ("pylibcugraph_total", "ours_total"):
                out["triangles"][f"{key.removesuffix('_total')}_agrees"] = int(total) == int(tri_total)
    out["tol"] = tol
    out["disagreements"] = peer_disagreements(out, tol)
    out["checked"] = peer_checks(out)
    bfs = out["bfs"]
    if "ours_traversal" in bfs:
        bfs["traversal_ratio"] = bfs["ours_traversal"] / bfs["best_peer_seconds"] if bfs["best_peer_seconds"] \
            else None
    return out


#: PageRank results further apart (L1) than this many times the tolerance disagree: each run stops within about
#: tol * d / (1 - d) (5.7 tol at d = 0.85) of the fixpoint, so two correct runs lie within about 12 tol
PAGERANK_L1_TOLERANCES = 100


def peer_disagreements(peers: dict, tol: float) -> list[str]:
    """What a peer computed differently from ours on the same graph, one phrase each: BFS distances or a triangle
    total that differ (``<peer>_agrees`` false), ranks further than PAGERANK_L1_TOLERANCES * ``tol`` in L1."""
    out = []
    for job in JOB_NAMES:
        for key, value in (peers.get(job) or {}).items():
            if key.endswith("_agrees") and value is False:
                peer = key.removesuffix("_agrees")
                what = "distances differ" if job == "bfs" else "total differs"
                detail = (f" ({peers[job].get(f'{peer}_total')} vs ours {peers[job].get('ours_total')})"
                          if job == "triangles" else "")
                out.append(f"{job}: {peer}'s {what} from ours{detail}")
            elif key.endswith("_l1_to_ours") and value is not None and value > PAGERANK_L1_TOLERANCES * tol:
                out.append(f"{job}: {key.removesuffix('_l1_to_ours')}'s ranks are {value:.3g} from ours in L1 "
                           f"(tolerance {tol:g})")
    return out


def peer_checks(peers: dict) -> list[str]:
    """The checks of ours against a peer that ran (``job: peer``, each once): those :func:`peer_disagreements` reads.
    Empty where no peer ran: then nothing says ours agrees."""
    out = []
    for job in JOB_NAMES:
        for key, value in (peers.get(job) or {}).items():
            for suffix in ("_agrees", "_l1_to_ours"):
                if key.endswith(suffix) and value is not None and f"{job}: {key.removesuffix(suffix)}" not in out:
                    out.append(f"{job}: {key.removesuffix(suffix)}")
    return out


def _bench_graph(xp, name: str, src, dst, n: int, fractions, repeats: int, seed: int,
                 batches: int = 1, with_peers: bool = True, tol: float = 1e-6, pairs: int = STATIC_PAIRS) -> dict:
    vm = IdentityVertexMap(xp)
    graph = build("csr", xp, src, dst, n)
    del src, dst
    m = graph.num_edges
    csr = graph.adjacency()
    deg = xp.diff(csr.offsets)
    source = int(xp.argmax(deg))
    cap = int(graph.vertex_capacity)
    out = {"graph": name, "vertices": int(n), "edges": int(m), "bfs_source": source}

    # -- static runs, plus the per-iteration / SpMV / traversal rates -------------------------
    params = {"bfs": {"sources": [source]}, "pagerank": {"tol": tol}}
    jobs = {j: create_job(j, xp, **params.get(j, {})) for j in JOB_NAMES}
    static = {}
    for j, job in jobs.items():
        job.run_static(graph, vm)                                # warm-up (and the state to update)
        secs, _ = _timed(xp, lambda job=job: job.run_static(graph, vm), repeats)
        static[j] = {"seconds": secs, "work": dict(job.work)}
    pr_iters = max(1, int(static["pagerank"]["work"]["iterations"]))
    out["pagerank"] = {"static_seconds": static["pagerank"]["seconds"], "iterations": pr_iters,
                       "iteration_seconds": static["pagerank"]["seconds"] / pr_iters,
                       "spmv_seconds": _spmv_seconds(xp, csr, repeats)}
    spmv = out["pagerank"]["spmv_seconds"]
    out["pagerank"]["iteration_over_spmv"] = out["pagerank"]["iteration_seconds"] / spmv if spmv else None
    sweep_secs = _google_sweep_seconds(xp, csr, repeats)
    if sweep_secs is not None:          # the fused sweep alone (the static run's time per iteration above
        out["pagerank"]["sweep_seconds"] = sweep_secs           # also carries its transpose and set-up)
        out["pagerank"]["sweep_over_spmv"] = sweep_secs / spmv

    out["bfs"] = _bfs_rates(xp, csr, n, source, repeats)
    # the in-edge transpose the job's static run builds (GPU; the host job runs scipy's BFS and builds none)
    bfs_job = jobs["bfs"]
    t_transpose, in_csr = _timed(xp, lambda: transpose(xp, csr, cap, bfs_job.library_transpose,
                                                       fused=bfs_job.fused_transpose), max(3, repeats))
    t_array, do = _timed(xp, lambda: bfs_direction_optimizing(xp, csr, in_csr, cap, [source]), max(3, repeats))
    t_trav = t_array                                    # the traversal the job runs: scipy's on the host
    if jobs["bfs"].library_bfs:
        t_trav, _ = _timed(xp, lambda: bfs_scipy(csr, cap, [source]), max(3, repeats))
    out["bfs"].update({"static_seconds": static["bfs"]["seconds"], "traversal_seconds": t_trav,
                       "array_traversal_seconds": t_array, "bottom_up_levels": int(do[4]),
                       "transpose_seconds": t_transpose if not bfs_job.library_bfs else 0.0})
    tri = static["triangles"]
    und = int(tri["work"]["undirected_edges"])
    out["triangles"] = {"triangles": int(jobs["triangles"].total), "undirected_edges": und,
                        "static_seconds": tri["seconds"], "static_edges_per_second": und / tri["seconds"]}
    have = pe.available() if with_peers else {}
    out["peers_available"] = have
    if with_peers:
        # our static runs as the peers are timed: interleaved with theirs, medians (_static_peers)
        def ours_run(fn):
            return lambda: _timed(xp, fn)[0]
        ours = {j: ours_run(lambda job=job: job.run_static(graph, vm)) for j, job in jobs.items()}
        ours["bfs_array_traversal"] = ours_run(lambda: bfs_direction_optimizing(xp, csr, in_csr, cap, [source]))
        if jobs["bfs"].library_bfs:                          # else the traversal the job runs is the array one
            ours["bfs_traversal"] = ours_run(lambda: bfs_scipy(csr, cap, [source]))
        reference = {"ranks": jobs["pagerank"].ranks(), "dist": jobs["bfs"].dist,
                     "triangles": int(jobs["triangles"].total)}
        out["peers"] = _static_peers(xp, graph, int(n), source, tol, ours, have, reference, pairs)
        out["peers"]["pagerank"]["ours_iterations"] = pr_iters
    csr = in_csr = None                                      # free them before the batches

    # -- batches: incremental update against a from-scratch run on the same graph -------------
    # The sequence runs twice and only the second pass is reported: an incremental update
    # cannot be repeated on the same delta, and its first run on a GPU includes compiling the
    # kernels of the code paths that batch size selects.
    for warm_up in (True, False):
        rows = _bench_batches(xp, graph, jobs, params, vm, m, fractions, seed + (0 if warm_up else 1000),
                              batches=1 if warm_up else batches, peers=have if not warm_up else {},
                              source=source, tol=tol, num_vertices=int(n))
    out["batches"] = rows
    return out


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _bench_batches(xp, graph, jobs, params, vm, m, fractions, seed, *, batches: int = 1, peers=None,
                   source: int = 0, tol: float = 1e-6, num_vertices: int | None = None) -> list:
    """Per fraction, ``batches`` consecutive random deltas: each job's update against a recompute of
    ours and of the peers on the already-updated graph (means over the batches)."""
    peers = peers or {}
    rows = []
    n = int(num_vertices if num_vertices is not None else graph.vertex_capacity)
    nk_state = None
    prev_ranks = None
    if peers.get("networkit") and xp is np:
        s0, d0 = _host_edges(graph)
        g_nk = pe.nk_graph(s0, d0, n)
        nk_state = (g_nk, pe.nk_dynbfs(g_nk, source))
    if peers.get("scipy") and xp is np:
        prev_ranks = to_numpy(jobs["pagerank"].ranks())[:n]
    for i, f in enumerate(fractions):
        changes = max(2, int(round(f * m)))
        per = {j: [] for j in JOB_NAMES}
        peer_rows = {"pagerank": [], "bfs": [], "triangles": []}
        for b in range(batches):
            delta = random_delta(xp, graph, changes, seed + 1 + i * 97 + b)
            apply_delta(graph, delta)
            for j, job in jobs.items():
                t_inc, _ = _timed(xp, lambda job=job, delta=delta: job.update(graph, delta, vm))
                inc_work = dict(job.work)
                fresh = create_job(j, xp, **params.get(j, {}))
                t_static, _ = _timed(xp, lambda fresh=fresh: fresh.run_static(graph, vm))
                r = {"incremental_seconds": t_inc, "static_seconds": t_static,
                     "incremental_mode": inc_work.get("mode"),
                     "incremental_iterations": int(inc_work.get("iterations", 0)),
                     "incremental_edges_touched": int(inc_work.get("edges_touched", 0)),
                     "static_edges_touched": int(fresh.work.get("edges_touched", 0))}
                if j == "triangles":
                    r["changed_undirected"] = int(inc_work.get("changed_undirected", delta.num_changed_edges))
                    r["agrees"] = int(job.total) == int(fresh.total)
                elif j == "bfs":
                    r["agrees"] = bool((job.dist[: fresh.dist.shape[0]] == fresh.dist).all())
                else:
                    r["l1_to_static"] = float(xp.abs(job.ranks() - fresh.ranks()).sum())
                    r["error_bound"] = float(inc_work.get("error_bound", 0.0))
                per[j].append(r)
            if xp is np and (peers.get("scipy") or nk_state):
                s_h, d_h = _host_edges(graph)
                if peers.get("scipy"):
                    a = pe.scipy_matrix(s_h, d_h, n)
                    at = a.T.tocsr()
                    secs, x, it = pe.scipy_pagerank(a, n, tol=tol, x0=prev_ranks, at=at)
                    prev_ranks = x
                    exact = jobs["pagerank"]
                    ours_ranks = to_numpy(exact.ranks())[:n]
                    peer_rows["pagerank"].append({"scipy_warm": secs, "scipy_warm_iterations": it,
                                                  "scipy_l1_to_ours": float(np.abs(x - ours_ranks).sum())})
                    peer_rows["bfs"].append({"scipy": pe.scipy_bfs(a, source)[0]})
                else:
                    peer_rows["pagerank"].append({})
                    peer_rows["bfs"].append({})
                if nk_state:
                    g_nk, dyn = nk_state
                    peer_rows["bfs"][-1]["networkit_dynbfs"] = pe.nk_apply_and_update(
                        g_nk, dyn, to_numpy(delta.inserted_src), to_numpy(delta.inserted_dst),
                        to_numpy(delta.deleted_src), to_numpy(delta.deleted_dst))
                    peer_rows["bfs"][-1]["networkit"] = pe.nk_bfs(g_nk, source)
                    peer_rows["triangles"].append({"networkit": pe.nk_triangles(pe.nk_graph(s_h, d_h, n,
                                                                                            directed=False))[0]})
                    peer_rows["pagerank"][-1]["networkit_cold"] = pe.nk_pagerank(g_nk, tol=tol)[0]
        row = {"fraction": f, "changed_edges": int(changes), "batches": batches}
        for j in JOB_NAMES:
            rs = per[j]
            agg = {k: _mean([r[k] for r in rs]) for k in ("incremental_seconds", "static_seconds",
                                                          "incremental_edges_touched", "static_edges_touched",
                                                          "incremental_iterations")}
            agg["speedup"] = (agg["static_seconds"] / agg["incremental_seconds"]
                              if agg["incremental_seconds"] else None)
            agg["incremental_mode"] = rs[-1]["incremental_mode"]
            agg["modes"] = [r["incremental_mode"] for r in rs]
            if j == "triangles":
                agg["agrees"] = all(r["agrees"] for r in rs)
                agg["changed_edges_per_second"] = (_mean([r["changed_undirected"] for r in rs])
                                                   / agg["incremental_seconds"] if agg["incremental_seconds"] else None)
            elif j == "bfs":
                agg["agrees"] = all(r["agrees"] for r in rs)
            else:
                agg["l1_to_static"] = max(r["l1_to_static"] for r in rs)
                agg["error_bound"] = max(r["error_bound"] for r in rs)
            prs = peer_rows[j]
            if prs and any(prs):
                keys = sorted({k for r in prs for k in r})
                peer = {k: _mean([r.get(k) for r in prs]) for k in keys}
                timing = {k: v for k, v in peer.items() if not k.endswith(("iterations", "l1_to_ours"))}
                recompute = {k: v for k, v in timing.items() if k != "networkit_dynbfs"}
                best, secs, ratio = _ratio(agg["incremental_seconds"], recompute)
                peer.update({"best_recompute": best, "best_recompute_seconds": secs,
                             "speedup_over_best_recompute": (1 / ratio) if ratio else None})
                if "networkit_dynbfs" in peer:
                    peer["over_dynbfs"] = agg["incremental_seconds"] / peer["networkit_dynbfs"]
                peer["disagreements"] = peer_disagreements({j: peer}, tol)      # the warm scipy ranks' L1
                agg["peers"] = peer
            row[j] = agg
        rows.append(row)
    return rows


def bench_algorithms(xp=np, scales=(14,), edge_factor: int = 16, real=None,
                     fractions=BATCH_FRACTIONS, repeats: int = 1, seed: int = 0, batches: int = 1,
                     peers: bool = True, pairs: int = STATIC_PAIRS, loaded: dict | None = None) -> dict:
    """Benchmark the three jobs on R-MAT graphs of ``scales`` and the graph files ``real`` (a path or a
    list), against the installed peers (static runs: ``pairs`` interleaved rounds, :func:`_static_peers`);
    JSON-serialisable.  ``loaded`` maps a path to the host arrays ``load_edge_list(np, path)`` gave already
    (bench's up-front check), used instead of reading the file again."""
    if isinstance(scales, int):
        scales = [scales]
    if isinstance(real, str):
        real = [real]
    result = {"backend": backend_name(xp), "edge_factor": int(edge_factor),
              "fractions": [float(f) for f in fractions], "batches_per_fraction": int(batches), "graphs": []}
    for scale in scales:
        s, d = rmat_edges(xp, scale, edge_factor, seed)
        result["graphs"].append(_bench_graph(xp, f"rmat{scale}-{edge_factor}", s, d, 1 << int(scale),
                                             fractions, repeats, seed, batches, peers, pairs=pairs))
    for path in real or ():
        if (loaded or {}).get(path) is not None:
            s, d, n = xp.asarray(loaded[path][0]), xp.asarray(loaded[path][1]), loaded[path][2]
        else:
            s, d, n = load_edge_list(xp, path)
        keep = s != d
        s, d = s[keep], d[keep]
        name = str(path).rsplit("/", 1)[-1].split(".")[0]
        result["graphs"].append(_bench_graph(xp, name, s, d, n, fractions, repeats, seed, batches, peers,
                                             pairs=pairs))
    return _plain(result)


def _bfs_rates(xp, csr, n: int, source: int, repeats: int) -> dict:
    """BFS from ``source`` on the plain CSR and on its Fixed-Length compressed form: TEPS and bytes."""
    fl = FixedLengthCSR.from_csr(xp, csr, n)
    srcs = xp.asarray([source], dtype=np.int64)

    def plain():
        return bfs_arrays(xp, n, srcs, csr_expander(xp, csr))

    def compressed():
        return bfs_compressed(xp, fl, srcs, n)

    plain(), compressed()                                   # warm-up (kernel compilation on a GPU)
    t_plain, (dist, _, levels, scanned) = _timed(xp, plain, repeats)
    t_fl, (dist_fl, _, _, scanned_fl) = _timed(xp, compressed, repeats)
    return {"levels": int(levels), "edges_traversed": int(scanned), "reached": int((dist >= 0).sum()),
            "plain_seconds": t_plain, "plain_teps": scanned / t_plain,
            "compressed_seconds": t_fl, "compressed_teps": scanned_fl / t_fl,
            "plain_bytes": int(csr.offsets.nbytes + csr.cols.nbytes), "compressed_bytes": int(fl.nbytes()),
            "bits": int(fl.bits), "same_result": bool((dist == dist_fl).all())}


def bench_bfs(xp=np, scale: int = 16, edge_factor: int = 16, repeats: int = 3, seed: int = 0) -> dict:
    """BFS alone on a large R-MAT graph (the Graph500 setting: scale 22, edge factor 64 on a GPU):
    traversed edges per second on the plain CSR and on the Fixed-Length compressed CSR."""
    n = 1 << int(scale)
    src, dst = rmat_edges(xp, scale, edge_factor, seed)
    csr = csr_from_edges(xp, src, dst, None, n)
    del src, dst
    source = int(xp.argmax(xp.diff(csr.offsets)))
    return {"backend": backend_name(xp), "graph": f"rmat{scale}-{edge_factor}", "vertices": n,
            "edges": csr.num_edges, "source": source, **_bfs_rates(xp, csr, n, source, repeats)}


def format_bfs_table(r: dict) -> str:
    return (f"BFS ({r['backend']}) on {r['graph']}: {r['vertices']:,} vertices, {r['edges']:,} edges; "
            f"{r['reached']:,} reached in {r['levels']} levels\n"
            f"  plain CSR      {r['plain_teps'] / 1e9:8.3f} GTEPS  {r['plain_seconds'] * 1e3:9.2f} ms  "
            f"{r['plain_bytes'] / 2**20:9.1f} MiB\n"
            f"  FL-{r['bits']} CSR     {r['compressed_teps'] / 1e9:8.3f} GTEPS  "
            f"{r['compressed_seconds'] * 1e3:9.2f} ms  "
            f"{r['compressed_bytes'] / 2**20:9.1f} MiB  same result: {r['same_result']}")


def _plain(x):
    """Python scalars only (NumPy / CuPy scalars converted) so json.dumps works."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x)
    return x


def _ms(seconds) -> str:
    """Milliseconds to 3 significant digits: a 0.04 ms peer printed as "0.0 ms" beside a ratio of 5.25."""
    return f"{seconds * 1e3:.3g} ms"


def _rate(x) -> str:
    return "-" if x is None else f"{x:.3g}"


def format_table(result: dict) -> str:
    """A plain-text report of :func:`bench_algorithms`'s result."""
    lines = [f"algorithms ({result['backend']})"]
    for g in result["graphs"]:
        pr, bfs, tri = g["pagerank"], g["bfs"], g["triangles"]
        lines.append(f"\n{g['graph']}: {g['vertices']:,} vertices, {g['edges']:,} edges")
        spmv = (f"vs SpMV {pr['spmv_seconds'] * 1e3:.3f} ms ({pr['iteration_over_spmv']:.2f}x)"
                if pr["spmv_seconds"] else "(no library SpMV: SciPy is not installed)")
        lines.append(f"  pagerank static {pr['static_seconds'] * 1e3:.1f} ms, {pr['iterations']} iterations, "
                     f"{pr['iteration_seconds'] * 1e3:.3f} ms/iteration {spmv}"
                     + (f"; one fused sweep {pr['sweep_seconds'] * 1e3:.3f} ms ({pr['sweep_over_spmv']:.2f}x)"
                        if "sweep_seconds" in pr else ""))
        lines.append(f"  bfs from {g['bfs_source']}: {bfs['reached']:,} reached, {bfs['levels']} levels; "
                     f"plain {bfs['plain_teps'] / 1e6:.1f} MTEPS ({bfs['plain_bytes'] / 2**20:.1f} MiB), "
                     f"FL-{bfs['bits']} {bfs['compressed_teps'] / 1e6:.1f} MTEPS "
                     f"({bfs['compressed_bytes'] / 2**20:.1f} MiB)")
        lines.append(f"  triangles {tri['triangles']:,}: static {tri['static_edges_per_second'] / 1e6:.2f} M edges/s")
        lines.append(f"  {'batch':>8} {'changed':>9} | " + " | ".join(
            f"{j:>9} inc ms  static ms  speedup  work ratio" for j in JOB_NAMES))
        for row in g["batches"]:
            cells = []
            for j in JOB_NAMES:
                r = row[j]
                ratio = (r["static_edges_touched"] / r["incremental_edges_touched"]
                         if r["incremental_edges_touched"] else None)
                cells.append(f"{r['incremental_seconds'] * 1e3:>16.2f} {r['static_seconds'] * 1e3:>10.2f} "
                             f"{_rate(r['speedup']):>8} {_rate(ratio):>11}")
            lines.append(f"  {row['fraction'] * 100:>7.2g}% {row['changed_edges']:>9,} | " + " | ".join(cells))
        inc = [row["triangles"].get("changed_edges_per_second") for row in g["batches"]]
        lines.append("  triangles incremental changed edges/s: " + ", ".join(_rate(x) for x in inc))
        peers = g.get("peers")
        if peers:
            lines.append("  static vs best peer (ours / peer, < 1 is faster; medians of interleaved rounds, "
                         "pairs and the ratio of minima in brackets):")
            for j in JOB_NAMES:
                p = peers[j]
                extra = ""
                if j == "pagerank":
                    counts = [("ours", p.get("ours_iterations"))] + [
                        (k.removesuffix("_iterations"), v) for k, v in p.items()
                        if k.endswith("_iterations") and k != "ours_iterations" and v is not None]
                    extra = "  iterations " + ", ".join(f"{name} {v}" for name, v in counts)
                if j == "bfs" and p.get("traversal_ratio") is not None:
                    extra = f"  traversal only {_ms(p['ours_traversal'])} = {p['traversal_ratio']:.2f}x"
                    if p.get("ours_array_traversal"):
                        extra += (f"; direction-optimizing array program {_ms(p['ours_array_traversal'])}"
                                  f" = {p['ours_array_traversal'] / p['best_peer_seconds']:.2f}x")
                cugraph = p.get("pylibcugraph")
                if cugraph and p.get("best_peer") != "pylibcugraph":     # cuGraph's time always shows (issue 12)
                    extra += f"; pylibcugraph {_ms(cugraph)} = {p['ours'] / cugraph:.3g}x"
                if p.get("best_peer") is None:              # none of its peers installed: say so, not "best None"
                    lines.append(f"    {j:<10} ours {_ms(p['ours']):>12}  no peer installed "
                                 "(pip install 'vinestream[peers]': scipy, networkit)")
                    continue
                lines.append(f"    {j:<10} ours {_ms(p['ours']):>12}  best {p['best_peer']} "
                             f"{_ms(p['best_peer_seconds'] or 0):>12}  ratio {_rate(p['ratio'])} "
                             f"({p.get('pairs')} pairs, minima {_rate(p.get('ratio_of_minima'))}){extra}")
            if peers.get("disagreements"):
                lines.append("  PEERS DISAGREE with ours on this graph: " + "; ".join(peers["disagreements"]))
            elif peers.get("checked"):
                by_job: dict = {}
                for check in peers["checked"]:
                    job, peer = check.split(": ")
                    by_job.setdefault(job, []).append(peer)
                ran = "; ".join(f"{job} by {', '.join(names)}" for job, names in by_job.items())
                lines.append(f"  the peers agree with ours ({ran}: BFS distances and triangle totals equal, "
                             f"PageRank within {PAGERANK_L1_TOLERANCES} x tolerance {peers.get('tol', 0):g} in L1)")
            elif "disagreements" in peers:          # no peer ran: nothing was checked, so nothing agrees
                lines.append("  no peer result to check ours against")
            recomputes = any((row[j].get("peers") or {}).get("best_recompute") for row in g["batches"]
                             for j in JOB_NAMES)
            if not recomputes:      # no peer recomputes here (the GPU's peers are static only): no rows of dashes
                continue
            lines.append("  incremental vs the best peer recompute (speedup, > 1 is faster):")
            for row in g["batches"]:
                cells = []
                for j in JOB_NAMES:
                    p = row[j].get("peers") or {}
                    cell = f"{j} {_rate(p.get('speedup_over_best_recompute'))}x ({p.get('best_recompute')})"
                    if "over_dynbfs" in p:
                        cell += f", {_rate(p['over_dynbfs'])}x DynBFS's time"
                    if p.get("disagreements"):
                        cell += " DISAGREES: " + "; ".join(p["disagreements"])
                    cells.append(cell)
                lines.append(f"    {row['fraction'] * 100:>7.2g}%  " + "; ".join(cells))
    return "\n".join(lines)


def events_table(src, dst, op) -> pa.Table:
    """Host arrays of sources, destinations and ops as an event batch (EVENT_SCHEMA, weights 1, no ts)."""
    k = src.shape[0]
    return pa.table({"op": pa.array(op, pa.int8()), "src": pa.array(src, pa.int64()),
                     "dst": pa.array(dst, pa.int64()), "weight": pa.array(np.ones(k, np.float32)),
                     "ts": pa.array([None] * k, pa.timestamp("ms"))}, schema=EVENT_SCHEMA)


def churn_batch(rng, s, d, scale: int, size: int) -> pa.Table:
    """``size`` events on a loaded R-MAT graph (``s``, ``d`` on the host): deletes of half as many of its
    edges, inserts of random pairs for the rest."""
    half = size // 2
    pick = rng.integers(0, s.shape[0], half)
    src = np.concatenate([s[pick], rng.integers(0, 1 << scale, size - half)])
    dst = np.concatenate([d[pick], rng.integers(0, 1 << scale, size - half)])
    op = np.concatenate([np.full(half, 2, np.int8), np.ones(size - half, np.int8)])
    return events_table(src, dst, op)


def bench_pipeline_batches(xp=np, scale: int = 20, edge_factor: int = 16, structures=("graphvine", "coo"),
                           batch: int = 1000, batches: int = 20, seed: int = 0) -> dict:
    """One small batch through the pipeline's structure update (resolve + vertex + csr + delete +
    insert, no jobs) on an R-MAT graph already loaded: median seconds per batch and per phase."""
    s, d = rmat_edges(xp, scale, edge_factor, seed)
    s, d = to_numpy(s), to_numpy(d)
    rng = np.random.default_rng(seed)
    out = {"backend": backend_name(xp), "graph": f"rmat{scale}-{edge_factor}", "edges": int(s.shape[0]),
           "batch": int(batch), "structures": {}}
    for name in structures:
        p = build_pipeline(structure=name, backend=backend_name(xp))
        p.apply(events_table(s, d, np.ones(s.shape[0], np.int8)))
        per_batch, phases = [], {}
        for b in range(batches + 2):
            table = churn_batch(rng, s, d, scale, batch)
            synchronize(xp)
            t = time.perf_counter()
            result = p.apply(table)
            synchronize(xp)
            if b >= 2:                                   # the first batches compile kernels
                per_batch.append(time.perf_counter() - t)
                for phase, sec in result.seconds.items():
                    phases.setdefault(phase, []).append(sec)
        out["structures"][name] = {"seconds": statistics.median(per_batch),
                                   "phase_seconds": {k: statistics.median(v) for k, v in phases.items()}}
    return _plain(out)
