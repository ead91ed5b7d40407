"""Compressed sparse row containers shared by the batcher, structures and algorithms.

Both live on the backend of their arrays (NumPy or CuPy) and are built with
data-parallel array programs only: a lexicographic sort by (src, dst), a
bincount of the sources, and a prefix sum for the offsets.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .array_ops import edge_keys, repeat, repeat_index, sorted_runs
from .backend import array_module

VERTEX_DTYPE = np.int32      # internal (dense) vertex ids
OFFSET_DTYPE = np.int64      # CSR offsets: edge counts can pass 2**31
WEIGHT_DTYPE = np.float32


@dataclass(frozen=True)
class CSR:
    """Adjacency rows: row ``i`` holds ``cols[offsets[i]:offsets[i+1]]``.

    ``weights`` is None for an unweighted view.  Which vertex a row belongs to
    is the caller's business (``adjacency(vertices)`` returns rows in the order
    of ``vertices``; ``adjacency()`` returns one row per internal id).
    """
    offsets: object           # int64, length rows + 1
    cols: object              # int32
    weights: object | None    # float32 or None

    @property
    def num_rows(self) -> int:
        return int(self.offsets.shape[0]) - 1

    @property
    def num_edges(self) -> int:
        return int(self.cols.shape[0])

    def row_ids(self):
        """For every edge, the index of its row (inverse of ``offsets``)."""
        xp = array_module(self.offsets)
        return repeat_index(xp, xp.diff(self.offsets), self.num_edges).astype(VERTEX_DTYPE)  # no read-back

    def degrees(self):
        xp = array_module(self.offsets)
        return xp.diff(self.offsets)

    def nbytes(self) -> int:
        return int(self.offsets.nbytes + self.cols.nbytes
                   + (self.weights.nbytes if self.weights is not None else 0))


@dataclass(frozen=True)
class CSRBatch:
    """A batch of edges grouped by source: the unit structures insert and delete.

    ``rows`` are the batch's distinct source vertices (internal ids, ascending),
    ``offsets`` index ``cols`` per row, ``cols`` are ascending within a row and
    free of duplicates, ``weights`` (float32) is None when the batch carries
    none (deletions).
    """
    rows: object              # int32, ascending, distinct
    offsets: object           # int64, len(rows) + 1
    cols: object              # int32
    weights: object | None = None

    @property
    def num_edges(self) -> int:
        return int(self.cols.shape[0])

    @property
    def num_rows(self) -> int:
        return int(self.rows.shape[0])

    def sources(self):
        """The source vertex of every edge (``rows`` expanded by the row lengths)."""
        xp = array_module(self.rows)
        return repeat(xp, self.rows, xp.diff(self.offsets), total=self.num_edges)   # no size to read back

    @staticmethod
    def empty(xp, weighted: bool = True) -> CSRBatch:
        return CSRBatch(rows=xp.zeros(0, dtype=VERTEX_DTYPE),
                        offsets=xp.zeros(1, dtype=OFFSET_DTYPE),
                        cols=xp.zeros(0, dtype=VERTEX_DTYPE),
                        weights=xp.zeros(0, dtype=WEIGHT_DTYPE) if weighted else None)

    @staticmethod
    def from_edges(xp, src, dst, weights=None, *, assume_unique: bool = False,
                   num_rows: int | None = None) -> CSRBatch:
        """Group edges by source on ``xp``: sort by (src, dst), drop repeated keys, offsets by cumsum.

        When a key repeats, the *last* occurrence (in input order) wins, which is
        the upsert rule of the event semantics.  ``num_rows``, the number of distinct
        sources when the caller knows it (the pipeline learns it with the batch's
        other sizes), spares the device a transfer.
        """
        src = xp.asarray(src, dtype=VERTEX_DTYPE)
        dst = xp.asarray(dst, dtype=VERTEX_DTYPE)
        if weights is not None:
            weights = xp.asarray(weights, dtype=WEIGHT_DTYPE)
        if src.shape[0] == 0:
            return CSRBatch.empty(xp, weighted=weights is not None)
        # One int64 key per edge: src in the high 32 bits, dst in the low 32.
        key = (src.astype(np.int64) << 32) | dst.astype(np.int64)
        order = xp.argsort(key, kind="stable")
        key = key[order]
        if not assume_unique:
            # keep the last of each run of equal keys (stable sort keeps input order in a run)
            last = xp.ones(key.shape[0], dtype=bool)
            last[:-1] = key[1:] != key[:-1]
            order = order[last]
            key = key[last]
        src_sorted = (key >> 32).astype(VERTEX_DTYPE)
        cols = (key & 0xFFFFFFFF).astype(VERTEX_DTYPE)
        rows, counts = sorted_runs(xp, src_sorted, num_rows)   # sorted input: run lengths, no hashing
        offsets = xp.zeros(rows.shape[0] + 1, dtype=OFFSET_DTYPE)
        offsets[1:] = xp.cumsum(counts)
        w = weights[order] if weights is not None else None
        return CSRBatch(rows=rows.astype(VERTEX_DTYPE), offsets=offsets, cols=cols, weights=w)


def csr_from_edges(xp, src, dst, weights, num_rows: int) -> CSR:
    """A full CSR over ``num_rows`` rows from (deduplicated or not) edges; the last duplicate wins."""
    batch = CSRBatch.from_edges(xp, src, dst, weights)
    counts = xp.zeros(num_rows, dtype=OFFSET_DTYPE)
    counts[batch.rows] = xp.diff(batch.offsets)
    offsets = xp.zeros(num_rows + 1, dtype=OFFSET_DTYPE)
    offsets[1:] = xp.cumsum(counts)
    return CSR(offsets=offsets, cols=batch.cols, weights=batch.weights)


def batch_keys(xp, batch: CSRBatch):
    """Keys of the batch's edges in batch order (ascending: a CSRBatch is sorted by (src, dst))."""
    return edge_keys(xp, batch.sources(), batch.cols)


def batch_weights(xp, batch: CSRBatch):
    """The batch's weights, 1.0 where it carries none (the event default)."""
    if batch.weights is None:
        return xp.ones(batch.num_edges, dtype=WEIGHT_DTYPE)
    return xp.asarray(batch.weights, dtype=WEIGHT_DTYPE)
