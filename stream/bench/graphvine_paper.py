"""The GraphVine paper's comparison (graphvine.txt section 5, Figures 5-17, Tables 2-5), reproduced.

Protocol, as in the paper: for every graph and structure, *initialisation*
(an empty structure sized for the graph's vertices: ``insert_vertices``), then
for every batch size (100K, 1M, 10M edges, each capped by the graph's edge
count, plus the *bulk build* = every edge in one batch) a fresh initialised
structure takes one batch insert of that many edges (timed), its memory is read
(``memory()["reserved_bytes"]``; the paper read ``cudaMemGetInfo`` after the
insert), and the same batch is deleted (timed).  The device is synchronised
around every timed call.

Graphs of the paper's families (Table 1), all symmetric (both directions):

============== =========================================== ===================
ours           how                                          paper's counterpart
============== =========================================== ===================
coAuthorsDBLP  shared/data/static/coAuthorsDBLP.mtx.gz      G1 co-papers-dblp
luxembourg_osm shared/data/static/luxembourg_osm.mtx.gz     G6 inf-europe_osm
delaunay-sN    scipy.spatial.Delaunay of 2^N random points  G5 delaunay_n24
rgg-sN         2^N random points, radius 0.55 sqrt(ln n/n)  G7 rgg_n_2_24_s0
rmat-sN        R-MAT, edge factor 16                        (none)
============== =========================================== ===================

``scale`` (the N above) sizes the generated graphs: small on a CPU, large
(2^22 and up) on a GPU.  Structures: ``hornet``, ``faimgraph`` (skipped when
this build does not register it) and ``graphvine``; others may be added.

Next to our fastest (or smallest) structure per cell, the table prints the
paper's winner for the counterpart graph, computed from the paper's own
numbers (Tables 2-5, encoded below with their figure numbers), among the
structures that both we and the paper ran.
"""
from __future__ import annotations

import math
import statistics
import time

import numpy as np

from vinestream.connectors.shared_data import shared_data_file
from vinestream.connectors.synthetic import rmat_simple_edges
from vinestream.stream.bench.peers import scipy_module
from vinestream.stream.bench.structures import load_edge_file
from vinestream.structures import backend
from vinestream.structures.array_ops import unique_sorted
from vinestream.structures.csr_types import VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch
from vinestream.structures.registry import create, get

PAPER_BATCHES = (100_000, 1_000_000, 10_000_000)
DEFAULT_STRUCTURES = ("hornet", "faimgraph", "graphvine")
PAPER_STRUCTURES = ("hornet", "faimgraph", "graphvine")

# -- the paper's numbers (graphvine.txt section 5); None = NA in the paper -------------------------
#: Table 1: the paper's graphs
PAPER_GRAPHS = {"G1": "co-papers-dblp", "G2": "co-papers-citeseer", "G3": "hugetrace-00020",
                "G4": "channel-500x100x100-b050", "G5": "delaunay_n24", "G6": "inf-europe_osm",
                "G7": "rgg_n_2_24_s0"}
#: Table 2 / Figure 5: initialisation, ms (hornet, faimgraph, graphvine)
PAPER_INIT_MS = {"G1": (643.973, 16.981, 0.575), "G2": (538.074, 19.915, 0.589),
                 "G3": (15617, 43.831, 2.227), "G4": (4929, 50.772, 1.355), "G5": (16059, 62.199, 2.386),
                 "G6": (51298, 119.028, 4.042), "G7": (17552, 140.11, 3.180)}
