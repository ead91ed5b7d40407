"""Breadth-first search: hop distances and parents from one or more sources, static and incremental.

Distances are exact (networkx ``single_source_shortest_path_length``, the
minimum over the sources when there are several); ``-1`` marks an unreachable
vertex.  A parent is any in-neighbour one hop closer (the smallest id among
them when a level discovers a vertex), ``-1`` for sources and unreachable
vertices.

**Static**: level-synchronous frontier expansion.  Each level gathers the
frontier's rows (a segmented arange over the CSR offsets), keeps the
neighbours not yet reached and picks one parent per new vertex with a
scatter-min.  The column array is read through an accessor, so the same code
walks a plain CSR or the Fixed-Length bit-packed one
(:mod:`algorithms.compressed`).

**Incremental** (the classic decremental/incremental BFS-tree repair,
e.g. Ramalingam and Reps): with the graph already in its new state,

1. a deleted edge ``u -> v`` with ``parent[v] == u`` cut the tree: the subtree
   below ``v`` (found by walking tree edges down, one level per step, reading
   only the subtree's rows) loses its distances; so do removed vertices;
2. every invalidated vertex is re-seeded from its *boundary*: its in-neighbours
   that kept a distance (the job keeps a sorted in-edge index for this, updated
   from the delta by merge, since structures answer out-adjacency only);
3. inserted edges ``u -> v`` with ``dist[u] + 1 < dist[v]`` seed ``v``;
   sources that appeared since the last batch seed themselves at 0;
4. the seeds are relaxed outward level by level (a bucketed Dijkstra with unit
   weights: seeds at different levels join when their level comes up), which
   only ever lowers distances, so it touches the region whose distances changed.

Vertices outside the invalidated subtrees keep a tree path made of surviving
edges, so their old distance is still an upper bound, and step 4 makes every
edge satisfy ``dist[w] <= dist[u] + 1``: the result is exact.  A source that
disappears, or a batch larger than ``fallback_fraction`` of the edges, falls
back to the static form.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from vinestream.structures.array_ops import row_ids, scatter_min, segmented_arange, unique_sorted
from vinestream.structures.backend import to_numpy
from vinestream.structures.base import DynamicGraph
from vinestream.structures.delta import BatchDelta

from .base import Job, grow
from .edge_index import SortedEdgeIndex, expand_rows

DIST = np.int32
NO_PARENT = np.uint64(2**63)     # scatter_min sentinel (cupyx.scatter_min has no int64: keys are uint64)


def relax_levels(xp, dist, parent, seeds, expand) -> tuple[int, int]:
    """Lower distances outward from ``seeds`` (vertices whose ``dist`` was just set), level by level.

    ``expand(frontier) -> (owner, neighbour)`` lists the out-edges of the
    frontier vertices.  ``dist``/``parent`` are updated in place; returns
    (levels processed, edges scanned).
    """
    active = unique_sorted(xp, seeds.astype(np.int64))
    levels = edges = 0
    best = None
    while active.shape[0]:
        labels = dist[active]
        level = int(labels.min())
        at_level = labels == level
        frontier = active[at_level]
        active = active[~at_level]
        owner, nbr = expand(frontier)
        edges += int(nbr.shape[0])
        levels += 1
        nbr = nbr.astype(np.int64)
        dn = dist[nbr]
        better = (dn < 0) | (dn > level + 1)
        nbr = nbr[better]
        if nbr.shape[0] == 0:
            continue
        src = frontier[owner[better]]
        if best is None:
            best = xp.full(dist.shape[0], NO_PARENT, dtype=np.uint64)
        scatter_min(xp, best, nbr, src.astype(np.uint64))                   # one parent per vertex: the smallest
        reached = unique_sorted(xp, nbr)
        dist[reached] = level + 1
        parent[reached] = best[reached].astype(parent.dtype)
        best[reached] = NO_PARENT
        active = xp.concatenate([active, reached])
    return levels, edges


def csr_expander(xp, csr, column_at=None):
    """``expand`` for :func:`relax_levels` over a full CSR; ``column_at(positions)`` decodes columns."""
    if column_at is None:
        return lambda frontier: expand_rows(xp, csr, frontier)

    def expand(frontier):
        v = frontier.astype(np.int64)
        starts = csr.offsets[v]
        owner, pos = segmented_arange(xp, starts, csr.offsets[v + 1] - starts)
        return owner, column_at(pos)
    return expand


def graph_expander(xp, graph: DynamicGraph):
    """``expand`` that asks the structure for just the frontier's rows."""
    def expand(frontier):
        adj = graph.adjacency(frontier.astype(np.int32))
        return row_ids(xp, adj.offsets).astype(np.int64), adj.cols
    return expand


