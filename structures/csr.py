"""The rebuild-from-scratch CSR: the baseline every dynamic structure must beat on update cost.

A static CSR (offsets over the vertex capacity, column ids, weights) has no room
for change, so every batch rebuilds it completely with the same array program
the batcher uses to turn events into a CSR batch:

* insert: concatenate the live edges with the batch, stable-sort by the one
  int64 key ``(src << 32) | dst``, keep the *last* edge of each run of equal keys
  (so a batch edge that already exists upserts its weight), recompute the
  offsets by ``bincount`` + ``cumsum``;
* delete: find every live key in the (sorted) batch keys with ``searchsorted``,
  drop those, recompute the offsets.

Both cost O(E log E) or O(E) per batch however small the batch is: that is the
point of the baseline.  Queries are cheap because the keys stay sorted:
``contains``/``edge_weights`` are one ``searchsorted`` per query batch, and a
row is a slice of the arrays.

A live-vertex mask over the capacity (which doubles when an id exceeds it)
says which internal ids exist.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .array_ops import (
    bincount,
    edge_keys,
    gather_segments,
    grown_capacity,
    key_sources,
    key_targets,
    sorted_lookup,
)
from .backend import nbytes
from .base import DynamicGraph
from .csr_types import CSR, OFFSET_DTYPE, VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch, batch_keys, batch_weights
from .options import MAX_VERTEX_CAPACITY, Option
from .registry import register


@register
class CSRGraph(DynamicGraph):
    """Static CSR rebuilt from scratch on every batch (options: :attr:`options_spec`)."""

    name = "csr"

    options_spec: ClassVar[dict[str, Option]] = {
        "vertex_capacity": Option(int, 1024, "vertex ids the first arrays hold (doubled when exceeded)",
                                  low=1, high=MAX_VERTEX_CAPACITY),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        cap = self.options["vertex_capacity"]
        self._live = xp.zeros(cap, dtype=bool)
        self._num_live = 0
        self._keys = xp.zeros(0, dtype=np.int64)      # sorted (src << 32) | dst
        self._cols = xp.zeros(0, dtype=VERTEX_DTYPE)
        self._weights = xp.zeros(0, dtype=WEIGHT_DTYPE)
        self._offsets = xp.zeros(cap + 1, dtype=OFFSET_DTYPE)

    # -- rebuild --------------------------------------------------------------
    def _set_edges(self, keys, weights) -> None:
        """Install sorted, distinct ``keys`` as the graph and recompute the offsets (bincount + cumsum)."""
        xp = self.xp
        self._keys = keys
        self._weights = weights
        self._cols = key_targets(keys).astype(VERTEX_DTYPE)
        counts = bincount(xp, key_sources(keys), self.vertex_capacity)
        offsets = xp.zeros(self.vertex_capacity + 1, dtype=OFFSET_DTYPE)
        offsets[1:] = xp.cumsum(counts)
        self._offsets = offsets

    def _grow_vertices(self, needed: int) -> None:
        cap = self.vertex_capacity
        if needed <= cap:
            return
        new_cap = grown_capacity(cap, needed)
        live = self.xp.zeros(new_cap, dtype=bool)
        live[:cap] = self._live
        self._live = live
        self._set_edges(self._keys, self._weights)   # offsets over the new capacity

    # -- vertices -------------------------------------------------------------
    def insert_vertices(self, ids) -> None:
        """Mark ``ids`` live; an id that is already live keeps its edges."""
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        if ids.shape[0] == 0:
            return
        self._grow_vertices(int(ids.max()) + 1)
        self._live[ids] = True
        self._num_live = int(self._live.sum())

    def delete_vertices(self, ids) -> tuple:
        """Drop ``ids`` (dead or unknown ids are ignored) and every edge touching them; rebuild."""
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        ids = ids[(ids >= 0) & (ids < self.vertex_capacity)]
        empty = (xp.zeros(0, dtype=VERTEX_DTYPE), xp.zeros(0, dtype=VERTEX_DTYPE))
        if ids.shape[0] == 0:
            return empty
        dying = xp.zeros(self.vertex_capacity, dtype=bool)
        dying[ids] = self._live[ids]
        self._live[ids] = False
        self._num_live = int(self._live.sum())
        src = key_sources(self._keys)
        removed = dying[src] | dying[self._cols]
        out = ((src[removed]).astype(VERTEX_DTYPE), self._cols[removed])
        keep = ~removed
        self._set_edges(self._keys[keep], self._weights[keep])
        return out

    # -- edges ----------------------------------------------------------------
    def insert_edges(self, batch: CSRBatch):
        """Concatenate, sort, dedupe keeping the batch's weight, rebuild; True where the edge is new."""
        xp = self.xp
        keys = batch_keys(xp, batch)
        if keys.shape[0] == 0:
            return xp.zeros(0, dtype=bool)
        _, existed = sorted_lookup(xp, self._keys, keys)
        all_keys = xp.concatenate([self._keys, keys])
        all_w = xp.concatenate([self._weights, batch_weights(xp, batch)])
        order = xp.argsort(all_keys, kind="stable")
        all_keys = all_keys[order]
        # keep the last of each run: the batch comes after the old edges, so its weight wins
        last = xp.ones(all_keys.shape[0], dtype=bool)
        last[:-1] = all_keys[1:] != all_keys[:-1]
        self._set_edges(all_keys[last], all_w[order][last])
        return ~existed

    def delete_edges(self, batch: CSRBatch):
        """Mask out the live keys found in the batch, rebuild; True where an edge was removed."""
        xp = self.xp
        keys = batch_keys(xp, batch)
        if keys.shape[0] == 0:
            return xp.zeros(0, dtype=bool)
        _, removed = sorted_lookup(xp, self._keys, keys)
        # batch keys are sorted, so each live key is looked up there in one searchsorted
        _, doomed = sorted_lookup(xp, xp.sort(keys), self._keys)
        keep = ~doomed
        self._set_edges(self._keys[keep], self._weights[keep])
        return removed

    def contains(self, src, dst):
        _, hit = sorted_lookup(self.xp, self._keys, edge_keys(self.xp, src, dst))
        return hit

    def edge_weights(self, src, dst):
        xp = self.xp
        pos, hit = sorted_lookup(xp, self._keys, edge_keys(xp, src, dst))
        out = xp.full(hit.shape[0], np.nan, dtype=WEIGHT_DTYPE)
        if self._keys.shape[0]:
            out[hit] = self._weights[pos[hit]]
        return out

    # -- queries --------------------------------------------------------------
    def _row_bounds(self, vertices):
        """Start and end offsets of ``vertices``' rows (empty for ids outside the capacity)."""
        xp = self.xp
        cap = self.vertex_capacity
        v = xp.asarray(vertices, dtype=np.int64)
        inside = (v >= 0) & (v < cap)
        vc = xp.where(inside, v, cap)
        start = self._offsets[vc]
        end = self._offsets[xp.where(inside, v + 1, cap)]
        return start, end

    def degree(self, vertices=None):
        if vertices is None:
            return self.xp.diff(self._offsets)
        start, end = self._row_bounds(vertices)
        return end - start

    def adjacency(self, vertices=None) -> CSR:
        full = CSR(offsets=self._offsets, cols=self._cols, weights=self._weights)
        if vertices is None:
            return full
        start, end = self._row_bounds(vertices)
        offsets, idx = gather_segments(self.xp, start, end - start)
        return CSR(offsets=offsets, cols=self._cols[idx], weights=self._weights[idx])

    # -- sizes ----------------------------------------------------------------
    @property
    def num_vertices(self) -> int:
        return self._num_live

    @property
    def num_edges(self) -> int:
        return int(self._keys.shape[0])

    @property
    def vertex_capacity(self) -> int:
        return int(self._live.shape[0])

    def vertices(self):
        return self.xp.nonzero(self._live)[0].astype(VERTEX_DTYPE)

    def memory(self) -> dict:
        """Everything is exactly sized except the vertex arrays, which span the capacity."""
        edge_bytes = nbytes(self._keys, self._cols, self._weights)
        vertex_bytes = nbytes(self._live, self._offsets)
        per_vertex = self._live.itemsize + self._offsets.itemsize
        return {
            "reserved_bytes": edge_bytes + vertex_bytes,
            "used_bytes": edge_bytes + self._num_live * per_vertex + self._offsets.itemsize,
            "edge_bytes": edge_bytes,
            "vertex_bytes": vertex_bytes,
            "vertex_capacity": self.vertex_capacity,
        }