#: Table 3 / Figures 6-9: batched edge insert, ms, per batch size ("bulk" = bulk build)
PAPER_INSERT_MS = {
    "G1": {100_000: (13.083, 1.224, 0.868), 1_000_000: (90.699, 9.909, 2.444),
           10_000_000: (358.091, None, 37.11), "bulk": (531.632, None, 124.647)},
    "G2": {100_000: (10.9, 1.431, 0.821), 1_000_000: (78.501, 10.312, 2.253),
           10_000_000: (304.825, None, 37.658), "bulk": (432.848, None, 129.029)},
    "G3": {100_000: (1.539, 1.048, 3.197), 1_000_000: (35.181, 7.504, 5.762),
           10_000_000: (2129.69, None, 29.444), "bulk": (11747.7, None, 135.142)},
    "G4": {100_000: (1.013, 2.153, 1.183), 1_000_000: (7.179, 11.184, 4.563),
           10_000_000: (65.983, None, 40.887), "bulk": (3967.16, None, 339.383)},
    "G5": {100_000: (20.245, 1.730, 3.415), 1_000_000: (198.051, 8.531, 5.787),
           10_000_000: (2011.45, None, 24.485), "bulk": (15878.7, None, 286.08)},
    "G6": {100_000: (94.263, 1.512, 10.362), 1_000_000: (827.766, 7.572, 11.973),
           10_000_000: (8235.38, None, 27.317), "bulk": (None, None, 190.068)},
    "G7": {100_000: (13.02, 1.945, 3.333), 1_000_000: (115.439, 8.058, 7.559),
           10_000_000: (1161.95, None, 40.779), "bulk": (None, None, 992.54)},
}
#: Table 4 / Figures 10-13: batched edge delete, ms
PAPER_DELETE_MS = {
    "G1": {100_000: (12.046, 1.020, 52.207), 1_000_000: (91.146, 8.115, 151.679),
           10_000_000: (372.862, None, 513.151), "bulk": (563.705, None, 629.137)},
    "G2": {100_000: (10.832, 1.125, 15.432), 1_000_000: (79.254, 9.108, 80.649),
           10_000_000: (315.28, None, 550.459), "bulk": (455.584, None, 827.061)},
    "G3": {100_000: (1.504, 0.888, 4.336), 1_000_000: (35.143, 6.801, 7.367),
           10_000_000: (2159.95, None, 27.670), "bulk": (11706.7, None, 84.723)},
    "G4": {100_000: (1.074, 2.276, 1.342), 1_000_000: (6.214, 15.871, 7.559),
           10_000_000: (75.283, None, 72.130), "bulk": (4011.89, None, 593.154)},
    "G5": {100_000: (20.25, 1.972, 4.077), 1_000_000: (201.747, 7.114, 10.359),
           10_000_000: (2039.19, None, 43.523), "bulk": (16104.4, None, 167.104)},
    "G6": {100_000: (98.674, 0.879, 10.837), 1_000_000: (831.202, 5.791, 12.605),
           10_000_000: (8442.63, None, 33.288), "bulk": (None, None, 161.929)},
    "G7": {100_000: (14.144, 2.194, 3.641), 1_000_000: (118.606, 9.885, 6.563),
           10_000_000: (1177.21, None, 35.059), "bulk": (None, None, 738.115)},
}
#: Table 5 / Figures 14-17: memory after the insert, MB
PAPER_MEMORY_MB = {
    "G1": {100_000: (497, 378, 445), 1_000_000: (583, 422, 456), 10_000_000: (1347, None, 592),
           "bulk": (3124, None, 890)},
    "G2": {100_000: (502, 379, 446), 1_000_000: (578, 420, 455), 10_000_000: (1330, None, 588),
           "bulk": (3197, None, 921)},
    "G3": {100_000: (696, 1955, 2966), 1_000_000: (766, 1985, 2797), 10_000_000: (1590, None, 2961),
           "bulk": (5059, None, 3550)},
    "G4": {100_000: (754, 1150, 1958), 1_000_000: (832, 1184, 1921), 10_000_000: (1590, None, 2055),
           "bulk": (8590, None, 3201)},
    "G5": {100_000: (976, 2065, 3315), 1_000_000: (1013, 2072, 3302), 10_000_000: (1882, None, 3465),
           "bulk": (10102, None, 4831)},
    "G6": {100_000: (1712, 5821, 7245), 1_000_000: (1751, 5834, 7247), 10_000_000: (2679, None, 7385),
           "bulk": (None, None, 8908)},
    "G7": {100_000: (1979, 3578, 5120), 1_000_000: (2064, 3592, 5115), 10_000_000: (2986, None, 5297),
           "bulk": (None, None, 9142)},
}
PAPER_SOURCE = {"init": "Table 2 / Fig. 5", "insert": "Table 3 / Figs. 6-9",
                "delete": "Table 4 / Figs. 10-13", "memory": "Table 5 / Figs. 14-17"}
