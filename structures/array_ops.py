"""Array programs shared by every structure and algorithm: keys, segments, sorted sets, counting, scatter.

This is the one home of such helpers.  Each runs unchanged on NumPy and CuPy
(``xp``); the places where the two libraries differ (``repeat`` with device
counts, ``bincount`` of an empty array, signed 64-bit atomics, ``ufunc.at``)
are answered here once.

Set operations sort, never hash: ``np.unique`` hashes on NumPy >= 2.3, which
is about 100x slower than a sort on large int64 keys, so :func:`unique_sorted`
and :func:`unique_inverse` are written as a sort plus a neighbour compare.
"""
from __future__ import annotations

import functools

import numpy as np

LOW32 = np.int64(0xFFFFFFFF)
OFFSET_DTYPE = np.int64


# -- edge keys ------------------------------------------------------------------------------
def edge_keys(xp, src, dst):
    """One int64 key per edge, src in the high 32 bits: sorting keys sorts by (src, dst)."""
    return (xp.asarray(src).astype(np.int64) << 32) | xp.asarray(dst).astype(np.int64)


def key_sources(keys):
    """The source of every key (int64)."""
    return keys >> 32


def key_targets(keys):
    """The target of every key (int64)."""
    return keys & LOW32


def split_keys(keys):
    """Inverse of :func:`edge_keys`: ``(src, dst)`` as int32."""
    return key_sources(keys).astype(np.int32), key_targets(keys).astype(np.int32)


# -- sorted sets ----------------------------------------------------------------------------
def unique_sorted(xp, keys):
    """Sorted distinct values of ``keys`` (a sort and a neighbour compare; no hashing)."""
    if keys.shape[0] == 0:
        return keys
    keys = xp.sort(keys)
    keep = xp.ones(keys.shape[0], dtype=bool)
    keep[1:] = keys[1:] != keys[:-1]
    return keys[keep]


