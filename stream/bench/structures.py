"""Benchmark of the dynamic structures: batched insert, delete and query, and memory after churn.

For each graph (R-MAT generated with ``xp``, and optionally a real graph file in
any format `vinestream convert` reads, Parquet edge tables and event logs included:
:func:`load_edge_list`), each structure
is loaded with the graph minus a held-out set, then for every batch size the
held-out edges are inserted, queried and deleted again (so every repetition
starts from the same state), timed with the device synchronised around each
call, after :data:`WARMUP_ROUNDS` untimed rounds.  Throughput is reported as
edges per second and as a ratio to the ``csr`` rebuild measured in the same run.
Finally half of the live edges are deleted and re-inserted (in batches of the
largest batch size, or in :data:`CHURN_BATCHES` batches each way where that
size would take more) and the structure's bytes per live edge are compared with
a plain CSR's (int64 offsets, int32 columns, float32 weights).

For a structure that declares ``concurrent_phases`` the bench also times, per
batch size, one batch of ``bsz`` inserts (held-out edges) plus ``bsz`` deletes
(live edges) applied as two sequential phases (``delete_edges`` then
``insert_edges``) and as concurrent phases (``apply_edge_phases`` on the two
CUDA streams of :func:`structures.base.phase_streams`), from the same state;
``speedup`` is sequential time / concurrent time.  The device (GPU model,
memory, CuPy and CUDA versions) is recorded as ``device``.

The result is a JSON-serialisable dict; :func:`format_table` renders it.
"""
from __future__ import annotations

import gzip
import math
import os
import statistics
import tempfile
import time

import numpy as np
import pyarrow.parquet as pq

from vinestream.connectors import files
from vinestream.connectors.base import special_file
from vinestream.connectors.shared_data import shared_data_file
from vinestream.connectors.synthetic import rmat_simple_edges
from vinestream.stream.errors import InputError
from vinestream.stream.events.schema import Op
from vinestream.structures import backend
from vinestream.structures.array_ops import last_position, unique_sorted
from vinestream.structures.base import DynamicGraph, phase_streams
from vinestream.structures.csr_types import VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch
from vinestream.structures.registry import create

# the real graph benchmarked by default, when the shared data folder is on this machine
_cnr = shared_data_file("large/cnr-2000.edges.tsv.gz")
DEFAULT_REAL_GRAPH = str(_cnr) if _cnr else None
#: untimed rounds of each batch size's calls before the ``repeat`` timed ones: a stream pays the one-time costs
#: once, not per batch - kernels loaded on first use, and GraphVine's CUDA graph for small batches, captured at
#: the second one-sync batch.  With none, the median of three 1,000-edge GraphVine calls was the capture's: insert
#: 0.42 ms / delete 0.36 against 0.13-0.14 / 0.11-0.12 once captured (H100, R-MAT 18 and 20;
#: bench-results/2026-11-27-session27)
WARMUP_ROUNDS = 2
#: the churn's deletions (and its re-insertions) take at most this many batches each way
CHURN_BATCHES = 32
OPS = ("insert", "delete", "query", "scan")     # scan: adjacency() of bsz random rows, edges/s


# ---------------------------------------------------------------------------
# graphs
# ---------------------------------------------------------------------------
def rmat_edges(xp, scale: int, edge_factor: int = 16, seed: int = 0):
    """R-MAT (Graph500 parameters) on ``xp``, vertices relabelled so that degree does not follow the id."""
    return rmat_simple_edges(xp, scale, edge_factor, seed, relabel=True)


def load_edge_file(path: str):
    """A real edge list as numpy int64 (src, dst), 0-based.

    Reads SNAP / LAW edge lists (``u<TAB or SPACE>v`` with ``#`` comments) and
    MatrixMarket coordinate files (``%`` header, a size line, 1-based, mirrored
    when ``symmetric``), gzipped or not.
    """
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    is_mtx = ".mtx" in os.path.basename(path)
    symmetric = is_mtx and b"symmetric" in data[:200].lower()
    # skip the header: comment lines, then (MatrixMarket) the size line
    pos = 0
    while pos < len(data) and data[pos:pos + 1] in (b"%", b"#", b"\n"):
        pos = data.index(b"\n", pos) + 1
    if is_mtx:
        pos = data.index(b"\n", pos) + 1
    body = data[pos:]
    ints = np.array(body.split(), dtype=np.int64)
    ncols = len(body[:body.index(b"\n")].split()) if b"\n" in body else 2
    ints = ints.reshape(-1, ncols)
    src, dst = ints[:, 0].copy(), ints[:, 1].copy()
    if is_mtx:
        src -= 1
        dst -= 1
    if symmetric:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    return src, dst


