"""Array programs the structures share: edge keys, sorted lookups, segment expansion, counting.

Everything here runs unchanged on NumPy and CuPy; the backend differences
(``repeat`` with device counts, ``bincount`` of an empty array) are handled once
in :mod:`structures.backend`.
"""
from __future__ import annotations

import numpy as np

from .backend import bincount
from .csr_types import OFFSET_DTYPE, WEIGHT_DTYPE, CSRBatch

LOW32 = 0xFFFFFFFF


def edge_keys(xp, src, dst):
    """One int64 key per edge, ordered as (src, dst): src in the high 32 bits, dst in the low 32."""
    return (xp.asarray(src).astype(np.int64) << 32) | xp.asarray(dst).astype(np.int64)


def key_sources(keys):
    return keys >> 32


def key_targets(keys):
    return keys & LOW32


def segment_of(xp, offsets, total: int | None = None):
    """For every element of a segmented array, the index of its segment (``offsets`` has segments + 1 entries)."""
    if total is None:
        total = int(offsets[-1])
    return xp.searchsorted(offsets[1:], xp.arange(total, dtype=offsets.dtype), side="right")


def batch_keys(xp, batch: CSRBatch):
    """Keys of the batch's edges in batch order (ascending: a CSRBatch is sorted by (src, dst))."""
    return edge_keys(xp, batch.sources(), batch.cols)


def batch_weights(xp, batch: CSRBatch):
    """The batch's weights, 1.0 where it carries none (the event default)."""
    if batch.weights is None:
        return xp.ones(batch.num_edges, dtype=WEIGHT_DTYPE)
    return xp.asarray(batch.weights, dtype=WEIGHT_DTYPE)


def sorted_lookup(xp, sorted_keys, queries):
    """Positions of ``queries`` in ``sorted_keys`` and a hit mask (the position is clipped where missing)."""
    n = sorted_keys.shape[0]
    if n == 0:
        return xp.zeros(queries.shape[0], dtype=np.int64), xp.zeros(queries.shape[0], dtype=bool)
    pos = xp.minimum(xp.searchsorted(sorted_keys, queries), n - 1)
    return pos, sorted_keys[pos] == queries


def gather_segments(xp, starts, counts):
    """Offsets of the concatenated ranges ``[starts[i], starts[i] + counts[i])`` and the index of every element."""
    offsets = xp.zeros(counts.shape[0] + 1, dtype=OFFSET_DTYPE)
    offsets[1:] = xp.cumsum(counts)
    total = int(offsets[-1])
    seg = segment_of(xp, offsets, total)
    idx = starts.astype(OFFSET_DTYPE)[seg] + xp.arange(total, dtype=OFFSET_DTYPE) - offsets[:-1][seg]
    return offsets, idx


def counts_of(xp, values, length: int):
    """How often each of ``0 .. length-1`` occurs in ``values`` (int64, exactly ``length`` long)."""
    return bincount(xp, values.astype(np.int64), minlength=length)[:length].astype(np.int64)


def grown_capacity(capacity: int, needed: int) -> int:
    """``capacity`` doubled until it holds ``needed`` (at least 1)."""
    capacity = max(int(capacity), 1)
    while capacity < needed:
        capacity *= 2
    return capacity
