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

Everything is measured side by side in one run; times are medians of
``repeats`` runs after a warm-up (kernel compilation on the GPU).  The result
is a JSON-serialisable dict; :func:`format_table` renders it.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from vinestream.algorithms import create_job
from vinestream.algorithms.bfs import bfs_arrays, csr_expander
from vinestream.algorithms.compressed import FixedLengthCSR, bfs_compressed
from vinestream.connectors.synthetic import rmat_simple_edges
from vinestream.structures.array_ops import split_keys, unique_sorted
from vinestream.structures.backend import backend_name, synchronize, to_numpy
from vinestream.structures.csr_types import csr_from_edges
from vinestream.structures.delta import BatchDelta, apply_delta
from vinestream.structures.registry import build

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


def load_edge_list(xp, path: str):
    """(src, dst, n) from a Parquet file with src/dst columns or a whitespace edge list ('#' comments)."""
    import pyarrow.parquet as pq
    if str(path).endswith(".parquet"):
        t = pq.read_table(path, columns=["src", "dst"])
        s = t.column("src").to_numpy().astype(np.int64)
        d = t.column("dst").to_numpy().astype(np.int64)
    else:
        from pyarrow import csv
        t = csv.read_csv(path, read_options=csv.ReadOptions(column_names=["src", "dst"]),
                         parse_options=csv.ParseOptions(delimiter=" " if _spaces(path) else "\t"),
                         convert_options=csv.ConvertOptions(column_types={"src": "int64", "dst": "int64"}))
        s = t.column("src").to_numpy()
        d = t.column("dst").to_numpy()
    ids, inv = np.unique(np.concatenate([s, d]), return_inverse=True)
    return xp.asarray(inv[: s.shape[0]]), xp.asarray(inv[s.shape[0]:]), int(ids.shape[0])


def _spaces(path) -> bool:
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                return "\t" not in line
    return True


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


def _spmv_seconds(xp, csr, repeats: int) -> float:
    """One y = A^T x on the same CSR with the library sparse matrix (the PageRank iteration's core)."""
    n = csr.num_rows
    if xp is np:
        import scipy.sparse as sp
        a = sp.csr_matrix((np.ones(csr.num_edges), to_numpy(csr.cols), to_numpy(csr.offsets)), shape=(n, n))
    else:
        import cupyx.scipy.sparse as sp
        a = sp.csr_matrix((xp.ones(csr.num_edges, dtype=np.float64), csr.cols, csr.offsets), shape=(n, n))
    at = a.T
    x = xp.ones(n, dtype=np.float64) / n
    _ = at @ x                                                  # warm-up
    secs, _ = _timed(xp, lambda: at @ x, max(3, repeats))
    return secs


def _bench_graph(xp, name: str, src, dst, n: int, fractions, repeats: int, seed: int) -> dict:
    vm = IdentityVertexMap(xp)
    graph = build("csr", xp, src, dst, n)
    del src, dst
    m = graph.num_edges
    csr = graph.adjacency()
    deg = xp.diff(csr.offsets)
    source = int(xp.argmax(deg))
    out = {"graph": name, "vertices": int(n), "edges": int(m), "bfs_source": source}

    # -- static runs, plus the per-iteration / SpMV / traversal rates -------------------------
    params = {"bfs": {"sources": [source]}}
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
    out["pagerank"]["iteration_over_spmv"] = out["pagerank"]["iteration_seconds"] / out["pagerank"]["spmv_seconds"]

    out["bfs"] = _bfs_rates(xp, csr, n, source, repeats)
    tri = static["triangles"]
    und = int(tri["work"]["undirected_edges"])
    out["triangles"] = {"triangles": int(jobs["triangles"].total), "undirected_edges": und,
                        "static_seconds": tri["seconds"], "static_edges_per_second": und / tri["seconds"]}
    del csr

    # -- batches: incremental update against a from-scratch run on the same graph -------------
    # The sequence runs twice and only the second pass is reported: an incremental update
    # cannot be repeated on the same delta, and its first run on a GPU includes compiling the
    # kernels of the code paths that batch size selects.
    for warm_up in (True, False):
        batches = _bench_batches(xp, graph, jobs, params, vm, m, fractions, seed + (0 if warm_up else 1000))
    out["batches"] = batches
    return out