#: our graph family -> the paper's graph of that family
COUNTERPART = {"coAuthorsDBLP": "G1", "luxembourg_osm": "G6", "delaunay": "G5", "rgg": "G7", "rmat": None}


def paper_cell(metric: str, graph_id: str | None, batch) -> dict | None:
    """The paper's values of one cell as {structure: value} (NA left out), or None."""
    if graph_id is None:
        return None
    if metric == "init":
        row = PAPER_INIT_MS[graph_id]
    else:
        table = {"insert": PAPER_INSERT_MS, "delete": PAPER_DELETE_MS, "memory": PAPER_MEMORY_MB}[metric]
        row = table[graph_id].get(batch)
        if row is None:
            return None
    return {s: v for s, v in zip(PAPER_STRUCTURES, row) if v is not None}


def winner(values: dict, among) -> str | None:
    """The structure with the smallest value among ``among`` (None when none of them has one)."""
    cands = {s: v for s, v in values.items() if s in among and v is not None}
    return min(cands, key=cands.get) if cands else None


# -- graphs -------------------------------------------------------------------------------------
def _symmetric(src, dst):
    """Both directions, no self-loops, no repeats (numpy int64)."""
    s = np.concatenate([src, dst]).astype(np.int64)
    d = np.concatenate([dst, src]).astype(np.int64)
    keep = s != d
    keys = unique_sorted(np, (s[keep] << 32) | d[keep])
    return keys >> 32, keys & 0xFFFFFFFF


def delaunay_graph(scale: int, seed: int = 0):
    """The Delaunay triangulation of 2^scale uniform random points in the unit square (DIMACS delaunay_n*)."""
    spatial = scipy_module("spatial", "bench paper-graphvine builds the paper's Delaunay graphs with SciPy")
    pts = np.random.default_rng(seed).random((1 << scale, 2))
    tri = spatial.Delaunay(pts).simplices.astype(np.int64)
    src = np.concatenate([tri[:, 0], tri[:, 1], tri[:, 2]])
    dst = np.concatenate([tri[:, 1], tri[:, 2], tri[:, 0]])
    return _symmetric(src, dst)


def rgg_graph(scale: int, seed: int = 0):
    """Random geometric graph: 2^scale points, edges closer than 0.55 sqrt(ln n / n) (DIMACS rgg_n_2_*_s0)."""
    spatial = scipy_module("spatial", "bench paper-graphvine builds the paper's geometric graphs with SciPy")
    n = 1 << scale
    pts = np.random.default_rng(seed).random((n, 2))
    pairs = spatial.cKDTree(pts).query_pairs(0.55 * math.sqrt(math.log(n) / n), output_type="ndarray")
    return _symmetric(pairs[:, 0], pairs[:, 1])


def load_graph(kind: str, scale: int, seed: int = 0):
    """(name, family, num_vertices, src, dst) as numpy int64; None when a data file is missing."""
    if kind in ("coAuthorsDBLP", "luxembourg_osm"):
        path = shared_data_file(f"static/{kind}.mtx.gz")
        if path is None:
            return None
        s, d = _symmetric(*load_edge_file(str(path)))
        return kind, kind, int(max(s.max(), d.max()) + 1), s, d
    if kind == "delaunay":
        s, d = delaunay_graph(scale, seed)
    elif kind == "rgg":
        s, d = rgg_graph(scale, seed)
    elif kind == "rmat":
        s, d = rmat_simple_edges(np, scale, 16, seed, relabel=True)
    else:
        raise ValueError(f"unknown graph family {kind!r}")
    return f"{kind}-s{scale}", kind, 1 << scale, s, d


