"""What sorted adjacency buys the static jobs, and where diff-CSR's merge threshold pays off.

``bench_sorted_adjacency``: each structure is loaded with a graph (mirrored, so
that the undirected jobs see it whole), then

* **BFS** runs twice from the highest-degree vertex: reading the structure
  directly (``adjacency(frontier)`` once per level: for ``gpma`` one contiguous
  slot range per frontier vertex with the gaps skipped) and on a CSR rebuilt
  first with ``adjacency()`` (the rebuild is timed with it);
* **triangles** prepare the undirected keys from the structure: a structure that
  keeps its edges sorted hands them over with a filter (``src < dst``), one that
  does not needs the sort of ``undirected_keys``; the count itself
  (``count_static``) is the same and is timed separately.

``diffcsr_crossover``: a stream of insert and delete batches, each followed by
reads (a point-query batch and the adjacency of a batch of rows), replayed
through ``diffcsr`` at several merge thresholds: small thresholds pay merges
often, large ones pay long diffs on every read.  A full ``adjacency()`` per batch
(what a static job reads) is timed apart: it merges base and diff every time.
"""
from __future__ import annotations

import time

import numpy as np

from vinestream.algorithms.bfs import bfs_arrays, csr_expander, graph_expander
from vinestream.algorithms.triangles import count_static, undirected_keys
from vinestream.structures import backend
from vinestream.structures.array_ops import edge_keys, key_sources, key_targets
from vinestream.structures.csr_types import VERTEX_DTYPE, CSRBatch
from vinestream.structures.gpma import GAP
from vinestream.structures.registry import create

from .structures import _prepare

SORTED = ("gpma", "diffcsr", "csr")     # structures whose adjacency() rows come sorted by (src, dst)


def _timed(xp, fn, *args):
    backend.synchronize(xp)
    t0 = time.perf_counter()
    out = fn(*args)
    backend.synchronize(xp)
    return time.perf_counter() - t0, out


def _load(xp, name, n, src, dst):
    g = create(name, xp)
    g.insert_vertices(xp.arange(n, dtype=VERTEX_DTYPE))
    g.insert_edges(CSRBatch.from_edges(xp, src, dst))
    return g


def triangle_keys(xp, g):
    """Undirected keys ``(lo << 32) | hi`` of a mirrored graph: from a sorted structure a filter of its
    keys in order (gpma: its array with the gaps dropped), otherwise through ``undirected_keys``' sort."""
    if g.name == "gpma":
        keys = g.slot_keys[g.slot_keys != GAP]
    elif g.name in SORTED:
        csr = g.adjacency()
        keys = edge_keys(xp, csr.row_ids(), csr.cols)
    else:
        csr = g.adjacency()
        return undirected_keys(xp, csr.row_ids(), csr.cols)
    return keys[key_sources(keys) < key_targets(keys)]


