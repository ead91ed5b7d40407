"""Sorted edge-key arrays: the adjacency index the incremental jobs keep for themselves.

A structure only answers *out*-adjacency (``DynamicGraph.adjacency``).  BFS
needs in-neighbours (the boundary of an invalidated subtree, the bottom-up
levels) and triangle counting needs the undirected neighbourhood; rebuilding
either from the full CSR on every batch would cost a pass over all edges, which
is what the incremental forms exist to avoid.  So a job keeps its own index of
int64 keys ``(row << 32) | col`` and applies each batch's changes to it.

**Per-batch cost proportional to the batch.**  Deleting keys from one big
sorted array, or merging keys into it, moves every key behind the first
change: a pass over all edges per batch.  The index is therefore a small
log-structured merge of three sorted, distinct key arrays:

* ``base``: the bulk of the keys, rewritten only by a *compaction*;
* ``dead``: keys of ``base`` deleted since the last compaction (a subset of it);
* ``extra``: keys added since then that are not in ``base``;

and the set is ``(base - dead) | extra``.  A batch of ``k`` changes costs a
sort of the batch (``k log k``), binary searches of it in the three arrays
(``k log E``) and a rank merge into ``dead`` / ``extra`` (their size): never
a scan of ``base``.  Once ``dead`` and ``extra`` together exceed
``max(min_pending, 2 sqrt(|base| k))`` for a batch of ``k`` changes, they are
folded into ``base`` (one pass over ``base``); that choice balances the two
costs, so a batch of ``k`` changes costs ``O(k log E + sqrt(E k))`` amortised.

Queries read the three arrays: a row ``v`` is the key range
``[v << 32, (v + 1) << 32)`` of ``base`` less the ``dead`` keys in it, plus the
range of ``extra``; membership is ``in base and not in dead, or in extra``.

**Work.**  ``work`` counts the keys the index read or wrote since the caller
last took it (:meth:`take_work`): a binary search as ``ceil(log2(size + 1))``
keys, merges and compactions as the keys they move, row reads as the keys they
return.  The jobs add it to their own ``edges_touched``, so "the incremental
form does less work" is measured on everything it touched.

All functions are array programs over ``xp`` (NumPy or CuPy).
"""
from __future__ import annotations

import math

import numpy as np

from vinestream.structures.array_ops import (
    LOW32,
    edge_keys,
    member,
    merge_sorted,
    segmented_arange,
    unique_sorted,
)
from vinestream.structures.csr_types import CSR, OFFSET_DTYPE, VERTEX_DTYPE

from .transpose_kernels import rows_sorted, transpose_fused


def _search_cost(queries: int, size: int) -> int:
    """Keys read by ``queries`` binary searches in ``size`` sorted keys."""
    return int(queries) * max(1, math.ceil(math.log2(int(size) + 1))) if size else 0


def insert_sorted(xp, a, b):
    """``a`` and ``b`` (sorted, mutually distinct) as one sorted array: ``b``'s places by binary
    searches in ``a`` (``len(b) log len(a)``) and one pass that moves ``a`` around them; a search of
    every key of ``a`` in ``b`` is what makes a plain rank merge cost ``len(a) log len(b)``."""
    nb = int(b.shape[0])
    if nb == 0:
        return a
    if int(a.shape[0]) == 0:
        return b
    if xp is not np:                   # a GPU searches every key at once: the rank merge, no mask writes
        return merge_sorted(xp, a, None, b, None)[0]
    at_b = xp.searchsorted(a, b) + xp.arange(nb, dtype=np.int64)
    out = xp.empty(int(a.shape[0]) + nb, dtype=a.dtype)
    is_b = xp.zeros(out.shape[0], dtype=bool)
    is_b[at_b] = True
    out[at_b] = b
    out[~is_b] = a
    return out


def _drop_sorted(xp, a, b):
    """``a`` without the keys of ``b`` (both sorted; keys of ``b`` not in ``a`` are ignored): binary
    searches of ``b`` in ``a`` and one pass over ``a``."""
    if int(b.shape[0]) == 0 or int(a.shape[0]) == 0:
        return a
    pos, hit = _lookup(xp, a, b)
    keep = xp.ones(a.shape[0], dtype=bool)
    keep[pos[hit]] = False
    return a[keep]


def _lookup(xp, a, q):
    n = int(a.shape[0])
    pos = xp.minimum(xp.searchsorted(a, q), n - 1)
    return pos, a[pos] == q