def unique_inverse(xp, values):
    """(sorted distinct values, index of each input in them), from one argsort."""
    n = int(values.shape[0])
    if n == 0:
        return values[:0], xp.zeros(0, dtype=np.int64)
    order = xp.argsort(values)          # equal values need no particular order here
    ordered = values[order]
    starts = xp.ones(n, dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    inverse = xp.empty(n, dtype=np.int64)
    inverse[order] = xp.cumsum(starts) - 1
    return ordered[starts], inverse


def sorted_lookup(xp, sorted_keys, queries):
    """Positions of ``queries`` in ``sorted_keys`` and a hit mask (the position is clipped where missing)."""
    n = sorted_keys.shape[0]
    if n == 0 or queries.shape[0] == 0:
        return xp.zeros(queries.shape[0], dtype=np.int64), xp.zeros(queries.shape[0], dtype=bool)
    pos = xp.minimum(xp.searchsorted(sorted_keys, queries), n - 1)
    return pos, sorted_keys[pos] == queries


def last_position(xp, keys, positions, queries, missing: int = -1):
    """For each of ``queries``, the largest of ``positions`` given with it in ``keys`` (``missing`` where it has
    none): e.g. the row of each vertex's last ``delete_vertex`` in a log.  One sort of the keys, one search."""
    if keys.shape[0] == 0:
        return xp.full(queries.shape[0], missing, dtype=np.int64)
    order = xp.lexsort(xp.stack([positions, keys]))
    k, p = keys[order], positions[order]
    last = xp.ones(k.shape[0], dtype=bool)
    last[:-1] = k[1:] != k[:-1]
    at, hit = sorted_lookup(xp, k[last], queries)
    return xp.where(hit, p[last][at], missing)


def member(xp, sorted_keys, queries):
    """Bool array: ``queries[i]`` occurs in ``sorted_keys`` (binary search, no hashing)."""
    return sorted_lookup(xp, sorted_keys, queries)[1]


# -- segments -------------------------------------------------------------------------------
def repeat_index(xp, counts, total: int | None = None):
    """``i`` repeated ``counts[i]`` times, as int64 (``np.repeat(arange(len(counts)), counts)``).

    ``cupy.repeat`` only takes host-side counts, so on the device this is a
    prefix sum and a searchsorted over the segment ends, after reading the total
    back (one device -> host transfer) unless the caller passes ``total`` (the sum
    of ``counts``, when the host knows it: a batch's edge count, say).
    """
    counts = xp.asarray(counts, dtype=np.int64)
    if xp is np and total is None:
        return np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
    ends = xp.cumsum(counts)
    if xp is np:    # the same in two linear passes: element i's row is the number of ends <= i
        return np.cumsum(np.bincount(ends, minlength=int(total) + 1)[: int(total)])
    if total is None:
        total = int(ends[-1]) if ends.shape[0] else 0
    return xp.searchsorted(ends, xp.arange(int(total), dtype=np.int64), side="right")


def repeat(xp, values, counts, total: int | None = None):
    """``values[i]`` repeated ``counts[i]`` times (counts may live on the device; ``total``: their
    sum when the host knows it, which saves the device a transfer)."""
    if xp is np and total is None:
        return np.repeat(values, counts)
    return values[repeat_index(xp, counts, total)]


def row_ids(xp, offsets, total: int | None = None):
    """For every element of a segmented array (CSR ``offsets``), the index of its row (int64).

    ``total``: the number of elements (``len(cols)``, known on the host), which spares the
    device the transfer of ``offsets[-1]``."""
    return repeat_index(xp, xp.diff(offsets), total)


def offsets_of(xp, counts):
    """CSR offsets (int64, ``len(counts) + 1``) of segments of the given sizes."""
    offsets = xp.zeros(counts.shape[0] + 1, dtype=OFFSET_DTYPE)
    offsets[1:] = xp.cumsum(counts)
    return offsets


def segmented_arange(xp, starts, counts):
    """Positions ``starts[i] .. starts[i] + counts[i] - 1`` for every segment, concatenated.

    Returns ``(owner, positions)``: the segment index of every position and the
    position itself (int64).  This is how a frontier's rows are expanded into
    its edges without a loop over vertices.
    """
    counts = xp.asarray(counts, dtype=np.int64)
    starts = xp.asarray(starts, dtype=np.int64)
    owner = repeat_index(xp, counts)
    if owner.shape[0] == 0:
        return owner, xp.zeros(0, dtype=np.int64)
    seg_begin = xp.cumsum(counts) - counts                # where each segment starts in the output
    within = xp.arange(owner.shape[0], dtype=np.int64) - seg_begin[owner]
    return owner, starts[owner] + within


def range_positions(starts, counts, ends, total: int):
    """:func:`segment_positions` on the host (NumPy) for a caller that has the running sums ``ends`` of ``counts``
    and their last, ``total``, already (the host's reads of rows): one repeat and one arange."""
    pos = (starts - ends + counts).repeat(counts)
    pos += np.arange(total)
    return pos


def gather_segments(xp, starts, counts):
    """Offsets of the concatenated ranges ``[starts[i], starts[i] + counts[i])`` and the index of every element."""
    return offsets_of(xp, xp.asarray(counts, dtype=np.int64)), segmented_arange(xp, starts, counts)[1]


# -- counting and scatter -------------------------------------------------------------------
def bincount(xp, x, size: int, weights=None):
    """``bincount`` of length exactly ``size``: int64 counts, or float64 sums of ``weights``.

    Values at or past ``size`` are dropped.  On CuPy this is an ``add.at`` scatter
    into a ``size + 1`` array (values past the end land in the spare slot): CuPy's
    ``bincount`` first reduces its input to a maximum and a minimum (two more passes
    and two host reads), and on an H100 it took 3.6 ms for 16M R-MAT endpoints
    where the scatter took 0.8 ms.  On NumPy ``bincount`` is the fast one.
    """
    dtype = np.float64 if weights is not None else np.int64
    if x.shape[0] == 0:
        return xp.zeros(size, dtype=dtype)
    if xp is not np:
        at = _ufunc_at(xp, "add")
        if at is not None:
            out = xp.zeros(size + 1, dtype=dtype)
            at(out, xp.minimum(x, size), 1 if weights is None else weights.astype(dtype, copy=False))
            return out[:size]
    out = xp.bincount(x.astype(np.int64, copy=False), weights=weights, minlength=size)[:size]
    return out if weights is not None else out.astype(np.int64, copy=False)


def _ufunc_at(xp, name: str):
    """``xp.<name>.at`` (NumPy, CuPy >= 14), or None on an older CuPy."""
    return getattr(getattr(xp, name), "at", None)


def scatter_add(xp, target, index, values) -> None:
    """target[index] += values, accumulating repeated indices (in place)."""
    at = _ufunc_at(xp, "add")
    if at is not None:
        at(target, index, values)
    else:
        import cupyx  # CuPy < 14 only; cupyx is not importable without CuPy
        cupyx.scatter_add(target, index, values)


@functools.cache
def _fill_at_kernel(xp):
    return xp.ElementwiseKernel("I index, T value", "raw T target", "target[index] = value", "vinestream_fill_at")


def fill_at(xp, target, index, value) -> None:
    """``target[index] = value``: one scalar ``value`` into ``target`` at ``index`` (ids in ``[0, len(target))``,
    repeats allowed).  On CuPy one elementwise launch: a fancy-index assignment prepares its index in Python
    first and took 62 us a call on an H100 against 8 us for a launch (bench-results/2026-11-26-session15/call9),
    and a GPU batch's jobs make several (the live masks, PageRank's flags) for the vertices a batch adds."""
    if xp is np or index.shape[0] == 0:
        target[index] = value
        return
    _fill_at_kernel(xp)(index, target.dtype.type(value), target)


@functools.cache
def _sum_of_sums_kernel(xp):
    # (the reduction's operands are named a and b: the inputs take other names)
    return xp.ReductionKernel("T x, T y", "T total", "x + y", "a + b", "total = a", "0", "vinestream_sum_of_sums")


def sum_of_sums(xp, a, b):
    """``(a + b).sum()`` as a one-element array on ``a``'s device (no read).  On CuPy one reduction launch instead of an
    add, a temporary and a reduction: a snapshot's rank column takes it every batch (algorithms.pagerank)."""
    if xp is np:
        return np.asarray((a + b).sum()).reshape(1)
    return _sum_of_sums_kernel(xp)(a, b).reshape(1)


_SIGN_BIT = np.uint64(1 << 63)


def _scatter_extreme(xp, ufunc: str, target, index, values) -> None:
    """target[index] = ufunc(target[index], values) on the device.

    CuPy's atomics have no signed 64-bit max/min: int64 is mapped to uint64 by
    flipping the sign bit, which keeps the order, and mapped back after.
    """
    at = _ufunc_at(xp, ufunc)
    if at is None:
        import cupyx  # CuPy < 14 only
        at = getattr(cupyx, "scatter_max" if ufunc == "maximum" else "scatter_min")
    if target.dtype == np.int64:
        flipped = target.view(np.uint64) ^ _SIGN_BIT
        at(flipped, index, xp.asarray(values, dtype=np.int64).view(np.uint64) ^ _SIGN_BIT)
        target[...] = (flipped ^ _SIGN_BIT).view(np.int64)
    else:
        at(target, index, xp.asarray(values).astype(target.dtype, copy=False))


def scatter_max(xp, target, index, values) -> None:
    """target[index] = max(target[index], values), over repeated indices (in place)."""
    if xp is np:
        np.maximum.at(target, index, values)
    else:
        _scatter_extreme(xp, "maximum", target, index, values)


def scatter_min(xp, target, index, values) -> None:
    """target[index] = min(target[index], values), over repeated indices (in place)."""
    if xp is np:
        np.minimum.at(target, index, values)
    else:
        _scatter_extreme(xp, "minimum", target, index, values)


def grown_capacity(capacity: int, needed: int) -> int:
    """``capacity`` doubled until it holds ``needed`` (at least 1)."""
    capacity = max(int(capacity), 1)
    while capacity < needed:
        capacity *= 2
    return capacity


def pow2_at_least(n: int) -> int:
    """The least power of two at least ``n`` (1 for ``n <= 1``): padded sizes of block sorts and grids."""
    return 1 << max(int(n) - 1, 0).bit_length()


def doublings(old_capacity: int, new_capacity: int) -> int:
    """How many doublings took ``old_capacity`` (at least 1) to ``new_capacity``."""
    return max(int(new_capacity).bit_length() - max(int(old_capacity), 1).bit_length(), 0)


def extended(xp, a, length: int, fill):
    """``a`` copied into a new array of ``length`` entries, the new ones set to ``fill`` (same dtype)."""
    out = xp.full(int(length), fill, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


# -- sorted lists (GPMA, diff-CSR) ----------------------------------------------------------
def dedupe_keys(xp, keys):
    """(sorted distinct keys, index of the last occurrence of each, index of the first).

    The last occurrence carries the weight that wins (the upsert rule), the first
    is the one a new-edge mask reports.  Already strictly ascending input costs one compare.
    """
    n = keys.shape[0]
    if n <= 1 or bool((keys[1:] > keys[:-1]).all()):
        idx = xp.arange(n, dtype=np.int64)
        return keys, idx, idx
    order = xp.argsort(keys, kind="stable")
    sk = keys[order]
    change = sk[1:] != sk[:-1]
    start = xp.ones(n, dtype=bool)
    start[1:] = change
    end = xp.ones(n, dtype=bool)
    end[:-1] = change
    return sk[start], order[end], order[start]


def merge_sorted(xp, a_keys, a_values, b_keys, b_values):
    """Two sorted, mutually distinct key lists merged by rank, no sort: an element's place is its
    index plus the number of the other list's keys below it.  Values (or None) follow their keys."""
    na, nb = int(a_keys.shape[0]), int(b_keys.shape[0])
    keys = xp.empty(na + nb, dtype=a_keys.dtype)
    at_a = xp.arange(na, dtype=np.int64) + xp.searchsorted(b_keys, a_keys)
    at_b = xp.arange(nb, dtype=np.int64) + xp.searchsorted(a_keys, b_keys)
    keys[at_a], keys[at_b] = a_keys, b_keys
    if a_values is None:
        return keys, None
    values = xp.empty(na + nb, dtype=a_values.dtype)
    values[at_a], values[at_b] = a_values, b_values
    return keys, values


def sorted_runs(xp, values, count: int | None = None):
    """(distinct values, run lengths) of a non-decreasing array (a neighbour compare, no hashing).

    ``count``, the number of distinct values when the caller knows it, saves the device the
    transfer of the result size (a compaction of known size instead of a ``nonzero``).
    """
    n = values.shape[0]
    if n == 0:
        return values, xp.zeros(0, dtype=np.int64)
    starts = xp.ones(n, dtype=bool)
    starts[1:] = values[1:] != values[:-1]
    if count is None:
        at = xp.nonzero(starts)[0]
    else:
        at = compact(xp, xp.arange(n, dtype=np.int64), starts, int(count))
    return values[at], xp.diff(xp.concatenate([at, xp.asarray([n], dtype=at.dtype)])).astype(np.int64)


def add_source_counts(xp, target, sorted_keys, sign: int = 1) -> None:
    """target[src] += sign for every edge key (sorted keys: run lengths of the sources, no atomics)."""
    src, runs = sorted_runs(xp, key_sources(sorted_keys))
    if src.shape[0]:
        target[src] += sign * runs


def grouped_exclusive_sum(xp, groups, values, num_groups: int):
    """Exclusive prefix sum of ``values`` within each group, in array order, and the group totals.

    ``groups`` are ints in ``[0, num_groups)``.  Element ``i`` gets the sum of
    ``values[j]`` over ``j < i`` with ``groups[j] == groups[i]`` (one stable sort
    by group and one prefix sum, no loop over groups).  This is how several
    queues are popped or pushed at once, each by its own prefix sum.
    """
    n = int(groups.shape[0])
    if n == 0:
        return xp.zeros(0, dtype=np.int64), xp.zeros(num_groups, dtype=np.int64)
    values = values.astype(np.int64)
    order = xp.argsort(groups, kind="stable")
    g = groups[order].astype(np.int64)
    incl = xp.cumsum(values[order])
    # end of each group in sorted order (a searchsorted: CuPy's bincount reads its maximum back)
    ends = xp.searchsorted(g, xp.arange(num_groups, dtype=np.int64), side="right")
    at_end = xp.concatenate([xp.zeros(1, dtype=np.int64), incl])[ends]
    totals = xp.diff(xp.concatenate([xp.zeros(1, dtype=np.int64), at_end]))
    before = at_end - totals                                   # sum over the lower groups
    out = xp.empty(n, dtype=np.int64)
    out[order] = incl - values[order] - before[g]
    return out, totals


# -- sorted sets of keys: the set algebra of the incremental indexes ------------------------
def difference_sorted(xp, a, b):
    """``a`` without the keys of ``b`` (both sorted and distinct): one binary search per key of ``a``.

    O(|a| log |b|): with ``a`` the small side (a batch) this never reads all of ``b``.
    """
    if a.shape[0] == 0 or b.shape[0] == 0:
        return a
    return a[~member(xp, b, a)]


def union_sorted(xp, a, b):
    """Sorted distinct union of two sorted distinct key arrays, by a rank merge (no sort)."""
    if b.shape[0] == 0:
        return a
    if a.shape[0] == 0:
        return b
    return merge_sorted(xp, a, None, difference_sorted(xp, b, a), None)[0]


def distinct_by_scatter(xp, values, scratch):
    """Distinct ``values`` (non-negative ints, unsorted result) in O(len(values)), without sorting.

    ``scratch`` is any int64 array longer than ``values.max()`` that the caller keeps between
    calls (its contents do not matter): every value writes its position into it and the one
    position that stays is the value's representative.  This is how a frontier of a few
    vertices is deduplicated without a sort and without touching all vertices.
    """
    k = values.shape[0]
    if k == 0:
        return values
    at = xp.arange(k, dtype=np.int64)
    scratch[values] = at
    return values[scratch[values] == at]


def compact(xp, values, mask, count: int):
    """``values[mask]`` when the caller already knows ``count = mask.sum()`` (no host sync on a GPU).

    A boolean index must learn its result size from the device; with the size known, the
    kept elements are scattered by their prefix-sum rank into an array of that size.
    """
    return compact_together(xp, (values,), mask, count)[0]


def compact_together(xp, arrays, mask, count: int) -> tuple:
    """:func:`compact` of each of ``arrays`` by the same ``mask``: on a GPU one prefix sum and one scatter
    index for all of them (a compaction is five launches, of which the scan and the index are three)."""
    if xp is np:
        return tuple(np.compress(mask, a) for a in arrays)
    at = xp.where(mask, xp.cumsum(mask) - 1, count)
    outs = []
    for values in arrays:
        out = xp.empty(count + 1, dtype=values.dtype)
        out[at] = values
        outs.append(out[:count])
    return tuple(outs)


def segment_positions(xp, starts, counts):
    """Positions ``starts[i] .. starts[i] + counts[i] - 1`` concatenated, without the owner array.

    :func:`segmented_arange` when only the positions are needed: on NumPy one ``repeat``
    of the per-segment shifts plus one ``arange`` (three passes over the output).
    """
    counts = xp.asarray(counts, dtype=np.int64)
    starts = xp.asarray(starts, dtype=np.int64)
    if xp is not np:
        return segmented_arange(xp, starts, counts)[1]
    ends = np.cumsum(counts)
    total = int(ends[-1]) if ends.shape[0] else 0
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    return range_positions(starts, counts, ends, total)


def owners_of(xp, counts, positions_in_output):
    """For entries at ``positions_in_output`` of a segmented array of segment sizes ``counts``,
    the index of their segment (a binary search over the segment ends: cheap for a few entries)."""
    ends = xp.cumsum(xp.asarray(counts, dtype=np.int64))
    return xp.searchsorted(ends, positions_in_output, side="right")
