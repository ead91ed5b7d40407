"""Triangle counting on the undirected simple graph underlying the directed edges.

``u - v`` is an undirected edge when ``u -> v`` or ``v -> u`` exists (self-loops
ignored); counts equal networkx ``triangles(G.to_undirected())`` per vertex,
and the global count is a third of their sum.

**Static** (the degree-ordered intersection of Schank and Wagner): on NumPy with
scipy installed, ``|N+(s) ∩ N+(t)|`` over the oriented edges by the library's
merge of sorted rows (:func:`count_static_arcs`: in rank space, the part of row
``s`` after ``t`` against row ``t``, one product entry per triangle with all three
corners; its compiled kernels called on buffers reused run after run), in runs on
two threads, the index's ``A + A^T`` left to the first update that reads it
(:class:`DeferredArcsIndex`); otherwise (no
scipy, or CuPy without the fused kernels) as array programs.  Both orient every
undirected edge from the endpoint of lower degree (then id) to the higher one, so
every vertex keeps O(sqrt(E)) out-edges; every triangle is then exactly one
oriented wedge ``s -> t -> w`` closed by ``s -> w``.  In the array programs, wedges
are enumerated by a segmented arange over the oriented CSR (in chunks of a
bounded size) and closed by a binary search on the sorted oriented edge keys.

**Incremental** (Makkar, Bader and Green, "Exact and parallel triangle counting
in dynamic graphs", HiPC 2017): a batch changes the count by the triangles that
contain at least one changed edge.  For each changed undirected edge ``u - v``
the common neighbours ``w`` are found by scanning the smaller of the two
neighbourhoods and searching the larger; a triangle that holds several changed
edges is found once per changed edge, so it is counted only at the changed edge
with the smallest key (the paper's correction for 2 and 3 new edges in one
triangle, done by ownership instead of by dividing).  Deletions are counted
on the graph before the batch, insertions on the graph after it, which is the
batch's apply order (``stream/delta.py``).

A directed change only changes the undirected graph when the reverse edge is
absent: ``u -> v`` deleted removes ``u - v`` unless ``v -> u`` is still there
(in the graph after the deletions, i.e. present now and not just inserted);
``u -> v`` inserted adds ``u - v`` unless ``v -> u`` was already there.
The job keeps the undirected adjacency as a sorted key index (both
orientations, :class:`TriangleIndex`), updated from that undirected delta by
search and merge, with no pass over all its keys on batches of at most 0.1% of them.

**When an update recounts.**  A batch changing more than ``fallback_fraction`` of the edges (3%) runs the
static count instead.  On a GPU (the default ``fallback_fraction=None``), graphs of at most
:data:`GPU_RECOUNT_EDGES` edges recount for every batch over 0.1% of the edges: both forms are host-bound
there and the fused static count is the cheaper (measured); batches of at most 0.1% always update.

**Fused GPU path** (``fused=True``, the default on CuPy): the same two
algorithms with their intersections done by the RawKernels of
:mod:`algorithms.triangle_kernels` instead of materialised wedges and
neighbour lists.  The oriented CSR is then a filter of the sorted symmetric
index (``rank(row) < rank(col)`` keeps the (row, col) order, so no sort), and
the array programs above remain the reference the GPU tests compare against.
An update's intersections read the index's rows where they are (the base less
its pending removals, plus its pending additions: ``tri_changed_parts``), so a
small batch never pays for the index's compaction, and they add their triangles
(lost ones as -1) at the corners of the job's counts in place, so it allocates and
passes over no vertex-sized array either.
"""
from __future__ import annotations

import itertools
import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from vinestream.structures.array_ops import (
    LOW32,
    bincount,
    edge_keys,
    fill_at,
    member,
    row_ids,
    scatter_add,
    segmented_arange,
    split_keys,
    unique_sorted,
)
from vinestream.structures.backend import is_gpu, to_numpy
from vinestream.structures.base import DynamicGraph
from vinestream.structures.delta import BatchDelta

from . import triangle_kernels as tk
from .base import Job, grow
from .edge_index import SortedEdgeIndex, _search_cost

COUNT = np.int64
#: an update recounts from scratch when its batch changes more than this fraction of the edges (the explicit
#: ``fallback_fraction``'s default, and the rule on the CPU and on large graphs)
FALLBACK_FRACTION = 0.03
#: batches of at most this fraction of the edges never recount (issue 11: no pass over all edges for them)
SMALL_BATCH_FRACTION = 1e-3
#: on a GPU, graphs of at most this many edges recount for any batch over SMALL_BATCH_FRACTION
#: (``fallback_fraction=None``, the default).  There an update is host-bound (the undirected delta, two
#: index merges and a compaction, two intersections: dozens of CuPy calls and several reads, 4-5 ms), and the
#: fused static count (count_static_hashed: ~16 launches, 2 sorts, one read) costs less whatever the batch.
#: Measured (H200, synchronised, bench-results/2026-11-26-trismall/call2/scan.txt; updates of 0.2% and 1%
#: of the edges forced incremental): R-MAT 14 (228k edges) static 1.1-1.3 ms against updates of 4.3-6.4 ms,
#: R-MAT 16 (955k) 1.1-1.4 against 4.3, R-MAT 18 (3.9M) 2.5-2.8 against 4.7-5.1; at R-MAT 20 (16M) the static
#: count's device time has grown to 10 ms and updates of up to 1% cost 5-10 ms (call2/bench.txt), so the
#: threshold sits below it, at the largest size measured where the recount wins.
GPU_RECOUNT_EDGES = 1 << 22
#: wedges a thread of the static count sees before its int32 corner counts go into int64 ones
_FLUSH_WEDGES = 2**31 - 1


# merged entries per run of count_static_arcs: fewer runs, less dispatch.  Medians of 5 on this project's 2-core
# machine (2 threads), 2^18 / 2^19 / 2^20: cnr-2000 138.7 / 132.3 / 128.6 ms, coAuthorsDBLP 89.9 / 82.0 / 81.5,
# R-MAT 14 and 18 within 3% (session 8); a run's buffers are then about 15 MiB a thread
STATIC_CHUNK = 1 << 20
#: arcs a thread at least sorts alone when ``L`` is built (fewer arcs: fewer ranges, merged after)
_ORIENT_PART_ARCS = 1 << 16


def undirected_keys(xp, src, dst):
    """Distinct keys ``(min << 32) | max`` of the undirected pairs of directed edges, self-loops dropped."""
    src = src.astype(np.int64)
    dst = dst.astype(np.int64)
    keep = src != dst
    lo = xp.minimum(src, dst)[keep]
    hi = xp.maximum(src, dst)[keep]
    return unique_sorted(xp, (lo << 32) | hi)