class SortedEdgeIndex:
    """A set of (row, col) pairs kept as sorted distinct int64 keys on ``xp`` (see the module docstring)."""

    def __init__(self, xp, keys=None, *, min_pending: int = 4096):
        self.xp = xp
        self.base = keys if keys is not None else xp.zeros(0, dtype=np.int64)
        self.dead = xp.zeros(0, dtype=np.int64)
        self.extra = xp.zeros(0, dtype=np.int64)
        self.min_pending = int(min_pending)
        self.work = 0               # keys read or written since the last take_work()
        self.compactions = 0

    @classmethod
    def from_edges(cls, xp, rows, cols, **kwargs) -> SortedEdgeIndex:
        keys = unique_sorted(xp, edge_keys(xp, rows, cols))
        index = cls(xp, keys, **kwargs)
        index.work = int(keys.shape[0])
        return index

    @classmethod
    def from_sorted_keys(cls, xp, keys, **kwargs) -> SortedEdgeIndex:
        """An index over keys already sorted and distinct (e.g. a CSR's rows in order)."""
        index = cls(xp, keys, **kwargs)
        index.work = int(keys.shape[0])
        return index

    # -- sizes and accounting -------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.base.shape[0] - self.dead.shape[0] + self.extra.shape[0])

    @property
    def pending(self) -> int:
        """Keys waiting in ``dead`` and ``extra`` for the next compaction."""
        return int(self.dead.shape[0] + self.extra.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.base.nbytes + self.dead.nbytes + self.extra.nbytes)

    def take_work(self) -> int:
        """Keys touched since the last call (and reset the counter)."""
        work, self.work = self.work, 0
        return work

    # -- reading ------------------------------------------------------------------------
    @property
    def keys(self):
        """All keys as one sorted array (compacts first: a pass over the index)."""
        self.compact()
        return self.base

    def compact(self) -> None:
        """Fold ``dead`` and ``extra`` into ``base`` (one pass over it)."""
        xp = self.xp
        if self.dead.shape[0] == 0 and self.extra.shape[0] == 0:
            return
        base = self.base
        if self.dead.shape[0]:                   # dead keys are base keys: found by binary search
            base = _drop_sorted(xp, base, self.dead)
            self.work += _search_cost(self.dead.shape[0], self.base.shape[0])
        if self.extra.shape[0]:
            base = insert_sorted(xp, base, self.extra)
            self.work += _search_cost(self.extra.shape[0], base.shape[0])
        self.work += int(self.base.shape[0] + base.shape[0])
        self.base = base
        self.dead = xp.zeros(0, dtype=np.int64)
        self.extra = xp.zeros(0, dtype=np.int64)
        self.compactions += 1

    def contains(self, rows, cols):
        return self.contains_keys(edge_keys(self.xp, rows, cols))

    def contains_keys(self, q):
        """Bool array: each key of ``q`` is in the set."""
        xp = self.xp
        hit = member(xp, self.base, q)
        self.work += _search_cost(q.shape[0], self.base.shape[0])
        if self.dead.shape[0]:
            hit &= ~member(xp, self.dead, q)
            self.work += _search_cost(q.shape[0], self.dead.shape[0])
        if self.extra.shape[0]:
            hit |= member(xp, self.extra, q)
            self.work += _search_cost(q.shape[0], self.extra.shape[0])
        return hit

    @staticmethod
    def _ranges(xp, keys, v):
        lo = xp.searchsorted(keys, v << 32)
        hi = xp.searchsorted(keys, (v + 1) << 32)
        return lo, hi - lo

    def row_ranges(self, vertices):
        """(start, count) of each vertex's row in :attr:`keys` (compacts first)."""
        self.compact()
        v = self.xp.asarray(vertices).astype(np.int64)
        self.work += 2 * _search_cost(v.shape[0], self.base.shape[0])
        return self._ranges(self.xp, self.base, v)

    def degrees(self, vertices):
        """Row sizes of ``vertices`` (no compaction: three pairs of binary searches)."""
        xp = self.xp
        v = xp.asarray(vertices).astype(np.int64)
        deg = self._ranges(xp, self.base, v)[1]
        self.work += 2 * _search_cost(v.shape[0], self.base.shape[0])
        for part, sign in ((self.dead, -1), (self.extra, 1)):
            if part.shape[0]:
                deg = deg + sign * self._ranges(xp, part, v)[1]
                self.work += 2 * _search_cost(v.shape[0], part.shape[0])
        return deg

    def neighbours(self, vertices):
        """Every pair of the given rows as ``(owner, col)``: owner indexes ``vertices``.

        Reads the rows' ranges of ``base`` (dropping ``dead`` keys) and of ``extra``;
        the pairs of one owner are not necessarily adjacent nor sorted.
        """
        xp = self.xp
        v = xp.asarray(vertices).astype(np.int64)
        starts, counts = self._ranges(xp, self.base, v)
        owner, pos = segmented_arange(xp, starts, counts)
        keys = self.base[pos]
        self.work += 2 * _search_cost(v.shape[0], self.base.shape[0]) + int(keys.shape[0])
        if self.dead.shape[0] and keys.shape[0]:
            alive = ~member(xp, self.dead, keys)
            self.work += _search_cost(keys.shape[0], self.dead.shape[0])
            owner, keys = owner[alive], keys[alive]
        if self.extra.shape[0]:
            s2, c2 = self._ranges(xp, self.extra, v)
            o2, p2 = segmented_arange(xp, s2, c2)
            self.work += 2 * _search_cost(v.shape[0], self.extra.shape[0]) + int(p2.shape[0])
            if p2.shape[0]:
                owner = xp.concatenate([owner, o2])
                keys = xp.concatenate([keys, self.extra[p2]])
        return owner, (keys & LOW32).astype(VERTEX_DTYPE)

    def to_csr(self, num_rows: int) -> CSR:
        """The whole index as a CSR over ``num_rows`` rows (compacts first)."""
        xp = self.xp
        self.compact()
        bounds = xp.searchsorted(self.base, xp.arange(num_rows + 1, dtype=np.int64) << 32)
        return CSR(offsets=bounds.astype(OFFSET_DTYPE), cols=(self.base & LOW32).astype(VERTEX_DTYPE),
                   weights=None)

    # -- updating -----------------------------------------------------------------------
    def remove(self, rows, cols) -> None:
        """Drop the given pairs (absent ones are ignored)."""
        self.remove_keys(unique_sorted(self.xp, edge_keys(self.xp, rows, cols)))

    def add(self, rows, cols) -> None:
        """Insert the given pairs (present ones are ignored)."""
        self.add_keys(unique_sorted(self.xp, edge_keys(self.xp, rows, cols)))

    def remove_keys(self, gone) -> None:
        """Drop the sorted distinct keys ``gone`` (absent ones are ignored).

        Every search goes from the batch into the larger arrays (``k log size``), and
        ``dead`` / ``extra`` are rewritten in one pass each (their size): never a
        search of each of their keys in the batch.
        """
        xp = self.xp
        k = int(gone.shape[0])
        if k == 0:
            return
        self.work += k
        if self.extra.shape[0]:            # keys added since the last compaction leave ``extra``
            before = int(self.extra.shape[0])
            self.extra = _drop_sorted(xp, self.extra, gone)
            self.work += _search_cost(k, before) + before
        hit = member(xp, self.base, gone)
        self.work += _search_cost(k, self.base.shape[0])
        if self.dead.shape[0]:
            hit &= ~member(xp, self.dead, gone)
            self.work += _search_cost(k, self.dead.shape[0])
        self.dead = insert_sorted(xp, self.dead, gone[hit])
        self.work += _search_cost(k, self.dead.shape[0]) + int(self.dead.shape[0])
        self._maybe_compact(k)

    def add_keys(self, new) -> None:
        """Insert the sorted distinct keys ``new`` (present ones are ignored); costs as in :meth:`remove_keys`."""
        xp = self.xp
        k = int(new.shape[0])
        if k == 0:
            return
        self.work += k
        in_base = member(xp, self.base, new)
        self.work += _search_cost(k, self.base.shape[0])
        if self.dead.shape[0]:             # a deleted base key comes back: it leaves ``dead``
            before = int(self.dead.shape[0])
            self.dead = _drop_sorted(xp, self.dead, new[in_base])
            self.work += _search_cost(k, before) + before
        fresh = new[~in_base]
        if self.extra.shape[0] and fresh.shape[0]:
            fresh = fresh[~member(xp, self.extra, fresh)]
            self.work += _search_cost(k, self.extra.shape[0])
        self.extra = insert_sorted(xp, self.extra, fresh)
        self.work += _search_cost(k, self.extra.shape[0]) + int(self.extra.shape[0])
        self._maybe_compact(k)

    def _maybe_compact(self, batch: int) -> None:
        limit = max(self.min_pending, 2 * math.isqrt(int(self.base.shape[0]) * max(int(batch), 1)))
        if self.pending > limit:
            self.compact()