def bench_sorted_adjacency(xp, graphs, structures=("gpma", "diffcsr", "graphvine", "csr"), seed: int = 0) -> dict:
    out = {"backend": backend.backend_name(xp), "graphs": []}
    for gi, spec in enumerate(graphs):
        name, n, s, d, _ = _prepare(xp, spec, seed + gi)
        src, dst = xp.concatenate([s, d]), xp.concatenate([d, s])       # mirrored: undirected jobs
        entry = {"name": name, "vertices": n, "edges": int(src.shape[0]), "structures": {}}
        for sname in structures:
            g = _load(xp, sname, n, src, dst)
            root = int(xp.argmax(g.degree()))
            r = {}
            r["bfs_direct_s"], (dist_a, _, levels, _) = _timed(
                xp, bfs_arrays, xp, g.vertex_capacity, xp.asarray([root]), graph_expander(xp, g))
            t_csr, csr = _timed(xp, g.adjacency)
            t_bfs, (dist_b, *_rest) = _timed(xp, bfs_arrays, xp, g.vertex_capacity, xp.asarray([root]),
                                             csr_expander(xp, csr))
            assert bool((dist_a == dist_b).all())
            r.update(bfs_levels=int(levels), csr_rebuild_s=t_csr, bfs_on_csr_s=t_bfs,
                     bfs_rebuild_plus_csr_s=t_csr + t_bfs)
            # triangles: undirected keys straight from a sorted adjacency, or through the sort
            t_keys, und = _timed(xp, triangle_keys, xp, g)
            t_count, (counts, _) = _timed(xp, count_static, xp, g.vertex_capacity, und)
            r.update(triangle_keys_s=t_keys, triangle_count_s=t_count, triangles=int(counts.sum()) // 3)
            entry["structures"][sname] = r
            del g
        out["graphs"].append(entry)
    return out


def diffcsr_crossover(xp, spec, fractions=(0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0), batch: int = 10_000,
                      rounds: int = 20, read_rows: int = 1000, seed: int = 0) -> dict:
    """Seconds per batch (update + reads) of ``diffcsr`` at each merge threshold on one graph.  ``batch`` is cut
    to the graph: the ``rounds`` batches take at most half its edges (on R-MAT 8, 2,583 edges, 10,000-edge
    batches left no edges to load and failed with numpy's "high <= 0")."""
    name, n, src, dst, w = _prepare(xp, spec, seed)
    e = int(src.shape[0])
    batch = max(1, min(int(batch), e // (2 * rounds)))
    init = e - rounds * batch
    rs = np.random.RandomState(seed)
    rows_out = []
    for frac in fractions:
        g = create("diffcsr", xp, merge_fraction=frac)
        g.insert_vertices(xp.arange(n, dtype=VERTEX_DTYPE))
        g.insert_edges(CSRBatch.from_edges(xp, src[:init], dst[:init], w[:init]))
        upd = reads = full = 0.0
        for r in range(rounds):
            lo = init + r * batch
            t, _ = _timed(xp, g.insert_edges, CSRBatch.from_edges(xp, src[lo:lo + batch], dst[lo:lo + batch],
                                                                  w[lo:lo + batch]))
            old = xp.asarray(rs.randint(0, init, batch // 2))
            t2, _ = _timed(xp, g.delete_edges, CSRBatch.from_edges(xp, src[old], dst[old]))
            q = xp.asarray(rs.randint(0, n, read_rows).astype(VERTEX_DTYPE))
            t3, _ = _timed(xp, g.contains, src[lo:lo + batch], dst[lo:lo + batch])
            t4, _ = _timed(xp, g.adjacency, q)
            t5, _ = _timed(xp, g.adjacency)                 # what a static job reads every batch
            upd += t + t2
            reads += t3 + t4
            full += t5
        rows_out.append({"merge_fraction": frac, "merges": g.stats["merges"],
                         "update_s_per_batch": upd / rounds, "read_s_per_batch": reads / rounds,
                         "total_s_per_batch": (upd + reads) / rounds, "full_read_s_per_batch": full / rounds,
                         "total_with_full_read_s_per_batch": (upd + reads + full) / rounds})
    return {"graph": name, "vertices": n, "edges": e, "batch": batch, "rounds": rounds, "rows": rows_out}


def format_tables(result: dict, crossover: dict | None = None) -> str:
    lines = [f"backend: {result['backend']}"]
    for gr in result["graphs"]:
        lines.append(f"== {gr['name']} (mirrored): {gr['vertices']:,} vertices, {gr['edges']:,} edges")
        lines.append(f"{'structure':<10} | {'bfs direct':>10} | {'rebuild':>8} {'bfs csr':>8} {'sum':>8} | "
                     f"{'tri keys':>8} {'tri count':>9}   (seconds)")
        for sname, r in gr["structures"].items():
            lines.append(f"{sname:<10} | {r['bfs_direct_s']:>10.4f} | {r['csr_rebuild_s']:>8.4f} "
                         f"{r['bfs_on_csr_s']:>8.4f} {r['bfs_rebuild_plus_csr_s']:>8.4f} | "
                         f"{r['triangle_keys_s']:>8.4f} {r['triangle_count_s']:>9.4f}")
    if crossover:
        lines.append(f"== diffcsr merge threshold on {crossover['graph']}: {crossover['rounds']} rounds of "
                     f"{crossover['batch']:,} inserts + {crossover['batch'] // 2:,} deletes + reads")
        lines.append(f"{'fraction':>8} {'merges':>6} | {'update s':>9} {'read s':>9} {'total s':>9} | "
                     f"{'full adj s':>10} {'total+full':>10}   (per batch)")
        for row in crossover["rows"]:
            lines.append(f"{row['merge_fraction']:>8.3f} {row['merges']:>6} | {row['update_s_per_batch']:>9.4f} "
                         f"{row['read_s_per_batch']:>9.4f} {row['total_s_per_batch']:>9.4f} | "
                         f"{row['full_read_s_per_batch']:>10.4f} {row['total_with_full_read_s_per_batch']:>10.4f}")
    return "\n".join(lines)