def check_real_graph(path: str, flag: str = "--real") -> None:
    """One line (:class:`InputError`) for a ``--real`` path that cannot be a graph, before any benchmark runs: a
    missing path, a directory (the message said "no such file"), an empty text file, binary data or a METIS file
    without its header (:func:`files.check_head`: found only once the graphs before it had been benchmarked).  A
    Parquet edge table or event log, like any other format `vinestream convert` reads, is read by
    :func:`load_edge_list`."""
    if os.path.isdir(path):
        raise InputError(f"{flag} {path}: a directory: give a file (an edge list or event log in it)")
    kind = special_file(path)
    if kind:                    # before it is opened: a FIFO blocks there (it said "no such file")
        raise InputError(f"{flag} {path}: is {kind}, not a regular file: give an edge list or event log file")
    if not os.path.isfile(path):
        raise InputError(f"{flag} {path}: no such file")
    with open(path, "rb") as fh:
        parquet = fh.read(4) == b"PAR1"
    if not parquet and not files.has_data_line(path):
        raise InputError(f"{flag} {path}: no edges in it (an edge list has a line per edge, e.g. `1 2`)")
    try:
        files.check_head(path)
    except files.ConvertError as exc:
        raise InputError(f"{flag} {exc}") from None


def load_edge_list(xp, path: str):
    """(src, dst, n) of a graph file in any format `vinestream convert` reads (SNAP edge lists, CSV, Matrix Market,
    METIS, a Parquet edge table or event log), read through convert itself; ids renumbered 0..n-1 by a sort,
    self-loops kept.  An event log's graph is the one its events leave (:func:`_graph_of_events`).
    A file without edges, or with self-loops only, is an :class:`InputError` (the benches, which drop the loops,
    would fail on it later, less clearly)."""
    check_real_graph(str(path))
    with tempfile.TemporaryDirectory() as tmp:
        out = f"{tmp}/edges.parquet"
        try:
            files.convert(path, out, sort_by_time=False)
        except files.ConvertError as exc:
            if "--columns" not in str(exc):
                raise
            # a file convert reads only with --columns (a SNAP temporal log: src dst ts), which bench has not: the
            # message told the user to pass it
            raise InputError(f"--real {exc}; bench takes no --columns: convert the file first "
                             f"(vinestream convert {path} OUT.parquet --columns ...) and give --real OUT.parquet"
                             ) from None
        t = pq.read_table(out, columns=["op", "src", "dst"])
    if not t.num_rows:
        raise InputError(f"--real {path}: no edges in it (an edge list has a line per edge, e.g. `1 2`)")
    s, d = _graph_of_events(t.column("op").to_numpy(), t.column("src").to_numpy(),
                            t.column("dst").fill_null(-1).to_numpy())
    if not s.shape[0]:
        raise InputError(f"--real {path}: its events leave no edge; the benchmarks need a graph")
    if (s == d).all():
        raise InputError(f"--real {path}: every edge is a self-loop; the benchmarks need a graph")
    ids = unique_sorted(np, np.concatenate([s, d]))
    return (xp.asarray(np.searchsorted(ids, s)), xp.asarray(np.searchsorted(ids, d)), int(ids.shape[0]))


def _graph_of_events(op, src, dst):
    """The edges (src, dst: int64) that applying the events in order leaves: an edge is there when its last edge
    event is an add that comes after the last deletion of either endpoint (a deleted vertex takes its edges; an
    add after it brings the vertex back).  An edge list's events are all adds: each distinct edge, once.
    Sorts and searches, no loop over events."""
    op = np.asarray(op).astype(np.int8)
    src, dst = np.asarray(src).astype(np.int64), np.asarray(dst).astype(np.int64)
    pos = np.arange(op.shape[0], dtype=np.int64)
    edge = (op == Op.ADD_EDGE) | (op == Op.DELETE_EDGE)
    es, ed, ep, eo = src[edge], dst[edge], pos[edge], op[edge]
    order = np.lexsort((ep, ed, es))                     # by edge, then in log order
    es, ed, ep, eo = es[order], ed[order], ep[order], eo[order]
    last = np.ones(es.shape[0], dtype=bool)              # each edge's last event
    last[:-1] = (es[1:] != es[:-1]) | (ed[1:] != ed[:-1])
    added = last & (eo == Op.ADD_EDGE)
    es, ed, ep = es[added], ed[added], ep[added]
    gone = op == Op.DELETE_VERTEX
    if gone.any():                                       # each endpoint's last deletion, after the edge's add?
        keep = ((last_position(np, src[gone], pos[gone], es) < ep) &
                (last_position(np, src[gone], pos[gone], ed) < ep))
        es, ed = es[keep], ed[keep]
    return es, ed


