"""A minimal DynamicGraph on a sorted edge-key array, for benchmarks and tests of the jobs.

It is not one of the paper structures (those live in ``structures/``): it only
lets the algorithm benchmark and tests drive the jobs when no structure is
chosen, and it replays a :class:`~stream.delta.BatchDelta` in the delta's
apply order (``apply_delta``).  Edges are unweighted here (weight 1.0).
"""
from __future__ import annotations

import numpy as np

from structures.base import DynamicGraph
from structures.csr_types import CSR, OFFSET_DTYPE, VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch

from .edge_index import SortedEdgeIndex, segmented_arange, split_keys


class KeyGraph(DynamicGraph):
    name = "keygraph"

    def __init__(self, xp=np, capacity: int = 0, **options):
        super().__init__(xp, **options)
        self.edges = SortedEdgeIndex(xp)
        self.live = xp.zeros(int(capacity), dtype=bool)

    @classmethod
    def from_edges(cls, xp, src, dst, num_vertices: int) -> KeyGraph:
        g = cls(xp, capacity=num_vertices)
        g.live[:] = True
        src = xp.asarray(src, dtype=np.int64)
        dst = xp.asarray(dst, dtype=np.int64)
        keep = src != dst
        g.edges = SortedEdgeIndex.from_edges(xp, src[keep], dst[keep])
        return g

    def _grow(self, capacity: int) -> None:
        if capacity > self.live.shape[0]:
            live = self.xp.zeros(max(capacity, 2 * self.live.shape[0]), dtype=bool)
            live[: self.live.shape[0]] = self.live
            self.live = live

    # -- vertices ---------------------------------------------------------------------
    def insert_vertices(self, ids) -> None:
        ids = self.xp.asarray(ids, dtype=np.int64)
        if ids.shape[0]:
            self._grow(int(ids.max()) + 1)
            self.live[ids] = True

    def delete_vertices(self, ids):
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        dead = xp.zeros(self.live.shape[0], dtype=bool)
        dead[ids] = True
        s, d = split_keys(self.edges.keys)
        hit = dead[s] | dead[d]
        gone_s, gone_d = s[hit], d[hit]
        self.edges.keys = self.edges.keys[~hit]
        self.live[ids] = False
        return gone_s, gone_d

    # -- edges ------------------------------------------------------------------------
    def insert_edges(self, batch: CSRBatch):
        src, dst = batch.sources(), batch.cols
        new = ~self.edges.contains(src, dst)
        self.edges.add(src, dst)
        return new

    def delete_edges(self, batch: CSRBatch):
        src, dst = batch.sources(), batch.cols
        hit = self.edges.contains(src, dst)
        self.edges.remove(src, dst)
        return hit

    def apply_delta(self, delta) -> None:
        """Replay ``delta`` in its apply order (vertices removed, added, then edges)."""
        xp = self.xp
        self.edges.remove(delta.deleted_src, delta.deleted_dst)
        self.live[xp.asarray(delta.vertices_removed, dtype=np.int64)] = False
        self.insert_vertices(delta.vertices_added)
        self.edges.add(delta.inserted_src, delta.inserted_dst)

    def contains(self, src, dst):
        return self.edges.contains(self.xp.asarray(src), self.xp.asarray(dst))

    def degree(self, vertices=None):
        xp = self.xp
        if vertices is None:
            vertices = xp.arange(self.live.shape[0], dtype=np.int64)
        return self.edges.degrees(vertices).astype(np.int64)

    def adjacency(self, vertices=None) -> CSR:
        xp = self.xp
        if vertices is None:
            full = self.edges.to_csr(int(self.live.shape[0]))
            return CSR(full.offsets, full.cols, xp.ones(full.num_edges, dtype=WEIGHT_DTYPE))
        v = xp.asarray(vertices, dtype=np.int64)
        starts, counts = self.edges.row_ranges(v)
        _owner, pos = segmented_arange(xp, starts, counts)
        offsets = xp.zeros(v.shape[0] + 1, dtype=OFFSET_DTYPE)
        offsets[1:] = xp.cumsum(counts)
        cols = split_keys(self.edges.keys[pos])[1]
        return CSR(offsets, cols, xp.ones(cols.shape[0], dtype=WEIGHT_DTYPE))

    # -- sizes ------------------------------------------------------------------------
    @property
    def num_vertices(self) -> int:
        return int(self.live.sum())

    @property
    def num_edges(self) -> int:
        return len(self.edges)

    @property
    def vertex_capacity(self) -> int:
        return int(self.live.shape[0])

    def vertices(self):
        return self.xp.nonzero(self.live)[0].astype(VERTEX_DTYPE)

    def memory(self) -> dict:
        b = self.edges.nbytes + int(self.live.nbytes)
        return {"reserved_bytes": b, "used_bytes": b}