def bfs_arrays(xp, capacity: int, sources, expand):
    """Static BFS: (dist, parent, levels, edges scanned) from internal ``sources`` (-1 entries ignored)."""
    dist = xp.full(capacity, -1, dtype=DIST)
    parent = xp.full(capacity, -1, dtype=np.int32)
    sources = xp.asarray(sources, dtype=np.int64)
    sources = sources[sources >= 0]
    dist[sources] = 0
    levels, edges = relax_levels(xp, dist, parent, sources, expand)
    return dist, parent, levels, edges


class BFS(Job):
    name = "bfs"

    def __init__(self, xp=np, *, sources=(), fallback_fraction: float = 0.1, **params):
        super().__init__(xp, **params)
        if isinstance(sources, (int, np.integer)):
            sources = [sources]
        self.sources = np.asarray(list(sources), dtype=np.int64)     # external ids
        self.fallback_fraction = float(fallback_fraction)
        self.dist = xp.zeros(0, dtype=DIST)
        self.parent = xp.zeros(0, dtype=np.int32)
        self.source_slots = xp.zeros(0, dtype=np.int64)              # resolved, -1 where unknown
        self.in_edges = SortedEdgeIndex(xp)                          # (dst, src) keys of every edge
        self._ready = False

    def _resolve(self, vertex_map):
        if self.sources.shape[0] == 0:
            return self.xp.zeros(0, dtype=np.int64)
        return self.xp.asarray(vertex_map.lookup(self.xp.asarray(self.sources)), dtype=np.int64)

    def run_static(self, graph: DynamicGraph, vertex_map) -> None:
        xp = self.xp
        _live, live_mask = self._remember_live(graph)
        cap = int(live_mask.shape[0])
        csr = graph.adjacency()
        rows = row_ids(xp, csr.offsets)
        self.in_edges = SortedEdgeIndex.from_edges(xp, csr.cols, rows)
        self.source_slots = self._resolve(vertex_map)
        self.dist, self.parent, levels, edges = bfs_arrays(xp, cap, self.source_slots,
                                                           csr_expander(xp, csr))
        self._ready = True
        self.work = {"mode": "static", "iterations": levels, "edges_touched": edges,
                     "index_edges": int(csr.num_edges)}

    def update(self, graph: DynamicGraph, delta: BatchDelta, vertex_map) -> None:
        xp = self.xp
        if not self._ready:
            return self.run_static(graph, vertex_map)
        slots = self._resolve(vertex_map)
        removed = xp.asarray(delta.vertices_removed, dtype=np.int64)
        added = xp.asarray(delta.vertices_added, dtype=np.int64)
        old = self.source_slots
        was_removed = xp.zeros(max(int(graph.vertex_capacity), self.dist.shape[0], 1), dtype=bool)
        was_removed[removed] = True
        # A source that vanished or moved to another slot: its whole tree is gone; start over.
        lost = (old >= 0) & ((slots != old) | was_removed[xp.maximum(old, 0)])
        if bool(lost.any()) or delta.num_changed_edges > self.fallback_fraction * max(int(graph.num_edges), 1):
            return self.run_static(graph, vertex_map)
        _live, live_mask = self._remember_live(graph)
        cap = int(live_mask.shape[0])
        dist = grow(xp, self.dist, cap, -1)
        parent = grow(xp, self.parent, cap, -1)
        ins_s, ins_d = delta.inserted_src.astype(np.int64), delta.inserted_dst.astype(np.int64)
        del_s, del_d = delta.deleted_src.astype(np.int64), delta.deleted_dst.astype(np.int64)
        self.in_edges.remove(del_d, del_s)
        self.in_edges.add(ins_d, ins_s)
        edges = 0
        levels = 0

        # 1. Cut tree edges -> invalidate the subtrees below them (walk tree edges down).
        cut = del_d[(parent[del_d] == del_s) & (dist[del_d] > 0)]
        roots = unique_sorted(xp, xp.concatenate([cut, removed]))
        invalid = xp.zeros(cap, dtype=bool)
        invalid[roots] = True
        is_new = xp.zeros(cap, dtype=bool)
        is_new[added] = True
        level = roots[live_mask[roots] & ~is_new[roots]] if roots.shape[0] else roots
        while level.shape[0]:
            adj = graph.adjacency(level.astype(np.int32))
            owner = row_ids(xp, adj.offsets).astype(np.int64)
            w = adj.cols.astype(np.int64)
            edges += int(w.shape[0])
            child = (parent[w] == level[owner]) & ~invalid[w] & (dist[w] > 0)
            level = unique_sorted(xp, w[child])
            invalid[level] = True
            levels += 1
        invalid[added] = True                       # fresh slots (possibly reused) start unknown
        dist[invalid] = -1
        parent[invalid] = -1
        inv = xp.nonzero(invalid & live_mask)[0].astype(np.int64)

        # 2./3. Seeds: boundary of the invalidated region, inserted edges, newly resolved sources.
        cand_v, cand_key = [], []
        if inv.shape[0]:
            owner, u = self.in_edges.neighbours(inv)
            u = u.astype(np.int64)
            edges += int(u.shape[0])
            ok = dist[u] >= 0
            cand_v.append(inv[owner[ok]])
            cand_key.append(((dist[u[ok]].astype(np.int64) + 1) << 32) | u[ok])
        if ins_s.shape[0]:
            du = dist[ins_s]
            ok = (du >= 0) & ((dist[ins_d] < 0) | (dist[ins_d] > du + 1))
            cand_v.append(ins_d[ok])
            cand_key.append(((du[ok].astype(np.int64) + 1) << 32) | ins_s[ok])
        new_sources = slots[(slots >= 0) & (old < 0)] if old.shape[0] else slots[slots >= 0]
        new_sources = new_sources[dist[new_sources] != 0] if new_sources.shape[0] else new_sources
        if new_sources.shape[0]:
            cand_v.append(new_sources)
            cand_key.append(xp.zeros(new_sources.shape[0], dtype=np.int64))   # key 0: level 0, no parent
        seeds = xp.zeros(0, dtype=np.int64)
        if cand_v:
            v = xp.concatenate(cand_v)
            key = xp.concatenate(cand_key)
            if v.shape[0]:
                best = xp.full(cap, NO_PARENT, dtype=np.uint64)
                scatter_min(xp, best, v, key.astype(np.uint64))
                seeds = unique_sorted(xp, v)
                bk = best[seeds].astype(np.int64)
                is_src = bk == 0
                label = xp.where(is_src, 0, bk >> 32).astype(DIST)
                par = xp.where(is_src, -1, bk & 0xFFFFFFFF).astype(np.int32)
                cur = dist[seeds]
                better = (cur < 0) | (label < cur)
                seeds = seeds[better]
                dist[seeds] = label[better]
                parent[seeds] = par[better]

        # 4. Relax outward from the seeds, reading only the rows whose distance changes.
        more_levels, more_edges = relax_levels(xp, dist, parent, seeds, graph_expander(xp, graph))
        dist[~live_mask] = -1
        parent[~live_mask] = -1
        self.dist, self.parent, self.source_slots = dist, parent, slots
        self.work = {"mode": "incremental", "iterations": levels + more_levels,
                     "edges_touched": edges + more_edges, "invalidated": int(inv.shape[0]),
                     "seeds": int(seeds.shape[0]), "index_edges": int(delta.num_changed_edges)}

    # -- results ---------------------------------------------------------------------------
    def output(self, vertex_map) -> pa.Table:
        xp = self.xp
        live = self._live
        dist = self.dist[live]
        par = self.parent[live]
        has = par >= 0
        ext = xp.full(live.shape[0], 0, dtype=np.int64)
        if bool(has.any()):
            ext[has] = xp.asarray(vertex_map.external(par[has]), dtype=np.int64)
        parent_col = pa.array(to_numpy(ext), type=pa.int64(), mask=~to_numpy(has))
        return pa.table({"vertex": self._vertex_column(vertex_map),
                         "distance": pa.array(to_numpy(dist).astype(np.int64), pa.int64()),
                         "parent": parent_col})

    def reached(self) -> int:
        return int((self.dist[self._live] >= 0).sum()) if self._live.shape[0] else 0

    def summary(self) -> dict:
        return {"bfs_reached": self.reached(), "bfs_levels": int(self.work.get("iterations", 0)),
                "bfs_edges_touched": int(self.work.get("edges_touched", 0))}

    def state(self) -> dict:
        return {**self._host(dist=self.dist, parent=self.parent, source_slots=self.source_slots,
                             in_edge_keys=self.in_edges.keys, live=self._live),
                "sources": self.sources.copy()}

    def load_state(self, state: dict) -> None:
        self.dist = self._device(state["dist"], DIST)
        self.parent = self._device(state["parent"], np.int32)
        self.source_slots = self._device(state["source_slots"], np.int64)
        self.in_edges = SortedEdgeIndex(self.xp, self._device(state["in_edge_keys"], np.int64))
        self._live = self._device(state["live"], np.int32)
        self.sources = np.asarray(state["sources"], dtype=np.int64)
        self._ready = True