def default_graphs(real_graph: str | None = DEFAULT_REAL_GRAPH, scales=(20, 22), edge_factor: int = 16,
                   loaded: dict | None = None):
    """Graph specs for :func:`bench_structures`; ``loaded`` maps a path to the host arrays
    ``load_edge_list(np, path)`` gave already, which the bench uses instead of reading the file again."""
    graphs = [{"kind": "rmat", "scale": s, "edge_factor": edge_factor} for s in scales]
    if real_graph and os.path.exists(real_graph):
        graphs.append({"kind": "file", "path": real_graph, "edges": (loaded or {}).get(real_graph)})
    return graphs


def _prepare(xp, spec: dict, seed: int):
    """(name, n, src, dst, w): distinct edges without self-loops, in a random order, on ``xp``."""
    if spec["kind"] == "rmat":
        src, dst = rmat_edges(xp, spec["scale"], spec.get("edge_factor", 16), seed)
        name = f"rmat-s{spec['scale']}-ef{spec.get('edge_factor', 16)}"
    elif spec["kind"] == "file":
        if spec.get("edges") is not None:           # read already (bench's up-front check): seconds on cnr-2000
            src, dst = (xp.asarray(a) for a in spec["edges"][:2])
        else:
            src, dst, _ = load_edge_list(xp, spec["path"])
        name = os.path.basename(spec["path"]).split(".")[0]
    else:
        raise ValueError(f"unknown graph kind {spec['kind']!r}")
    keep = src != dst
    b = CSRBatch.from_edges(xp, src[keep], dst[keep])
    src, dst = b.sources(), b.cols
    n = int(max(int(src.max()), int(dst.max())) + 1) if src.shape[0] else 0
    rs = xp.random.RandomState(seed + 1)
    order = rs.permutation(src.shape[0])
    w = (rs.random_sample(src.shape[0]) + 0.5).astype(WEIGHT_DTYPE)
    return name, n, src[order].astype(VERTEX_DTYPE), dst[order].astype(VERTEX_DTYPE), w