def count_static(xp, capacity: int, und_keys, chunk: int = 1 << 22):
    """Per-vertex triangle counts and work of the degree-ordered wedge closure over undirected keys."""
    a, b = split_keys(und_keys)
    a = a.astype(np.int64)
    b = b.astype(np.int64)
    deg = bincount(xp, xp.concatenate([a, b]), capacity)
    # orient low (degree, id) -> high; ids < 2**31 and degrees < 2**31 make the rank key exact
    a_first = (deg[a] < deg[b]) | ((deg[a] == deg[b]) & (a < b))
    s = xp.where(a_first, a, b)
    t = xp.where(a_first, b, a)
    okeys = unique_sorted(xp, (s << 32) | t)
    s, t = (okeys >> 32), (okeys & LOW32)
    offsets = xp.searchsorted(okeys, xp.arange(capacity + 1, dtype=np.int64) << 32)
    counts = xp.zeros(capacity, dtype=COUNT)
    wedge_len = offsets[t + 1] - offsets[t]          # wedges s -> t -> w for each oriented edge
    cum = xp.cumsum(wedge_len)
    total_wedges = int(cum[-1]) if cum.shape[0] else 0
    e = 0
    m = int(okeys.shape[0])
    done = 0
    while e < m:
        # the next run of edges whose wedges fit in one chunk (at least one edge)
        end = int(xp.searchsorted(cum, xp.asarray([done + chunk], dtype=cum.dtype), side="right")[0])
        end = max(end, e + 1)
        es, et = s[e:end], t[e:end]
        owner, pos = segmented_arange(xp, offsets[et], wedge_len[e:end])
        w = okeys[pos] & LOW32
        su = es[owner]
        closed = member(xp, okeys, (su << 32) | w)
        for part in (su[closed], et[owner[closed]], w[closed]):
            counts += bincount(xp, part, capacity)
        done = int(cum[end - 1])
        e = end
    return counts, {"wedges": total_wedges, "edges": m}


def _scipy_sparse():
    """``scipy.sparse`` where installed (the row merges of the static count), else None."""
    try:
        import scipy.sparse as sp
    except ImportError:
        return None
    return sp


_KERNELS = ("csr_has_canonical_format", "csr_tocsc", "csr_plus_csr", "csr_row_index", "csr_elmul_csr",
            "csr_column_index1", "csr_matvec", "csc_matvec", "csr_scale_columns", "csr_diagonal",
            "csr_sample_offsets", "csr_eliminate_zeros")


def _scipy_kernels():
    """scipy's compiled CSR kernels (``scipy.sparse._sparsetools``: transpose, sum, row gather, sorted-row
    product, column count), or None without scipy or when a release lacks one of them.

    Called directly, with output buffers the caller owns and reuses: the public operators allocate
    and prune fresh arrays at every call, and on this kind of machine those page faults cost
    more than the merges themselves (and serialise the threads).
    """
    sp = _scipy_sparse()
    if sp is None:
        return None
    try:
        from scipy.sparse import _sparsetools as kernels
    except ImportError:
        return None
    return kernels if all(hasattr(kernels, k) for k in _KERNELS) else None


def host_arcs(csr, capacity: int):
    """A host CSR's arcs as int32 ``(indptr, indices)`` over ``capacity`` rows (rows past the CSR's
    are empty); None without scipy's kernels or past their int32 indices."""
    if _scipy_kernels() is None or 2 * csr.num_edges >= 2**31 or capacity >= 2**31 - 1:
        return None
    n = int(capacity)
    offsets = np.asarray(csr.offsets)
    if offsets.shape[0] - 1 < n:
        offsets = np.concatenate([offsets, np.full(n + 1 - offsets.shape[0], offsets[-1], dtype=offsets.dtype)])
    ap = offsets[: n + 1].astype(np.int32)
    return ap, np.asarray(csr.cols[: int(ap[-1])]).astype(np.int32)


def symmetric_csr(csr, capacity: int):
    """The undirected adjacency of a host CSR as ``(sym, rows)``: a canonical ``scipy.sparse`` CSR
    (rows sorted, distinct columns, no self-loops) and the row of each of its entries; None without
    scipy or past its int32 indices.

    ``A + A^T`` by the library's O(E) transpose (a counting sort) and merge of sorted rows, with the
    self-loops of ``A`` valued zero so that the merge drops them: no sort of keys.
    """
    arcs = host_arcs(csr, capacity)
    if arcs is None:
        return None
    parts = _symmetric_parts(arcs, capacity)
    indptr, cols, vals = parts
    n = int(capacity)
    rows = np.repeat(np.arange(n, dtype=np.int32), np.diff(indptr))
    sym = _scipy_sparse().csr_matrix((vals, cols, indptr), shape=(n, n))
    sym.has_sorted_indices = True
    sym.has_canonical_format = True
    return sym, rows


def _symmetric_parts(arcs, capacity: int):
    """:func:`symmetric_csr`'s ``A + A^T`` of :func:`host_arcs`'s arrays as (indptr, indices, values)
    (the arcs are read, never written: the count reads them at the same time)."""
    sp = _scipy_sparse()
    kernels = _scipy_kernels()
    n = int(capacity)
    ap, aj = arcs
    if not kernels.csr_has_canonical_format(n, ap, aj):          # the merge wants sorted distinct rows
        a = sp.csr_matrix((np.ones(aj.shape[0], dtype=np.int8), aj, ap), shape=(n, n), copy=True)
        a.sum_duplicates()
        ap, aj = a.indptr.astype(np.int32, copy=False), a.indices.astype(np.int32, copy=False)
    nnz = int(aj.shape[0])
    ax = np.ones(nnz, dtype=np.int8)
    # self-loops are not undirected edges: a zero value drops them from the sum below (its merge
    # keeps non-zero results only); the library's diagonal and offset search find them (no pass here)
    diag = np.zeros(n, dtype=np.int8)
    kernels.csr_diagonal(0, n, n, ap, aj, ax, diag)
    loops = np.flatnonzero(diag).astype(np.int32)
    if loops.shape[0]:
        at = np.empty(loops.shape[0], dtype=np.int32)
        kernels.csr_sample_offsets(n, n, ap, aj, loops.shape[0], loops, loops, at)
        ax[at] = 0
    tp = np.empty(n + 1, dtype=np.int32)
    tj = np.empty(nnz, dtype=np.int32)
    tx = np.empty(nnz, dtype=np.int8)
    kernels.csr_tocsc(n, n, ap, aj, ax, tp, tj, tx)               # A^T, rows sorted
    sp_ = np.empty(n + 1, dtype=np.int32)
    sj = np.empty(2 * nnz, dtype=np.int32)
    sx = np.empty(2 * nnz, dtype=np.int8)
    kernels.csr_plus_csr(n, n, ap, aj, ax, tp, tj, tx, sp_, sj, sx)
    return sp_, sj[: int(sp_[-1])], sx[: int(sp_[-1])]


def symmetric_index_keys(sym, rows):
    """The sorted keys ``(row << 32) | col`` of a canonical CSR's entries (one array, shifted in place)."""
    keys = rows.astype(np.int64)
    keys <<= 32
    keys |= sym.indices
    return keys