#: on CuPy, graphs of fewer edges are transposed by the array program or the kernels (a few launches): cuSPARSE's
#: csr2csc costs a call about 1.5 ms of host time on 228k edges (a buffer-size query of 0.8 ms), and a fresh
#: process pays for the library's first use on its first BFS (that batch's BFS: 145 ms with it, 65-73 ms
#: without; H100, sx-mathoverflow, bench-results/2026-11-25-replay)
LIBRARY_TRANSPOSE_MIN_EDGES_GPU = 1 << 21


def transpose(xp, csr: CSR, num_rows: int, use_library: bool = True, *, fused: bool = False,
              launch=None, launch_blocks=None, info: dict | None = None) -> CSR:
    """The transpose (in-adjacency) of an unweighted out-CSR over ``num_rows`` rows, columns sorted.

    ``scipy.sparse`` (NumPy) / ``cupyx.scipy.sparse`` (CuPy, from ``LIBRARY_TRANSPOSE_MIN_EDGES_GPU``
    edges) transpose in one O(E) counting pass where installed.  cuSPARSE's csr2csc promises no order
    within a row, so cupyx's rows are sorted after it (``sort_indices``: about half of the transpose,
    1.36 of 2.55 ms on a directed R-MAT 20, H100, bench-results/2026-11-25-bfsjob); with ``fused`` a
    kernel checks the order in one pass instead and the rows are sorted only where it finds them
    unsorted.  ``fused`` below that size (CuPy, or NumPy with the host emulation's ``launch`` /
    ``launch_blocks``): the counting-sort kernels of
    :func:`algorithms.transpose_kernels.transpose_fused`.  The array program (a sort of the reversed
    keys) is the reference.  ``info``, when given, receives the form taken (``form``).
    """
    info = {} if info is None else info
    library_gpu = (use_library and xp is not np and LIBRARY_TRANSPOSE_MIN_EDGES_GPU <= csr.num_edges < 2**31)
    if fused and (xp is not np or launch is not None) and not library_gpu:
        info["form"] = "kernels"
        return transpose_fused(xp, csr, num_rows, launch=launch, launch_blocks=launch_blocks)
    offsets = csr.offsets
    rows_now = offsets.shape[0] - 1
    num_rows = max(int(num_rows), rows_now)
    if rows_now < num_rows:
        offsets = xp.concatenate([offsets, xp.full(num_rows - rows_now, offsets[-1], dtype=offsets.dtype)])
    if use_library and csr.num_edges < 2**31 and (xp is np or csr.num_edges >= LIBRARY_TRANSPOSE_MIN_EDGES_GPU):
        try:
            if xp is np:
                import scipy.sparse as sp
            else:
                import cupyx.scipy.sparse as sp
            ones = xp.ones(csr.num_edges, dtype=np.float32)
            a = sp.csr_matrix((ones, csr.cols.astype(np.int32, copy=False), offsets.astype(np.int32)),
                              shape=(num_rows, num_rows))
            t = a.T.tocsr()
            off = t.indptr.astype(OFFSET_DTYPE)
            info["form"] = "library"
            if xp is not np:
                checked = False
                if fused:
                    checked = rows_sorted(xp, off, t.indices.astype(np.int32, copy=False))
                if not checked:
                    t.sort_indices()
                info["form"] = "library, checked sorted" if checked else "library, rows sorted"
            return CSR(offsets=off, cols=t.indices.astype(VERTEX_DTYPE, copy=False), weights=None)
        except (ImportError, ValueError, TypeError):
            pass
    info["form"] = "sort"
    rows = xp.repeat(xp.arange(num_rows, dtype=np.int64), xp.diff(offsets)) if xp is np else \
        segmented_arange(xp, offsets[:-1], xp.diff(offsets))[0]
    keys = xp.sort(edge_keys(xp, csr.cols, rows))
    bounds = xp.searchsorted(keys, xp.arange(num_rows + 1, dtype=np.int64) << 32)
    return CSR(offsets=bounds.astype(OFFSET_DTYPE), cols=(keys & LOW32).astype(VERTEX_DTYPE), weights=None)


def csr_keys(xp, csr: CSR):
    """The sorted keys ``(row << 32) | col`` of a CSR whose rows have sorted, distinct columns."""
    n = csr.offsets.shape[0] - 1
    if xp is np:
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(csr.offsets))
    else:
        rows = segmented_arange(xp, csr.offsets[:-1], xp.diff(csr.offsets))[0]
    return (rows << 32) | csr.cols.astype(np.int64)


def expand_rows(xp, csr: CSR, vertices):
    """Edges of rows ``vertices`` of a full CSR as ``(owner, col)`` (owner indexes ``vertices``)."""
    v = xp.asarray(vertices).astype(np.int64)
    starts = csr.offsets[v]
    owner, pos = segmented_arange(xp, starts, csr.offsets[v + 1] - starts)
    return owner, csr.cols[pos]