DEFAULT_GRAPHS = ("coAuthorsDBLP", "luxembourg_osm", "delaunay", "rgg", "rmat")


# -- timing -------------------------------------------------------------------------------------
def _timed(xp, fn, *args):
    backend.synchronize(xp)
    t0 = time.perf_counter()
    out = fn(*args)
    backend.synchronize(xp)
    return time.perf_counter() - t0, out


def _registered(name: str) -> str | None:
    """None when ``name`` is usable, else why not."""
    try:
        get(name)
        return None
    except (ImportError, KeyError) as exc:
        return f"not in this build ({type(exc).__name__})"


def bench_one(xp, name: str, n: int, src, dst, w, batches, repeat: int) -> dict:
    """Initialisation, then per batch (size or "bulk") a fresh structure: insert, memory, delete."""
    vids = xp.arange(n, dtype=VERTEX_DTYPE)
    init = []
    for _ in range(repeat):
        def initialise():
            g = create(name, xp)
            g.insert_vertices(vids)
            return g
        t, g = _timed(xp, initialise)
        init.append(t)
        del g
    res = {"init_ms": 1e3 * statistics.median(init), "batches": {}}
    for label, size in batches:
        ins = CSRBatch.from_edges(xp, src[:size], dst[:size], w[:size])
        dele = CSRBatch.from_edges(xp, src[:size], dst[:size])
        t_ins, t_del, mem = [], [], None
        for _ in range(repeat):
            g = create(name, xp)
            g.insert_vertices(vids)
            t, _ = _timed(xp, g.insert_edges, ins)
            t_ins.append(t)
            if g.num_edges != size:
                raise AssertionError(f"{name}: {g.num_edges} edges after inserting {size}")
            mem = g.memory()
            t, _ = _timed(xp, g.delete_edges, dele)
            t_del.append(t)
            if g.num_edges != 0:
                raise AssertionError(f"{name}: {g.num_edges} edges left after deleting the batch")
            del g
        res["batches"][str(label)] = {
            "edges": int(size), "insert_ms": 1e3 * statistics.median(t_ins),
            "delete_ms": 1e3 * statistics.median(t_del),
            "memory_mb": mem["reserved_bytes"] / 1e6, "used_mb": mem["used_bytes"] / 1e6}
    return res


def bench_graphvine_paper(xp, scale: int = 16, structures=DEFAULT_STRUCTURES, graphs=DEFAULT_GRAPHS,
                          batch_sizes=PAPER_BATCHES, repeat: int = 1, seed: int = 0) -> dict:
    """Run the paper's protocol; JSON-serialisable result (see :func:`format_table`)."""
    out = {"suite": "graphvine-paper", "backend": backend.backend_name(xp), "scale": int(scale),
           "repeat": int(repeat), "batch_sizes": [int(b) for b in batch_sizes],
           "structures": {s: (_registered(s) or "ok") for s in structures}, "graphs": []}
    usable = [s for s in structures if _registered(s) is None]
    for gi, kind in enumerate(graphs):
        t0 = time.perf_counter()
        loaded = load_graph(kind, scale, seed + gi)
        if loaded is None:
            out["graphs"].append({"name": kind, "skipped": "data file not found"})
            continue
        name, family, n, s, d = loaded
        e = int(s.shape[0])
        rng = np.random.default_rng(seed + 100 + gi)
        order = rng.permutation(e)                      # batches are random samples of the edges
        src = xp.asarray(s[order].astype(VERTEX_DTYPE))
        dst = xp.asarray(d[order].astype(VERTEX_DTYPE))
        w = xp.asarray((rng.random(e) + 0.5).astype(WEIGHT_DTYPE))
        batches = [(b, b) for b in batch_sizes if b < e] + [("bulk", e)]
        entry = {"name": name, "family": family, "counterpart": COUNTERPART.get(family),
                 "vertices": n, "edges": e, "generate_seconds": time.perf_counter() - t0,
                 "skipped_batches": [b for b in batch_sizes if b >= e], "structures": {}}
        for sname in usable:
            entry["structures"][sname] = bench_one(xp, sname, n, src, dst, w, batches, repeat)
        entry["cells"] = _cells(entry, usable, batches)
        out["graphs"].append(entry)
    return out