def _symmetric_keys_of(arcs, capacity: int):
    """(sorted keys ``(row << 32) | col`` of the undirected adjacency, both orientations; their number):
    the job's index (:class:`DeferredArcsIndex`), from :func:`symmetric_csr`'s ``A + A^T``."""
    indptr, cols, _ = _symmetric_parts(arcs, capacity)
    keys = np.repeat(np.arange(int(capacity), dtype=np.int64) << 32, np.diff(indptr))   # the rows, shifted
    keys |= cols
    return keys, int(cols.shape[0])


def degree_permutation(deg):
    """The vertices in the order of (degree, id), as int32: the orientation's order.

    A stable argsort of the degrees; clipped to 16 bits NumPy sorts them by radix in O(n),
    and only the vertices at the clip (degree >= 65535, few) are sorted again by (degree, id).
    """
    n = int(deg.shape[0])
    perm = np.argsort(np.minimum(deg, 65535).astype(np.uint16), kind="stable")
    top = int(np.count_nonzero(deg >= 65535))
    if top:
        tail = perm[n - top:]
        perm[n - top:] = tail[np.argsort((deg[tail].astype(np.int64) << 32) | tail, kind="stable")]
    return perm.astype(np.int32)


def _rank_of(perm):
    """The position of every vertex in ``perm`` (its inverse), as int32."""
    rank = np.empty(perm.shape[0], dtype=np.int32)
    rank[perm] = np.arange(perm.shape[0], dtype=np.int32)
    return rank


def degree_order(deg):
    """Position of every vertex in the order of (degree, id): the orientation's rank, as int32
    (the inverse of :func:`degree_permutation`)."""
    return _rank_of(degree_permutation(deg))


def count_static_scipy(capacity: int, sym, rows, threads: int = 2, chunk: int = STATIC_CHUNK):
    """:func:`count_static_arcs` of a symmetric scipy CSR (its arcs: both directions of every edge).
    ``rows`` (the row of each entry, from :func:`symmetric_csr`) is not needed."""
    del rows
    return count_static_arcs(capacity, sym.indptr.astype(np.int32, copy=False),
                             sym.indices.astype(np.int32, copy=False), threads, chunk)


def count_static_arcs(capacity: int, indptr, indices, threads: int = 2, chunk: int = STATIC_CHUNK):
    """Per-vertex triangle counts of the undirected simple graph under directed arcs (an int32 CSR:
    any order in a row, duplicates, self-loops and both directions allowed): ``|N+(s) ∩ N+(t)|``
    over the oriented edges ``s -> t`` by the library's merge of sorted rows, all three corners of
    every triangle at once.

    The graph is relabelled by rank, the position in the order of (arcs at the vertex, id) (the
    degree counting a reciprocal pair twice: any total order gives the same counts, and this one
    needs no deduplication first), and ``L`` keeps every undirected edge once, from the lower rank
    to the higher, each row sorted by rank; ``N+(v)`` is row ``v`` of ``L``.  A triangle
    ``s -> t -> w`` with ``s -> w`` is found exactly once, at its lower edge ``s -> t``, as a ``w``
    common to ``N+(t)`` and the part of row ``s`` after ``t`` (every ``w`` in ``N+(t)`` ranks above
    ``t``, and row ``s`` is sorted by rank): merging that suffix instead of all of ``N+(s)`` halves
    the re-reading of row ``s`` that its ``|N+(s)|`` edges otherwise pay (``sum |N+(s)|^2``, 71% of
    the merged entries on cnr-2000).  For a run of edges, ``A .* B`` by the library's merge of
    sorted rows, row ``e`` of ``A`` the suffix of ``s`` after ``e`` (copied by the library's row
    copy from (start, end) pairs: it reads any pair, so the suffixes need no row pointers of their
    own) and row ``e`` of ``B`` the row ``N+(t)``, holds one entry per triangle: its row the edge
    (low corner ``s``, middle ``t``), its column the high corner ``w``.  Runs of about ``chunk``
    merged entries (:data:`STATIC_CHUNK`) go through buffers each thread allocates once;
    the ``threads`` threads take the runs one at a time, whoever is free the next (the kernels release
    the GIL; a run takes a few ms, so the threads end within about one run of each other).  The
    corners are counted by the library too: the high ones by its column count, the low and middle
    ones as ``L`` and ``L^T`` times the per-edge counts; the ranks map them back.

    ``L`` is built by the library in O(E), without a sort of keys (:func:`_oriented_from_arcs`).
    Returns (counts, info) with info ``edges`` (undirected), ``merged`` (row entries copied and
    merged: ``sum |suffix of s after t| + |N+(t)|`` over the oriented edges where neither is empty),
    ``oriented`` (arc entries read and written building ``L``) and ``triangles``.
    """
    threads = max(1, int(threads))
    if threads == 1:
        return _count_arcs(capacity, indptr, indices, 1, chunk, map)
    return _count_arcs(capacity, indptr, indices, threads, chunk, _pool(threads).map)


