"""Sorted edge-key arrays: the adjacency index the incremental jobs keep for themselves.

A structure only answers *out*-adjacency (``DynamicGraph.adjacency``).  BFS
needs in-neighbours (the boundary of an invalidated subtree) and triangle
counting needs the undirected neighbourhood; rebuilding either from the full
CSR on every batch would cost a pass over all edges, which is what the
incremental forms exist to avoid.  So a job keeps a sorted array of int64 keys
``(row << 32) | col`` and applies each batch's changes to it: deletions by one
searchsorted and a compaction, insertions by a merge (searchsorted positions
plus a scatter), never a full re-sort.  Row ``v`` is the key range
``[v << 32, (v + 1) << 32)``, found by two searchsorted calls.

All functions are array programs over ``xp`` (NumPy or CuPy).
"""
from __future__ import annotations

import numpy as np

from vinestream.structures.array_ops import LOW32, edge_keys, member, segmented_arange, unique_sorted
from vinestream.structures.csr_types import CSR, OFFSET_DTYPE, VERTEX_DTYPE


class SortedEdgeIndex:
    """A set of (row, col) pairs kept as sorted distinct int64 keys on ``xp``."""

    def __init__(self, xp, keys=None):
        self.xp = xp
        self.keys = keys if keys is not None else xp.zeros(0, dtype=np.int64)

    @classmethod
    def from_edges(cls, xp, rows, cols) -> SortedEdgeIndex:
        return cls(xp, unique_sorted(xp, edge_keys(xp, rows, cols)))

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes)

    def contains(self, rows, cols):
        return member(self.xp, self.keys, edge_keys(self.xp, rows, cols))

    def remove(self, rows, cols) -> int:
        """Drop the given pairs (absent ones are ignored); returns how many were removed."""
        xp = self.xp
        if rows.shape[0] == 0 or self.keys.shape[0] == 0:
            return 0
        gone = unique_sorted(xp, edge_keys(xp, rows, cols))
        keep = ~member(xp, gone, self.keys)
        before = self.keys.shape[0]
        self.keys = self.keys[keep]
        return int(before - self.keys.shape[0])

    def add(self, rows, cols) -> int:
        """Insert the given pairs (present ones are ignored) by a merge; returns how many were new."""
        xp = self.xp
        if rows.shape[0] == 0:
            return 0
        new = unique_sorted(xp, edge_keys(xp, rows, cols))
        new = new[~member(xp, self.keys, new)]
        k = int(new.shape[0])
        if k == 0:
            return 0
        # Merge: key new[i] lands after the searchsorted(keys, new[i]) old keys and the i new ones before it.
        dest_new = xp.searchsorted(self.keys, new) + xp.arange(k, dtype=np.int64)
        out = xp.empty(self.keys.shape[0] + k, dtype=np.int64)
        is_old = xp.ones(out.shape[0], dtype=bool)
        is_old[dest_new] = False
        out[dest_new] = new
        out[is_old] = self.keys
        self.keys = out
        return k

    def row_ranges(self, vertices):
        """(start, count) of each vertex's row in ``keys``."""
        xp = self.xp
        v = xp.asarray(vertices).astype(np.int64)
        lo = xp.searchsorted(self.keys, v << 32)
        hi = xp.searchsorted(self.keys, (v + 1) << 32)
        return lo, hi - lo

    def degrees(self, vertices):
        return self.row_ranges(vertices)[1]

    def neighbours(self, vertices):
        """Every pair of the given rows as ``(owner, col)``: owner indexes ``vertices``."""
        starts, counts = self.row_ranges(vertices)
        owner, pos = segmented_arange(self.xp, starts, counts)
        return owner, (self.keys[pos] & LOW32).astype(VERTEX_DTYPE)

    def to_csr(self, num_rows: int) -> CSR:
        """The whole index as a CSR over ``num_rows`` rows."""
        xp = self.xp
        bounds = xp.searchsorted(self.keys, xp.arange(num_rows + 1, dtype=np.int64) << 32)
        return CSR(offsets=bounds.astype(OFFSET_DTYPE), cols=(self.keys & LOW32).astype(VERTEX_DTYPE),
                   weights=None)


def expand_rows(xp, csr: CSR, vertices):
    """Edges of rows ``vertices`` of a full CSR as ``(owner, col)`` (owner indexes ``vertices``)."""
    v = xp.asarray(vertices).astype(np.int64)
    starts = csr.offsets[v]
    owner, pos = segmented_arange(xp, starts, csr.offsets[v + 1] - starts)
    return owner, csr.cols[pos]