def _cells(entry: dict, usable, batches) -> list:
    """One row per (metric, batch): our values, our winner, the paper's values and winner."""
    rows = []
    gid = entry["counterpart"]
    specs = [("init", None)] + [(m, label) for m in ("insert", "delete", "memory") for label, _ in batches]
    for metric, label in specs:
        if metric == "init":
            ours = {s: entry["structures"][s]["init_ms"] for s in usable}
        else:
            key = {"insert": "insert_ms", "delete": "delete_ms", "memory": "memory_mb"}[metric]
            ours = {s: entry["structures"][s]["batches"][str(label)][key] for s in usable}
        paper = paper_cell(metric, gid, label)
        # a winner needs two contenders: compare on the structures both the paper and we ran
        both = [s for s in usable if paper and s in paper]
        compared = len(both) >= 2
        rows.append({"metric": metric, "batch": label, "ours": ours,
                     "our_winner": winner(ours, both if compared else usable),
                     "compared_on": both if compared else None, "paper": paper,
                     "paper_winner": winner(paper, both) if compared else None,
                     "paper_source": PAPER_SOURCE[metric] if paper else None})
    return rows


def format_table(result: dict) -> str:
    """The paper's shape: per graph, time (ms) / memory (MB) per structure and batch size, with our
    winner and the paper's winner (for the counterpart graph) side by side."""
    lines = [f"GraphVine paper comparison  backend: {result['backend']}  scale: {result['scale']}  "
             f"repeat: {result['repeat']}"]
    for name, status in result["structures"].items():
        if status != "ok":
            lines.append(f"  {name}: skipped, {status}")
    for gr in result["graphs"]:
        lines.append("")
        if "skipped" in gr:
            lines.append(f"== {gr['name']}: skipped ({gr['skipped']})")
            continue
        cp = gr["counterpart"]
        lines.append(f"== {gr['name']}: {gr['vertices']:,} vertices, {gr['edges']:,} edges; paper's "
                     f"counterpart: {f'{cp} {PAPER_GRAPHS[cp]}' if cp else 'none'}"
                     + (f"; batches over the edge count skipped: {gr['skipped_batches']}"
                        if gr["skipped_batches"] else ""))
        names = list(gr["structures"])
        head = f"{'metric':<8} {'batch':>9} | " + " ".join(f"{s:>10}" for s in names)
        lines.append(head + f" | {'ours':>10} {'paper':>10}  same  (paper values; source)")
        for c in gr["cells"]:
            unit_vals = " ".join(f"{c['ours'][s]:>10.3g}" for s in names)
            pw = c["paper_winner"] or ("n/a" if c["paper"] else "-")
            same = "-" if c["paper_winner"] is None else ("yes" if pw == c["our_winner"] else "NO")
            pv = (", ".join(f"{s} {v:g}" for s, v in c["paper"].items()) + f"; {c['paper_source']}"
                  if c["paper"] else "")
            batch = c["batch"] if c["batch"] is not None else ""
            batch = f"{batch:,}" if isinstance(batch, int) else batch
            lines.append(f"{c['metric']:<8} {batch:>9} | {unit_vals} | {c['our_winner'] or '-':>10} "
                         f"{pw:>10}  {same:>4}  ({pv})")
    lines.append("")
    lines.append("times in ms (init, insert, delete), memory in MB (reserved bytes after the insert); "
                 "'ours' / 'paper' = the winner among the structures both the paper and this run have "
                 "(the paper: RTX 2060, CUDA); n/a = the paper has fewer than two of them in that cell.")
    return "\n".join(lines)