def _bench_batches(xp, graph, jobs, params, vm, m, fractions, seed) -> list:
    """One pass over the batch fractions: apply a random delta, time each job's update and a recompute."""
    batches = []
    for i, f in enumerate(fractions):
        changes = max(2, int(round(f * m)))
        delta = random_delta(xp, graph, changes, seed + 1 + i)
        apply_delta(graph, delta)
        row = {"fraction": f, "changed_edges": delta.num_changed_edges}
        for j, job in jobs.items():
            t_inc, _ = _timed(xp, lambda job=job, delta=delta: job.update(graph, delta, vm))
            inc_work = dict(job.work)
            fresh = create_job(j, xp, **params.get(j, {}))
            t_static, _ = _timed(xp, lambda fresh=fresh: fresh.run_static(graph, vm))
            row[j] = {"incremental_seconds": t_inc, "static_seconds": t_static,
                      "speedup": t_static / t_inc if t_inc > 0 else None,
                      "incremental_mode": inc_work.get("mode"),
                      "incremental_edges_touched": int(inc_work.get("edges_touched", 0)),
                      "static_edges_touched": int(fresh.work.get("edges_touched", 0))}
            if j == "triangles":
                changed = int(inc_work.get("changed_undirected", delta.num_changed_edges))
                row[j]["changed_edges_per_second"] = changed / t_inc if t_inc > 0 else None
                row[j]["agrees"] = int(job.total) == int(fresh.total)
            elif j == "bfs":
                row[j]["agrees"] = bool((job.dist[: fresh.dist.shape[0]] == fresh.dist).all())
            else:
                row[j]["l1_to_static"] = float(xp.abs(job.ranks() - fresh.ranks()).sum())
        batches.append(row)
    return batches


def bench_algorithms(xp=np, scales=(14,), edge_factor: int = 16, real: str | None = None,
                     fractions=BATCH_FRACTIONS, repeats: int = 1, seed: int = 0) -> dict:
    """Benchmark the three jobs on R-MAT graphs of ``scales`` (and ``real``); JSON-serialisable."""
    if isinstance(scales, int):
        scales = [scales]
    result = {"backend": backend_name(xp), "edge_factor": int(edge_factor),
              "fractions": [float(f) for f in fractions], "graphs": []}
    for scale in scales:
        s, d = rmat_edges(xp, scale, edge_factor, seed)
        result["graphs"].append(_bench_graph(xp, f"rmat{scale}-{edge_factor}", s, d, 1 << int(scale),
                                             fractions, repeats, seed))
    if real:
        s, d, n = load_edge_list(xp, real)
        result["graphs"].append(_bench_graph(xp, str(real), s, d, n, fractions, repeats, seed))
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


def _rate(x) -> str:
    return "-" if x is None else f"{x:.3g}"


def format_table(result: dict) -> str:
    """A plain-text report of :func:`bench_algorithms`'s result."""
    lines = [f"algorithms ({result['backend']})"]
    for g in result["graphs"]:
        pr, bfs, tri = g["pagerank"], g["bfs"], g["triangles"]
        lines.append(f"\n{g['graph']}: {g['vertices']:,} vertices, {g['edges']:,} edges")
        lines.append(f"  pagerank static {pr['static_seconds'] * 1e3:.1f} ms, {pr['iterations']} iterations, "
                     f"{pr['iteration_seconds'] * 1e3:.3f} ms/iteration vs SpMV {pr['spmv_seconds'] * 1e3:.3f} ms "
                     f"({pr['iteration_over_spmv']:.2f}x)")
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
    return "\n".join(lines)