def _make(name: str, xp, options: dict):
    """(structure, implementation note) or (None, error)."""
    try:
        return create(name, xp, **options.get(name, {})), f"structures.{name}"
    except (ImportError, KeyError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


def device_info(xp) -> dict:
    """What the figures were measured on: backend, and on a GPU its model, memory, SMs, CuPy/CUDA versions."""
    info = {"backend": backend.backend_name(xp), "numpy": np.__version__, "cpus": os.cpu_count()}
    if backend.is_gpu(xp):
        dev = xp.cuda.Device()
        props = xp.cuda.runtime.getDeviceProperties(dev.id)
        name = props["name"]
        info.update(gpu=name.decode() if isinstance(name, bytes) else str(name),
                    gpu_memory_bytes=int(props["totalGlobalMem"]),
                    multiprocessors=int(props["multiProcessorCount"]),
                    compute_capability=f"{props['major']}.{props['minor']}",
                    cupy=xp.__version__, cuda_runtime=int(xp.cuda.runtime.runtimeGetVersion()),
                    cuda_driver=int(xp.cuda.runtime.driverGetVersion()))
    return info


# ---------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------
def _timed(xp, fn, *args):
    backend.synchronize(xp)
    t0 = time.perf_counter()
    out = fn(*args)
    backend.synchronize(xp)
    return time.perf_counter() - t0, out


def _bench_one(xp, g: DynamicGraph, n, src, dst, w, holdout, batch_sizes, repeat, rs_seed):
    """Build, time batches, churn; one structure on one graph."""
    res = {}
    e = int(src.shape[0])
    init = e - holdout
    t, _ = _timed(xp, g.insert_vertices, xp.arange(n, dtype=VERTEX_DTYPE))
    t2, _ = _timed(xp, g.insert_edges, CSRBatch.from_edges(xp, src[:init], dst[:init], w[:init]))
    res["build_seconds"] = t + t2
    res["initial_edges"] = g.num_edges
    rs = xp.random.RandomState(rs_seed)
    rows = []
    for bsz in batch_sizes:
        if bsz > holdout:
            rows.append({"batch_size": bsz, "skipped": f"batch larger than the held-out {holdout} edges"})
            continue
        hs, hd, hw = src[init:init + bsz], dst[init:init + bsz], w[init:init + bsz]
        ins = CSRBatch.from_edges(xp, hs, hd, hw)
        dele = CSRBatch.from_edges(xp, hs, hd)
        # queries: half just-inserted edges, half random pairs (mostly absent)
        half = bsz // 2
        qs = xp.concatenate([hs[:half], rs.randint(0, n, bsz - half).astype(VERTEX_DTYPE)])
        qd = xp.concatenate([hd[:half], rs.randint(0, n, bsz - half).astype(VERTEX_DTYPE)])
        times = {op: [] for op in OPS}
        scan_rows = xp.asarray(rs.randint(0, n, min(bsz, n)).astype(VERTEX_DTYPE))
        for rnd in range(WARMUP_ROUNDS + repeat):
            if rnd == WARMUP_ROUNDS:                          # the rounds before: untimed
                times = {op: [] for op in OPS}
            t, adj = _timed(xp, g.adjacency, scan_rows)        # adjacency scan of bsz random rows
            times.setdefault("scan", []).append(t)
            t, _m = _timed(xp, g.insert_edges, ins)
            times["insert"].append(t)
            t, _ = _timed(xp, g.contains, qs, qd)
            times["query"].append(t)
            t, _ = _timed(xp, g.delete_edges, dele)
            times["delete"].append(t)
        row = {"batch_size": bsz}
        for op in OPS:
            sec = statistics.median(times[op])
            row[f"{op}_seconds"] = sec
            row[f"{op}_edges_per_s"] = (adj.num_edges if op == "scan" else bsz) / sec if sec > 0 else float("inf")
        rows.append(row)
    res["batches"] = rows
    res["edges_after_batches"] = g.num_edges
    if g.concurrent_phases:
        res["phases"] = _bench_phases(xp, g, src, dst, w, init, holdout, batch_sizes, repeat, rs)
    # churn: delete half the live edges, re-insert them, in batches of the largest size, or in CHURN_BATCHES
    # batches each way where that size would make more (a 100-edge batch size would churn cnr-2000 in 16,000
    # rebuilds of the csr baseline: hours)
    half = init // 2
    step = max(int(max(batch_sizes)), -(-half // CHURN_BATCHES), 1)
    pick = xp.asarray(rs.permutation(init)[:half])
    cs, cd, cw = src[pick], dst[pick], w[pick]
    t_churn = 0.0
    for lo in range(0, int(pick.shape[0]), step):
        t, _ = _timed(xp, g.delete_edges, CSRBatch.from_edges(xp, cs[lo:lo + step], cd[lo:lo + step]))
        t_churn += t
    for lo in range(0, int(pick.shape[0]), step):
        t, _ = _timed(xp, g.insert_edges,
                      CSRBatch.from_edges(xp, cs[lo:lo + step], cd[lo:lo + step], cw[lo:lo + step]))
        t_churn += t
    mem = {k: (float(v) if isinstance(v, float) else int(v) if isinstance(v, (int, np.integer)) else v)
           for k, v in g.memory().items()}
    live = max(g.num_edges, 1)
    csr_bpe = ((n + 1) * 8 + live * 8) / live
    res["churn"] = {
        "batch_size": step,
        "live_edges": g.num_edges,
        "seconds": t_churn,
        "reserved_bytes_per_edge": mem["reserved_bytes"] / live,
        "used_bytes_per_edge": mem["used_bytes"] / live,
        "csr_bytes_per_edge": csr_bpe,
        "reserved_vs_csr": mem["reserved_bytes"] / live / csr_bpe,
        "used_vs_csr": mem["used_bytes"] / live / csr_bpe,
        "memory": mem,
    }
    return res


def _bench_phases(xp, g: DynamicGraph, src, dst, w, init, holdout, batch_sizes, repeat, rs):
    """Sequential vs concurrent delete/insert phases: ``bsz`` held-out inserts + ``bsz`` live deletes.

    Every timed call starts from the same state: after it, the deleted edges are
    re-inserted and the inserted ones deleted again (untimed).
    """
    streams = phase_streams(xp)
    rows = []
    for bsz in batch_sizes:
        if bsz > holdout or bsz > init:
            continue
        ins = CSRBatch.from_edges(xp, src[init:init + bsz], dst[init:init + bsz], w[init:init + bsz])
        pick = xp.asarray(rs.permutation(init)[:bsz])
        dels = CSRBatch.from_edges(xp, src[pick], dst[pick])
        back = CSRBatch.from_edges(xp, src[pick], dst[pick], w[pick])
        undo = CSRBatch.from_edges(xp, src[init:init + bsz], dst[init:init + bsz])

        def sequential(ins=ins, dels=dels):
            g.delete_edges(dels)
            g.insert_edges(ins)

        def concurrent(ins=ins, dels=dels):
            g.apply_edge_phases(ins, dels, streams=streams)

        times = {"sequential": [], "concurrent": []}
        for rnd in range(WARMUP_ROUNDS + repeat):
            if rnd == WARMUP_ROUNDS:
                times = {"sequential": [], "concurrent": []}
            for mode, fn in (("sequential", sequential), ("concurrent", concurrent)):
                t, _ = _timed(xp, fn)
                times[mode].append(t)
                g.insert_edges(back)
                g.delete_edges(undo)
        seq, conc = statistics.median(times["sequential"]), statistics.median(times["concurrent"])
        rows.append({"batch_size": bsz, "sequential_seconds": seq, "concurrent_seconds": conc,
                     "speedup": seq / conc if conc > 0 else float("inf"), "streams": streams is not None})
    return rows


def bench_structures(xp, structures=("graphvine", "coo", "csr"), batch_sizes=(1e3, 1e4, 1e5, 1e6),
                     graphs=None, repeat: int = 3, seed: int = 0, options: dict | None = None,
                     real_graph: str | None = DEFAULT_REAL_GRAPH, max_holdout_fraction: float = 0.5) -> dict:
    """Time ``structures`` on ``graphs`` (default: R-MAT scale 20 and 22, ef 16, plus ``real_graph``
    if the file exists).  ``graphs`` items: ``{"kind": "rmat", "scale": S, "edge_factor": F}`` or
    ``{"kind": "file", "path": P[, "edges": (src, dst, n) read already]}``.  ``options`` maps a structure name to
    its constructor options."""
    options = options or {}
    batch_sizes = [int(b) for b in batch_sizes]
    names = list(structures)
    if "csr" not in names:
        names.append("csr")          # ratios need the baseline
    if graphs is None:
        graphs = default_graphs(real_graph)
    out = {"backend": backend.backend_name(xp), "device": device_info(xp), "repeat": int(repeat),
           "warmup_rounds": WARMUP_ROUNDS,
           "batch_sizes": batch_sizes, "structures": list(structures), "graphs": []}
    for gi, spec in enumerate(graphs):
        name, n, src, dst, w = _prepare(xp, spec, seed + gi)
        e = int(src.shape[0])
        holdout = min(max(batch_sizes), int(e * max_holdout_fraction))
        entry = {"name": name, "spec": {k: v for k, v in spec.items() if k != "edges"}, "vertices": n, "edges": e,
                 "held_out": holdout, "structures": {}}
        for sname in names:
            g, impl = _make(sname, xp, options)
            if g is None:
                entry["structures"][sname] = {"available": False, "error": impl}
                continue
            r = _bench_one(xp, g, n, src, dst, w, holdout, batch_sizes, repeat, seed + 7)
            r.update(available=True, impl=impl)
            entry["structures"][sname] = r
            del g
        base = entry["structures"].get("csr", {})
        base_rows = {r["batch_size"]: r for r in base.get("batches", []) if "skipped" not in r}
        for r in entry["structures"].values():
            for row in r.get("batches", []):
                b = base_rows.get(row["batch_size"])
                if b is None or "skipped" in row:
                    continue
                for op in OPS:
                    row[f"{op}_vs_csr"] = _ratio(row[f"{op}_edges_per_s"], b[f"{op}_edges_per_s"])
        out["graphs"].append(entry)
    return out


def _ratio(rate: float, base: float) -> float | None:
    """``rate / base``, or None where that is no measurement: a tiny graph's csr may scan no edge (rate 0) or
    finish below the clock's resolution (rate inf); the ratio was a ZeroDivisionError there."""
    if not (math.isfinite(rate) and math.isfinite(base)) or base <= 0:
        return None
    return rate / base


def _fmt_rate(x):
    return f"{x:9.3g}"


def format_table(result: dict) -> str:
    """A readable table: edges/s (and x csr) per structure, batch size and operation; memory after churn."""
    lines = [f"backend: {result['backend']}   repeat: {result['repeat']} (median, after "
             f"{result.get('warmup_rounds', 0)} untimed rounds)"]
    dev = result.get("device", {})
    if dev.get("gpu"):
        lines.append(f"device: {dev['gpu']} ({dev['gpu_memory_bytes'] / 2**30:.0f} GiB, "
                     f"{dev['multiprocessors']} SMs, sm_{dev['compute_capability'].replace('.', '')}), "
                     f"CuPy {dev['cupy']}, CUDA runtime {dev['cuda_runtime']}, driver {dev['cuda_driver']}")
    for gr in result["graphs"]:
        lines.append("")
        lines.append(f"== {gr['name']}: {gr['vertices']:,} vertices, {gr['edges']:,} edges "
                     f"(held out {gr['held_out']:,})")
        lines.append(f"{'structure':<10} {'batch':>9} | {'insert e/s':>9} {'x csr':>7} | "
                     f"{'delete e/s':>9} {'x csr':>7} | {'query e/s':>9} {'x csr':>7} | "
                     f"{'scan e/s':>9} {'x csr':>7}")
        for sname, r in gr["structures"].items():
            if not r.get("available"):
                lines.append(f"{sname:<10} unavailable: {r.get('error')}")
                continue
            for row in r["batches"]:
                if "skipped" in row:
                    lines.append(f"{sname:<10} {row['batch_size']:>9,} | skipped ({row['skipped']})")
                    continue
                cells = []
                for op in OPS:
                    ratio = row.get(f"{op}_vs_csr")
                    cells.append(f"{_fmt_rate(row[f'{op}_edges_per_s'])} "
                                 f"{(f'{ratio:6.2f}x' if ratio is not None else '      -')}")
                lines.append(f"{sname:<10} {row['batch_size']:>9,} | " + " | ".join(cells))
        for sname, r in gr["structures"].items():
            rows = [row for row in r.get("batches", []) if "skipped" not in row]
            if rows:                              # the small-batch latency (issue 12 goal: <= 0.3 ms)
                row = rows[0]
                lines.append(f"{sname:<10} {row['batch_size']:>9,} | latency: insert "
                             f"{row['insert_seconds'] * 1e3:.3f} ms, delete {row['delete_seconds'] * 1e3:.3f} ms, "
                             f"query {row['query_seconds'] * 1e3:.3f} ms")
        lines.append(f"{'memory after 50% churn':<26} {'B/edge reserved':>16} {'B/edge used':>12} "
                     f"{'vs CSR (res/used)':>18}")
        for sname, r in gr["structures"].items():
            if not r.get("available"):
                continue
            c = r["churn"]
            lines.append(f"{sname:<26} {c['reserved_bytes_per_edge']:>16.2f} {c['used_bytes_per_edge']:>12.2f} "
                         f"{c['reserved_vs_csr']:>8.2f} / {c['used_vs_csr']:<7.2f}")
        if any(r.get("phases") for r in gr["structures"].values()):
            lines.append("concurrent phases: bsz held-out inserts + bsz live deletes, from the same state")
        for sname, r in gr["structures"].items():
            for row in r.get("phases", []):
                lines.append(f"{sname:<10} {row['batch_size']:>9,} | delete+insert sequential "
                             f"{row['sequential_seconds'] * 1e3:8.3f} ms, concurrent "
                             f"{row['concurrent_seconds'] * 1e3:8.3f} ms "
                             f"({'two CUDA streams' if row['streams'] else 'no streams: CPU'}): "
                             f"speedup {row['speedup']:.2f}x")
        first = next(iter(gr["structures"].values()))
        lines.append(f"(plain CSR: {first.get('churn', {}).get('csr_bytes_per_edge', float('nan')):.2f} B/edge)")
    return "\n".join(lines)


if __name__ == "__main__":      # quick CPU look: python -m stream.bench_structures [scale]
    import json
    import sys
    scale = int(sys.argv[1]) if len(sys.argv) > 1 else 14
    res = bench_structures(np, graphs=[{"kind": "rmat", "scale": scale, "edge_factor": 16}],
                           batch_sizes=(1e2, 1e3, 1e4), repeat=3)
    print(format_table(res))
    json.dumps(res)