def _equal_cuts(ends, total: int, parts: int, last: int) -> list[int]:
    """Row bounds ``[0, c_1, .., c_{parts-1}, last]`` cutting rows of cumulative work ``ends`` (``total`` in
    all) into ``parts`` ranges of about equal work: ``c_i`` the first row whose end reaches ``i / parts``."""
    return [0, *np.searchsorted(ends, [total * i // parts for i in range(1, parts)]).tolist(), last]


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(threads: int) -> ThreadPoolExecutor:
    """The module's pool of ``threads`` workers, started once: a fresh pool of two threads cost 7.9 ms
    (median of 30, load 1.7) on this project's 2-core machine, a kept one 0.04 ms.  Its tasks never wait
    on one another, so counts may share it."""
    with _POOLS_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            pool = _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="vinestream-triangles")
        return pool


def _count_arcs(capacity: int, indptr, indices, threads: int, chunk: int, spread):
    """:func:`count_static_arcs`'s body; ``spread`` maps a function over its work items (a pool's map)."""
    kernels = _scipy_kernels()
    n = int(capacity)
    indptr = indptr[: n + 1]
    indices = indices[: int(indptr[-1])]
    # arcs at each vertex: out (row lengths) plus in (the library's column count: a bincount and its prefix sum)
    arcs_in = np.zeros(n, dtype=np.int32)
    zero = np.zeros(1, dtype=np.int32)
    kernels.csr_column_index1(int(indices.shape[0]), indices, 0, n, zero, zero, arcs_in, zero)
    perm = degree_permutation(np.diff(indptr) + np.diff(arcs_in, prepend=np.int32(0)))
    rank = _rank_of(perm)
    ptr, lcols, ones, moved = _oriented_from_arcs(kernels, n, indptr, indices, rank, threads, spread)
    counts, info = _count_oriented(kernels, n, ptr, lcols, ones, threads, chunk, spread)
    info["oriented"] = moved
    return counts[rank], info


def _oriented_from_arcs(kernels, n: int, indptr, indices, rank, threads: int, spread):
    """``L`` of :func:`count_static_arcs` as (indptr, indices, ones, entries read and written): rows and
    columns are ranks, each row the distinct higher-ranked neighbours in increasing rank.

    The arcs are cut into ``threads`` ranges of rows, one a thread.  In each, every arc becomes
    (lower rank, higher rank) (the columns' ranks by the library's column scaling: a gather
    without NumPy's int64 index arrays), self-loops go to an extra row ``n``; two stable counting
    sorts of the library (COO to CSR by the higher rank, then the transpose) leave each row sorted
    with the copies of an edge side by side, which its in-place duplicate sum merges.  The ranges'
    matrices are then added by the library's merge of sorted rows, two at a time, each sum in ranges
    of rows, one a thread (an edge whose arcs fell in different ranges is merged there; its values are
    ones before every sum: the sum drops zeros, and int8 copy counts could wrap to one), and the extra
    row cut off.  The sorts,
    random writes over all rows, so run at once; the merges read and write in order.
    """
    nnz = int(indices.shape[0])
    deg = np.diff(indptr)
    parts = max(1, min(int(threads), nnz // _ORIENT_PART_ARCS))

    lo = np.empty(nnz, dtype=np.int32)
    hi = np.empty(nnz, dtype=np.int32)

    def oriented(r0, r1):
        a, b = int(indptr[r0]), int(indptr[r1])
        k = b - a
        low, high = lo[a:b], hi[a:b]
        low.fill(1)
        kernels.csr_scale_columns(1, n, np.array([0, k], dtype=np.int32), indices[a:b], low, rank)
        src = np.repeat(rank[r0:r1], deg[r0:r1])
        loops = src == low
        np.maximum(src, low, out=high)
        np.minimum(src, low, out=low)
        if loops.any():
            low[loops] = n
            high[loops] = n
        ones = np.ones(k, dtype=np.int8)
        by_hi = np.empty(n + 2, dtype=np.int32)
        lo_by_hi = np.empty(k, dtype=np.int32)
        vals = np.empty(k, dtype=np.int8)
        kernels.coo_tocsr(n + 1, n + 1, k, high, low, ones, by_hi, lo_by_hi, vals)
        ptr = np.empty(n + 2, dtype=np.int32)
        kernels.csr_tocsc(n + 1, n + 1, by_hi, lo_by_hi, vals, ptr, high, ones)     # rows: lower rank, sorted
        kernels.csr_sum_duplicates(n + 1, n + 1, ptr, high, ones)
        ones[: int(ptr[n + 1])] = 1             # copies summed (up to the arcs of an edge, wrapping int8): one
        return ptr, high, ones

    def added(pair, r0, r1):
        # rows [r0, r1) of the sum (the row pointers are read as they are: positions in the whole arrays)
        (ap, aj, ax), (bp, bj, bx) = pair
        size = int(ap[r1]) - int(ap[r0]) + int(bp[r1]) - int(bp[r0])
        cp = np.empty(r1 - r0 + 1, dtype=np.int32)
        cj, cx = np.empty(size, dtype=np.int32), np.empty(size, dtype=np.int8)
        kernels.csr_plus_csr(r1 - r0, n + 1, ap[r0:r1 + 1], aj, ax, bp[r0:r1 + 1], bj, bx, cp, cj, cx)
        return cp, cj, cx

    def joined(pieces):
        """The pieces of rows of one matrix, one after the other (pointers shifted)."""
        if len(pieces) == 1:
            return pieces[0]
        sizes = [int(p[-1]) for p, _, _ in pieces]
        shift = np.cumsum([0, *sizes])
        ptr = np.concatenate([*(p[:-1] + np.int32(o) for (p, _, _), o in zip(pieces, shift)),
                              np.array([shift[-1]], dtype=np.int32)])
        cols = np.concatenate([c[:k] for (_, c, _), k in zip(pieces, sizes)])
        return ptr, cols, np.concatenate([x[:k] for (_, _, x), k in zip(pieces, sizes)])

    cut = _equal_cuts(indptr, nnz, parts, n)
    mats = list(spread(oriented, cut[:-1], cut[1:]))
    moved = 3 * nnz
    while len(mats) > 1:                      # pairs of neighbours merged at once, each in ranges of rows
        pairs = list(zip(mats[0::2], mats[1::2]))
        moved += sum(int(a[0][n + 1]) + int(b[0][n + 1]) for a, b in pairs)
        split = max(1, threads // len(pairs))
        tasks = []
        for a, b in pairs:
            both = a[0].astype(np.int64) + b[0]
            rows = _equal_cuts(both, int(both[-1]), split, n + 1)
            tasks += [(a, b, r0, r1) for r0, r1 in itertools.pairwise(rows)]
        pieces = list(spread(lambda task: added((task[0], task[1]), task[2], task[3]), tasks))
        merged = [joined(pieces[i * split:(i + 1) * split]) for i in range(len(pairs))]
        for _, _, vals in merged:             # 1 + 1 where both ranges held the edge: ones again (the sum keeps
            vals.fill(1)                      # non-zero values only, so none may wrap to 0)
        mats = merged + mats[len(pairs) * 2:]
        moved += sum(int(mat[0][-1]) for mat in merged)
    ptr, cols, ones = mats[0]
    m = int(ptr[n])
    ones = ones[:m]
    ones.fill(1)
    return ptr[: n + 1], cols[:m], ones, moved + 2 * m


def _count_oriented(kernels, n: int, ptr, lcols, ones, threads: int, chunk: int, spread):
    """Per-rank triangle counts of ``L`` (:func:`count_static_arcs`'s merges and corners) and the info.

    Each run's corners are counted while its product is in cache: the low ones as the product's
    row lengths summed per row ``s``, the middle ones added at ``t`` (the library's column-major
    matvec on the run's edges: a scatter-add), the high ones by its column count of the product's
    columns (a bincount, its prefix sum skipped by a one-column size).  Threads accumulate in int32
    and flush to int64 before the wedges they have seen could pass 2**31.
    """
    m = int(lcols.shape[0])
    od = np.diff(ptr)
    # merge work of row s: the suffixes of its row (|N+(s)| choose 2 entries) and the rows t (L @ |N+|, ranges
    # of rows at once, in int32: |N+(v)| <= sqrt(2 arcs) in this order, so a row's sum is at most 2 arcs < 2**31)
    od64 = od.astype(np.int64)
    b_row = np.zeros(n, dtype=np.int32)
    ones32 = np.ones(m, dtype=np.int32)
    rows = _equal_cuts(ptr, m, threads, n)

    def work_of_rows(r0, r1):
        kernels.csr_matvec(r1 - r0, n, ptr[r0:r1 + 1], lcols, ones32, od, b_row[r0:r1])

    list(spread(work_of_rows, rows[:-1], rows[1:]))
    a_cum = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(od64 * (od64 - 1) // 2, out=a_cum[1:])
    b_cum = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(b_row, out=b_cum[1:])
    ends = a_cum + b_cum
    planned = int(ends[-1])
    chunk = max(1, int(chunk))
    cuts = np.searchsorted(ends, np.arange(chunk, planned, chunk, dtype=np.int64), side="left")
    bounds = np.concatenate([[0], cuts, [n]])
    bounds = bounds[np.concatenate([[True], bounds[1:] > bounds[:-1]])]      # distinct, in order
    runs = np.stack([bounds[:-1], bounds[1:]], axis=1)
    runs = runs[ptr[runs[:, 1]] > ptr[runs[:, 0]]]                   # runs with at least one edge
    groups = [runs[i:i + 1] for i in range(runs.shape[0])]     # one run a task: whoever is free takes the next

    a_len = a_cum[runs[:, 1]] - a_cum[runs[:, 0]]
    b_len = b_cum[runs[:, 1]] - b_cum[runs[:, 0]]
    k_max = int((ptr[runs[:, 1]] - ptr[runs[:, 0]]).max()) if runs.shape[0] else 0
    a_max, b_max = (int(a_len.max()), int(b_len.max())) if runs.shape[0] else (0, 0)
    low = np.zeros(n, dtype=COUNT)                  # rows are disjoint between runs: written, not added
    local, states, lock = threading.local(), [], threading.Lock()
    one = np.ones(1, dtype=np.int32)
    limit = _FLUSH_WEDGES

    def flush(state):
        state["total"] += state["high"]
        state["total"] += state["mid"]
        state["high"].fill(0)
        state["mid"].fill(0)
        state["seen"] = 0

    def thread_state():
        # buffers for every run this thread takes, allocated once: the suffixes' (start, end) pairs,
        # the gathered rows, the product, and the corner counts
        state = getattr(local, "state", None)
        if state is None:
            state = local.state = {
                "pairs": np.empty(2 * k_max, dtype=np.int32), "evens": np.arange(0, 2 * k_max, 2, dtype=np.int32),
                "t_len": np.empty(k_max, dtype=np.int32), "found": np.empty(k_max, dtype=np.int32),
                "t_rows": np.empty(k_max, dtype=np.int32),
                "aj": np.empty(a_max, dtype=np.int32), "ax": np.empty(a_max, dtype=np.int8),
                "bj": np.empty(b_max, dtype=np.int32), "bx": np.empty(b_max, dtype=np.int8),
                "ap": np.zeros(k_max + 1, dtype=np.int32), "bp": np.zeros(k_max + 1, dtype=np.int32),
                "cp": np.empty(k_max + 1, dtype=np.int32), "cj": np.empty(b_max, dtype=np.int32),
                "cx": np.empty(b_max, dtype=np.int8), "high": np.zeros(n, dtype=np.int32),
                "mid": np.zeros(n, dtype=np.int32), "total": np.zeros(n, dtype=COUNT), "seen": 0, "triangles": 0,
                "merged": 0}
            with lock:
                states.append(state)
        return state

    def run(group):
        st = thread_state()
        pairs, evens, t_len, t_rows, found, aj, ax, bj, bx, ap, bp, cp, cj, cx, high, mid = (st[k] for k in (
            "pairs", "evens", "t_len", "t_rows", "found", "aj", "ax", "bj", "bx", "ap", "bp", "cp", "cj", "cx",
            "high", "mid"))
        zero = np.zeros(1, dtype=np.int32)
        for r0, r1 in group.tolist():
            e0, e1 = int(ptr[r0]), int(ptr[r1])
            k = e1 - e0
            wedges = int(b_cum[r1] - b_cum[r0])             # bounds every corner count this run adds
            if st["seen"] + wedges > limit:
                flush(st)
            st["seen"] += wedges
            # edge e = (s, t): row e of A is the suffix lcols[e + 1 : end(s)], the pair (e + 1, end(s))
            starts, stops = pairs[0:2 * k:2], pairs[1:2 * k:2]
            starts[:] = np.arange(e0 + 1, e1 + 1, dtype=np.int32)
            stops[:] = np.repeat(ptr[r0 + 1:r1 + 1], od[r0:r1])
            t = lcols[e0:e1]
            # an empty side closes nothing: where the suffix is empty (t last in row s) row e of B is row
            # n - 1 of L (the top rank's: empty) instead of N+(t) (13% of the merged entries on
            # coAuthorsDBLP, 0.5% on cnr-2000); where N+(t) is empty the suffix is not copied
            slen = stops - starts
            rows_b = t_rows[:k]
            np.copyto(rows_b, t)
            ends_e = ptr[r0 + 1:r1 + 1]
            rows_b[ends_e[ends_e > ptr[r0:r1]] - (e0 + 1)] = n - 1         # the last edge of every row s
            tl = t_len[:k]
            tl.fill(1)
            kernels.csr_scale_columns(1, n, np.array([0, k], dtype=np.int32), rows_b, tl, od)   # |row of B|
            np.multiply(slen, tl != 0, out=slen)
            np.cumsum(slen, out=ap[1:k + 1])
            np.add(starts, slen, out=stops)
            np.cumsum(tl, out=bp[1:k + 1])
            st["merged"] += int(ap[k]) + int(bp[k])
            kernels.csr_row_index(k, evens[:k], pairs, lcols, ones, aj, ax)
            kernels.csr_row_index(k, rows_b, ptr, lcols, ones, bj, bx)
            kernels.csr_elmul_csr(k, n, ap[:k + 1], aj, ax, bp[:k + 1], bj, bx, cp, cj, cx)
            tri = int(cp[k])
            st["triangles"] += tri
            per_edge = found[:k]
            np.subtract(cp[1:k + 1], cp[:k], out=per_edge)
            low[r0:r1] = cp[ptr[r0 + 1:r1 + 1] - e0] - cp[ptr[r0:r1] - e0]
            kernels.csc_matvec(n, 1, np.array([0, k], dtype=np.int32), t, per_edge, one, mid)
            kernels.csr_column_index1(tri, cj, 0, 1, zero, zero, high, zero)

    list(spread(run, groups))
    list(spread(flush, states))
    for state in states:
        low += state["total"]
    return low, {"edges": m, "merged": sum(state["merged"] for state in states),
                 "triangles": sum(state["triangles"] for state in states)}


def symmetric_keys(xp, src, dst):
    """Sorted distinct keys of both orientations of the undirected pairs of directed edges (no self-loops).

    The ``SortedEdgeIndex`` keys of the undirected adjacency, in one sort.
    """
    src = src.astype(np.int64)
    dst = dst.astype(np.int64)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    return unique_sorted(xp, xp.concatenate([(src << 32) | dst, (dst << 32) | src]))


def count_static_fused(xp, capacity: int, sym_keys, chunk: int = 32):
    """Per-vertex triangle counts from the symmetric undirected keys with the ``tri_static`` kernel.

    Same orientation as :func:`count_static`; ``chunk`` is the number of
    shorter-list elements one GPU thread searches.  Returns (counts, info) with
    info ``edges`` (undirected), ``searches`` (binary searches done) and
    ``triangles`` (the kernel's total).
    """
    rows, cols = sym_keys >> 32, sym_keys & LOW32
    bounds = xp.searchsorted(sym_keys, xp.arange(capacity + 1, dtype=np.int64) << 32)
    deg = xp.diff(bounds)
    dr, dc = deg[rows], deg[cols]
    up = (dr < dc) | ((dr == dc) & (rows < cols))
    okeys = sym_keys[up]                  # a filter keeps the sorted (row, col) order
    m = int(okeys.shape[0])
    offsets = xp.searchsorted(okeys, xp.arange(capacity + 1, dtype=np.int64) << 32)
    ocols = (okeys & LOW32).astype(np.int32)
    out_deg = xp.diff(offsets)
    shorter = xp.minimum(out_deg[okeys >> 32], out_deg[ocols])
    item_ends = xp.cumsum((shorter + (chunk - 1)) // chunk)
    nitems = int(item_ends[-1]) if m else 0
    counts = xp.zeros(capacity, dtype=np.uint64)
    total = xp.zeros(1, dtype=np.uint64)
    tk.launch(xp, "tri_static", nitems, offsets, ocols, okeys, item_ends, tk.i64(m), tk.i64(chunk),
              tk.i64(nitems), counts, total)
    return counts.astype(COUNT), {"edges": m, "searches": int(shorter.sum()) if m else 0,
                                  "triangles": int(total[0])}


def triangles_through(xp, index: SortedEdgeIndex, changed_keys, capacity: int):
    """Triangles of the graph in ``index`` that contain a changed edge, each counted once.

    Returns (per-vertex counts of those triangles, their number, neighbour entries scanned).
    ``changed_keys``: sorted distinct ``(lo << 32) | hi`` undirected keys, all present in ``index``.
    """
    corners, found, scanned = triangles_through_sparse(xp, index, changed_keys)
    return bincount(xp, corners, capacity).astype(COUNT, copy=False), found, scanned


def triangles_through_sparse(xp, index: SortedEdgeIndex, changed_keys):
    """:func:`triangles_through` as sparse contributions: (the three corners of every counted
    triangle, concatenated; their number; neighbour entries scanned).  Nothing over all vertices."""
    if changed_keys.shape[0] == 0:
        return xp.zeros(0, dtype=np.int64), 0, 0
    u, v = split_keys(changed_keys)
    u = u.astype(np.int64)
    v = v.astype(np.int64)
    du, dv = index.degrees(u), index.degrees(v)
    small = xp.where(du <= dv, u, v)       # scan the smaller neighbourhood, search the other
    large = xp.where(du <= dv, v, u)
    owner, w = index.neighbours(small)
    w = w.astype(np.int64)
    scanned = int(w.shape[0])
    lg = large[owner]
    hit = (w != lg) & index.contains(lg, w)
    owner, w = owner[hit], w[hit]
    eu, ev = u[owner], v[owner]
    me = changed_keys[owner]
    # The triangle {u, v, w} belongs to its changed edge of smallest key.
    k1 = (xp.minimum(eu, w) << 32) | xp.maximum(eu, w)
    k2 = (xp.minimum(ev, w) << 32) | xp.maximum(ev, w)
    beaten = (member(xp, changed_keys, k1) & (k1 < me)) | (member(xp, changed_keys, k2) & (k2 < me))
    own = ~beaten
    corners = xp.concatenate([eu[own], ev[own], w[own]])
    return corners, int(corners.shape[0]) // 3, scanned


def triangles_through_fused(xp, index: SortedEdgeIndex, changed_keys, capacity: int, chunk: int = 32,
                            counts=None, sign: int = 1):
    """:func:`triangles_through` with the ``tri_changed`` kernel (same arguments and results).

    With keys pending in the index (removed ones in ``dead``, added ones in ``extra``), ``tri_changed_parts``
    reads each row as its range of the base less its range of dead, plus its range of extra: no compaction,
    whose pass over every key would otherwise land on every small batch (issue 11: a batch costs what it
    touches, ``O(k log E)`` searches for the rows' ranges and the intersections' own reads).

    ``counts`` (int64, at least ``capacity`` entries): the triangles' corners go into it in place, each adding
    ``sign`` (1, or -1 for the triangles an update loses), and it is returned; so an update allocates and
    passes over no vertex-sized array (by default a fresh array of zeros, as before)."""
    if counts is None:
        counts = xp.zeros(capacity, dtype=COUNT)
    n = int(changed_keys.shape[0])
    if n == 0:
        return counts, 0, 0
    u, v = changed_keys >> 32, changed_keys & LOW32
    if index.pending:
        parts = (index.base, index.dead, index.extra)
        ranges = xp.stack([r for w in (u, v) for part in parts for r in SortedEdgeIndex._ranges(xp, part, w)])
        index.work += 2 * sum(_search_cost(2 * n, int(part.shape[0])) for part in parts)
        # the shorter row by its true size (base less dead, plus extra), scanned over its base and extra positions
        u_size, v_size = ranges[1] - ranges[3] + ranges[5], ranges[7] - ranges[9] + ranges[11]
        shorter = xp.minimum(u_size, v_size)
        positions = xp.where(u_size <= v_size, ranges[1] + ranges[5], ranges[7] + ranges[11])
        kernel, rows = "tri_changed_parts", (*parts, changed_keys, xp.ascontiguousarray(ranges))
    else:
        (u_start, u_len), (v_start, v_len) = index.row_ranges(u), index.row_ranges(v)
        shorter = positions = xp.minimum(u_len, v_len)
        kernel, rows = "tri_changed", (index.base, changed_keys, u_start, u_len, v_start, v_len)
    item_ends = xp.cumsum((positions + (chunk - 1)) // chunk)
    nitems = int(item_ends[-1])
    total = xp.zeros(1, dtype=np.uint64)
    # the kernel adds as unsigned 64-bit atomics: the same bits as int64 sums (two's complement)
    tk.launch(xp, kernel, nitems, *rows, item_ends, tk.i64(n), tk.i64(chunk), tk.i64(nitems), counts.view(np.uint64),
              total, tk.i64(sign))
    found, scanned = (int(x) for x in to_numpy(xp.concatenate([total, shorter.sum(keepdims=True).astype(np.uint64)])))
    return counts, found, scanned                       # one read


#: the key of no undirected edge: larger than every ``(lo << 32) | hi``, so it sorts last
_NO_KEY = np.int64(np.iinfo(np.int64).max)


def undirected_delta(xp, graph: DynamicGraph, delta: BatchDelta):
    """(removed, added) undirected keys implied by a directed delta (see the module docstring), each
    sorted and distinct, as :func:`undirected_delta_reference` gives them.

    The same array program without its boolean-mask compactions (each one a read on a GPU, a dozen an
    update): a change that alters no undirected edge (a self-loop, or the reverse edge present between the
    deletions and the insertions) gets :data:`_NO_KEY`, both key arrays are sorted, and the first of each
    run of equal keys is scattered to its rank (:func:`_firsts_of_sorted`): one read for both sizes, besides
    the structure's ``contains``.
    """
    ins_s, ins_d = delta.inserted_src, delta.inserted_dst
    del_s, del_d = delta.deleted_src, delta.deleted_dst
    ins_sorted = xp.sort(edge_keys(xp, ins_s, ins_d))        # searched only: duplicates do no harm

    def keys(s, d):
        if s.shape[0] == 0:
            return xp.zeros(0, dtype=np.int64)
        s64, d64 = s.astype(np.int64), d.astype(np.int64)
        # reverse edge d -> s present after the deletions, before the insertions: the undirected edge stays
        # (a deletion) or was there already (an insertion)
        reverse = xp.asarray(graph.contains(d.astype(np.int32), s.astype(np.int32)), dtype=bool)
        reverse &= ~member(xp, ins_sorted, (d64 << 32) | s64)
        k = (xp.minimum(s64, d64) << 32) | xp.maximum(s64, d64)
        return xp.sort(xp.where(reverse | (s64 == d64), _NO_KEY, k))

    return _firsts_of_sorted(xp, keys(del_s, del_d), keys(ins_s, ins_d))


def _firsts_of_sorted(xp, *parts):
    """The distinct keys of each sorted int64 array, :data:`_NO_KEY` dropped, with one read for all their
    sizes: the first of each run is scattered to its rank (the others to a slot past the end)."""
    firsts, sizes = [], []
    for a in parts:
        n = int(a.shape[0])
        if n == 0:
            firsts.append(None)
            continue
        first = xp.empty(n, dtype=bool)
        first[:1] = a[:1] != _NO_KEY
        first[1:] = (a[1:] != a[:-1]) & (a[1:] != _NO_KEY)
        rank = xp.cumsum(first, dtype=np.int64)
        firsts.append((first, rank))
        sizes.append(rank[-1:])
    totals = iter(int(x) for x in to_numpy(xp.concatenate(sizes))) if sizes else iter(())
    out = []
    for a, f in zip(parts, firsts):
        if f is None:
            out.append(xp.zeros(0, dtype=np.int64))
            continue
        first, rank = f
        total = next(totals)
        dest = xp.empty(total + 1, dtype=np.int64)
        dest[xp.where(first, rank - 1, total)] = a
        out.append(dest[:total])
    return tuple(out)


def undirected_delta_reference(xp, graph: DynamicGraph, delta: BatchDelta):
    """(removed, added) undirected keys implied by a directed delta (see the module docstring): the
    reference of :func:`undirected_delta` (boolean masks and a unique per key set)."""
    ins_s, ins_d = delta.inserted_src, delta.inserted_dst
    del_s, del_d = delta.deleted_src, delta.deleted_dst
    ins_keys = unique_sorted(xp, edge_keys(xp, ins_s, ins_d))

    def reverse_in_between(s, d):
        # reverse edge d -> s present after the deletions, before the insertions
        if s.shape[0] == 0:
            return xp.zeros(0, dtype=bool)
        now = xp.asarray(graph.contains(d.astype(np.int32), s.astype(np.int32)), dtype=bool)
        return now & ~member(xp, ins_keys, edge_keys(xp, d, s))

    gone = ~reverse_in_between(del_s, del_d)
    new = ~reverse_in_between(ins_s, ins_d)
    return (undirected_keys(xp, del_s[gone], del_d[gone]),
            undirected_keys(xp, ins_s[new], ins_d[new]))


def _both_orientations(xp, und_keys):
    """The sorted keys ``(a << 32) | b`` and ``(b << 32) | a`` of distinct undirected keys ``(a << 32) | b``."""
    if und_keys.shape[0] == 0:
        return und_keys
    return xp.sort(xp.concatenate([und_keys, ((und_keys & LOW32) << 32) | (und_keys >> 32)]))


class TriangleIndex(SortedEdgeIndex):
    """The job's undirected adjacency (both orientations): a :class:`SortedEdgeIndex` whose
    compaction (a pass over all keys) never lands on a small batch.

    The index's own rule compacts once the pending keys pass ``2 sqrt(|base| k)`` for
    a batch of ``k`` keys, which after one large batch makes the next small one pay
    the pass.  Here the large batches (more than ``small_fraction * |base|`` keys,
    0.1% of the edges) pay: one compacts when the pending keys pass the amortised
    bound or ``large_pending_fraction * |base|`` (1/32), so none leaves more pending;
    a small batch only compacts past ``max_pending_fraction * |base|`` (1/8), which
    takes at least ``|base| * 3 / 32`` changed keys in small batches alone (about a
    hundred batches of 0.1%).  Every pass thus follows at least ``|base| / 32``
    changed keys or a batch of at least ``|base| / 1000``: amortised O(1) per key.

    Updates are the base class's (the batch searched in the pending arrays, a pending
    array rewritten only when the batch changes it); only the compaction rule differs.
    So a small batch costs ``O(k log E)`` searches plus those rewrites, whose size is the
    pending keys: at most ``|base| / 8``, and about ``2 sqrt(|base| K)`` after a large
    batch of ``K`` keys.
    """

    small_fraction = 1e-3
    large_pending_fraction = 1 / 32
    max_pending_fraction = 1 / 8

    def _maybe_compact(self, batch: int) -> None:
        base = int(self.base.shape[0])
        if batch > self.small_fraction * base:
            limit = min(2 * math.isqrt(base * batch), int(self.large_pending_fraction * base))
        else:
            limit = int(self.max_pending_fraction * base)
        if self.pending > max(self.min_pending, limit):
            self.compact()


class DeferredArcsIndex(TriangleIndex):
    """The job's index over a host CSR's arcs (int32 ``(indptr, indices)``, :func:`host_arcs`), built on
    first use by :func:`_symmetric_keys_of` (A + A^T, both orientations).

    A static count does not need it; the updates do.  So the static run keeps the arcs (a copy: the
    graph moves on) and the build, counted in ``work``, lands in the first update or checkpoint that
    reads the index: a stream pays it once, a one-off count never.
    """

    def __init__(self, xp, arcs, capacity: int, **kwargs):
        self._arcs = None
        super().__init__(xp, None, **kwargs)
        self._arcs = (arcs, int(capacity))

    @property
    def base(self):
        if self._arcs is not None:
            arcs, capacity = self._arcs
            self._arcs = None
            self._base, built = _symmetric_keys_of(arcs, capacity)
            self.work += built
        return self._base

    @base.setter
    def base(self, value):
        self._base = value


class Triangles(Job):
    name = "triangles"

    def __init__(self, xp=np, *, fallback_fraction: float | None = None, recount_edges: int | None = None,
                 chunk: int | None = None, fused: bool | None = None, fused_chunk: int = 32, threads: int = 2,
                 **params):
        super().__init__(xp, **params)
        #: a batch over this fraction of the edges recounts (FALLBACK_FRACTION unless given)
        self.fallback_fraction = FALLBACK_FRACTION if fallback_fraction is None else float(fallback_fraction)
        #: graphs of at most this many edges also recount for a batch over SMALL_BATCH_FRACTION: the cost
        #: rule of GPU_RECOUNT_EDGES, by default on CuPy only and only when fallback_fraction is not given
        #: (an explicit fraction is the whole rule, as the tests that force the incremental path expect)
        if recount_edges is None:
            recount_edges = GPU_RECOUNT_EDGES if fallback_fraction is None and is_gpu(xp) else 0
        self.recount_edges = int(recount_edges)
        self.chunk = int(chunk) if chunk else (1 << 26 if is_gpu(xp) else 1 << 21)
        #: the RawKernel path (algorithms/triangle_kernels.py); the array program otherwise
        self.fused = is_gpu(xp) if fused is None else bool(fused)
        self.fused_chunk = max(1, int(fused_chunk))     # shorter-list elements per GPU thread
        self.threads = max(1, int(threads))             # scipy row-merge runs at once (static, NumPy)
        self.counts = xp.zeros(0, dtype=COUNT)
        self.total = 0
        self.index = TriangleIndex(xp)         # undirected adjacency, both orientations
        self._ready = False

    def run_static(self, graph: DynamicGraph, vertex_map) -> None:
        _live, live_mask = self._remember_live(graph)
        self._recount(graph, int(live_mask.shape[0]))

    def _recount(self, graph: DynamicGraph, cap: int) -> None:
        """The static count over ``cap`` slots (at least the graph's vertex capacity), the live set already set."""
        xp = self.xp
        csr = graph.adjacency()
        if self.fused:         # hashed intersections on one sort of the oriented edges; the index sorts on first use
            self.index = tk.DeferredSymmetricIndex(xp, None, csr.cols, csr.offsets)
            self.counts, info = tk.count_static_hashed(xp, cap, None, csr.cols, offsets=csr.offsets)
            self.total = info["triangles"]
            scanned = info["probes"]
        elif (arcs := host_arcs(csr, cap) if xp is np else None) is not None:
            # scipy: the count from the arcs themselves; the index (A + A^T) from the same arcs when an
            # update or a checkpoint first reads it, as the fused path's and the BFS job's indexes
            self.counts, info = count_static_arcs(cap, *arcs, self.threads)
            self.index = DeferredArcsIndex(xp, arcs, cap)
            self.total = info["triangles"]
            scanned = info["merged"] + info["oriented"]               # merges, building L
        else:
            und = undirected_keys(xp, row_ids(xp, csr.offsets), csr.cols)
            a, b = split_keys(und)
            self.index = TriangleIndex.from_edges(xp, xp.concatenate([a, b]), xp.concatenate([b, a]))
            self.counts, info = count_static(xp, cap, und, self.chunk)
            self.total = int(self.counts.sum()) // 3
            scanned = info["wedges"]
        self._ready = True
        index_work = self.index.take_work()     # building the index belongs to this run, not the next update
        self.work = {"mode": "static", "iterations": 1, "edges_touched": scanned + info["edges"] + index_work,
                     "undirected_edges": info["edges"], "index_edges": index_work, "fused": self.fused}

    def update(self, graph: DynamicGraph, delta: BatchDelta, vertex_map) -> None:
        xp = self.xp
        if not self._ready:
            return self.run_static(graph, vertex_map)
        live_mask = self._follow_live(graph, delta)      # O(batch); a recount needs no pass for it either
        if self.recounts(delta.num_changed_edges, int(graph.num_edges)):
            return self._recount(graph, int(live_mask.shape[0]))
        cap = int(live_mask.shape[0])
        counts = grow(xp, self.counts, cap, 0)
        removed_keys, added_keys = undirected_delta(xp, graph, delta)
        # deletions: on the graph before the batch (the index as it stands); in place, at their corners only
        n_lost, scanned_d = self._through(removed_keys, cap, counts, -1)
        removed = xp.asarray(delta.vertices_removed, dtype=np.int64)
        if removed.shape[0]:
            fill_at(xp, counts, removed, 0)  # a removed slot starts over (it may be reused below)
        # both orientations of distinct undirected keys are distinct: a sort, and no unique (a read) in the index
        self.index.remove_keys(_both_orientations(xp, removed_keys))
        self.index.add_keys(_both_orientations(xp, added_keys))
        # insertions: on the graph after the batch
        n_gained, scanned_i = self._through(added_keys, cap, counts, 1)
        self.counts = counts
        self.total = self.total - n_lost + n_gained
        index_work = self.index.take_work()
        self.work = {"mode": "incremental", "iterations": 1,
                     "edges_touched": scanned_d + scanned_i + int(removed_keys.shape[0] + added_keys.shape[0])
                     + index_work, "index_edges": index_work,
                     "changed_undirected": int(removed_keys.shape[0] + added_keys.shape[0]),
                     "triangles_lost": n_lost, "triangles_gained": n_gained, "fused": self.fused}

    def recounts(self, changed: int, edges: int) -> bool:
        """Whether a batch of ``changed`` edge changes on a graph of ``edges`` edges recounts from scratch:
        past ``fallback_fraction`` of the edges, or past SMALL_BATCH_FRACTION of them on a graph of at most
        ``recount_edges`` edges (GPU_RECOUNT_EDGES: there a recount costs less than an update)."""
        edges = max(int(edges), 1)
        if changed > self.fallback_fraction * edges:
            return True
        return edges <= self.recount_edges and changed > SMALL_BATCH_FRACTION * edges

    def _through(self, changed_keys, cap: int, counts, sign: int):
        """Triangles through the changed edges on the index as it stands, each adding ``sign`` at its three
        corners of ``counts`` in place (no vertex-sized array, no pass over the vertices): ``(triangles,
        entries scanned)``.  The fused kernel adds them itself; the array program's sparse corners are
        scattered here."""
        if self.fused:
            _, found, scanned = triangles_through_fused(self.xp, self.index, changed_keys, cap, self.fused_chunk,
                                                        counts=counts, sign=sign)
            return found, scanned
        corners, found, scanned = triangles_through_sparse(self.xp, self.index, changed_keys)
        scatter_add(self.xp, counts, corners, sign)
        return found, scanned

    # -- results ---------------------------------------------------------------------------
    def slot_columns(self, vertex_map):
        return self._live_mask, {"triangles": (self.counts, None, np.int64)}

    def summary(self) -> dict:
        return {"triangles": int(self.total), "triangles_edges_touched": int(self.work.get("edges_touched", 0))}

    def state(self) -> dict:
        return {**self._host(counts=self.counts, index_keys=self.index.keys, live=self._live),
                "total": int(self.total)}

    def load_state(self, state: dict) -> None:
        self.counts = self._device(state["counts"], COUNT)
        self.index = TriangleIndex(self.xp, self._device(state["index_keys"], np.int64))
        self._set_live(self._device(state["live"], np.int64), int(self.counts.shape[0]))
        self.counts = grow(self.xp, self.counts, int(self._live_mask.shape[0]), 0)
        self.total = int(state["total"])
        self._ready = True
