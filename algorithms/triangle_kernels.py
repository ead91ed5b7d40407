"""Fused CUDA kernels for triangle counting (the GPU path of :mod:`algorithms.triangles`).

The array programs in :mod:`algorithms.triangles` stay the reference; these
kernels replace their memory- and launch-bound core on the GPU, where the
static form materialises every oriented wedge in global memory and the
incremental form every neighbour of the smaller endpoint:

* ``tri_support`` - the static count used by the job: the same degree-ordered
  intersection on a CSR oriented from the directed edges by one sort (no
  symmetric index), ``lanes`` consecutive threads per oriented edge splitting
  its shorter list, each common neighbour adding 1 to the *support* of the
  triangle's three oriented edges (the matched positions are those edges'
  ids), so hubs see no per-vertex atomics; per-vertex counts are half the
  support summed over incident edges (:func:`count_static_oriented`);
* ``tri_static`` - the degree-ordered intersection of Schank and Wagner: for
  every oriented edge ``u -> v`` (lower (degree, id) to higher) the common
  out-neighbours ``w`` of ``u`` and ``v`` are the triangles in which ``u`` is
  the source and ``v`` the middle vertex, so each triangle is found once;
* ``tri_changed`` - the common neighbours of the changed undirected edges of
  Makkar, Bader and Green (HiPC 2017) on the full undirected adjacency, a
  triangle with several changed edges counted only at its changed edge of
  smallest key (the ownership rule of the array program).

Both search the elements of the *shorter* list in the longer one (both lists
are sorted).  The work of one edge is cut into items of at most ``chunk``
elements of the shorter list, so a hub edge is spread over many threads; a
thread finds its edge by a binary search on the running sum of item counts
(``item_ends``), as ``structures/graphvine_kernels.gv_walk`` does.  Within an
item the searched positions only grow, so each search starts where the last
ended.  Per-vertex counts are ``unsigned long long`` atomics: one per
triangle for ``w``, one per item for ``u`` and ``v``; the total goes through a
shared per-block sum and one global atomic per block.

All kernels use grid-stride loops and 64-bit indices.  The source is one
string, ``SOURCE``, so that ``tests/test_triangle_kernels.py`` can compile it
with nvcc and run it serially on the CPU behind a small host prelude.
"""
from __future__ import annotations

import math

import numpy as np

from vinestream.structures.array_ops import LOW32, bincount, edge_keys, unique_sorted
from vinestream.structures.backend import to_numpy
from vinestream.structures.raw_kernels import RawKernels, i32, i64

from .edge_index import SortedEdgeIndex

SOURCE = r"""
#define TRI_LOW32 0xFFFFFFFFLL
#ifndef TRI_GRID_LOOP
#define TRI_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif

// smallest i in [0, n) with ends[i] > t (ends non-decreasing); n when none
__device__ long long tri_upper_bound(const long long* ends, long long n, long long t)
{
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (ends[mid] > t) hi = mid; else lo = mid + 1;
    }
    return lo;
}

// the column stored at list[p]: the low 32 bits (an int32 column, or a (row << 32) | col key)
template <typename T>
__device__ long long tri_col(const T* list, long long p)
{
    return (long long)list[p] & TRI_LOW32;
}

// first p in [lo, hi) with column >= x (hi when none); the columns of [lo, hi) ascend
template <typename T>
__device__ long long tri_lower_bound(const T* list, long long lo, long long hi, long long x)
{
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (tri_col(list, mid) < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// key occurs in keys[0, n) (sorted)
__device__ bool tri_contains(const long long* keys, long long n, long long key)
{
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (keys[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo < n && keys[lo] == key;
}

// One item: every column w at positions [from, to) of the shorter list searched in the longer list
// [b0, b1).  A common w closes the triangle {u, v, w}; with changed != 0 it is counted only when
// no changed edge of smaller key than changed[me] (u-w or v-w) lies in it.  Adds 1 to counts[w]
// per counted triangle and returns how many were counted (the caller adds them to u and v).
template <typename T>
__device__ unsigned long long tri_scan(const T* list, long long from, long long to, long long b0,
                                       long long b1, long long u, long long v,
                                       const long long* changed, long long me,
                                       unsigned long long* counts)
{
    unsigned long long hits = 0;
    long long lo = b0;
    for (long long p = from; p < to && lo < b1; ++p) {
        long long w = tri_col(list, p);
        lo = tri_lower_bound(list, lo, b1, w);
        if (lo == b1) break;
        if (tri_col(list, lo) != w) continue;
        ++lo;                                          // the next w is larger
        if (changed != 0) {
            long long mine = changed[me];
            long long k1 = u < w ? (u << 32) | w : (w << 32) | u;
            long long k2 = v < w ? (v << 32) | w : (w << 32) | v;
            // a smaller key sits before position me of the sorted changed keys
            if ((k1 < mine && tri_contains(changed, me, k1)) ||
                (k2 < mine && tri_contains(changed, me, k2)))
                continue;
        }
        atomicAdd(&counts[w], 1ULL);
        ++hits;
    }
    return hits;
}

// Static count by edge support on the degree-oriented CSR (offsets, cols sorted per row, rows[e] the
// row of oriented edge e).  1 << lane_shift consecutive threads share edge e = (u, v): lane l takes
// the elements l, l + lanes, ... of the shorter of N+(u), N+(v) and finds each in the longer list by
// a binary search that starts where its previous one ended.  A common w closes triangle {u, v, w},
// found once (at its edge between its two lowest-ranked vertices): the supports of e, of the edge at
// the matched position of the shorter list and of the one in the longer list each gain 1.
extern "C" __global__
void tri_support(const long long* offsets, const int* cols, const int* rows, const long long nedges,
                 const int lane_shift, unsigned int* support)
{
    const long long lanes = 1LL << lane_shift;
    TRI_GRID_LOOP(t, nedges << lane_shift) {
        long long e = t >> lane_shift;
        long long lane = t & (lanes - 1);
        long long u = rows[e], v = cols[e];
        long long u0 = offsets[u], u1 = offsets[u + 1], v0 = offsets[v], v1 = offsets[v + 1];
        bool u_short = (u1 - u0) <= (v1 - v0);
        long long s1 = u_short ? u1 : v1;
        long long b1 = u_short ? v1 : u1;
        long long lo = u_short ? v0 : u0;
        unsigned int hits = 0;
        for (long long p = (u_short ? u0 : v0) + lane; p < s1 && lo < b1; p += lanes) {
            int w = cols[p];
            long long hi = b1;
            while (lo < hi) {
                long long mid = (lo + hi) >> 1;
                if (cols[mid] < w) lo = mid + 1; else hi = mid;
            }
            if (lo < b1 && cols[lo] == w) {
                atomicAdd(&support[p], 1u);
                atomicAdd(&support[lo], 1u);
                ++hits;
                ++lo;
            }
        }
        if (hits) atomicAdd(&support[e], hits);
    }
}

// Static count on the oriented CSR (offsets, cols sorted per row; okeys[e] = (u << 32) | v for
// oriented edge e).  Item t belongs to edge e = upper_bound(item_ends, t) and covers elements
// [j * chunk, (j + 1) * chunk) of the shorter of N+(u), N+(v), j = t - item_ends[e - 1].
extern "C" __global__
void tri_static(const long long* offsets, const int* cols, const long long* okeys,
                const long long* item_ends, const long long nedges, const long long chunk,
                const long long nitems, unsigned long long* counts, unsigned long long* total)
{
    __shared__ unsigned long long block_hits;
    if (threadIdx.x == 0) block_hits = 0;
    __syncthreads();
    unsigned long long mine = 0;
    TRI_GRID_LOOP(t, nitems) {
        long long e = tri_upper_bound(item_ends, nedges, t);
        long long j = t - (e > 0 ? item_ends[e - 1] : 0);
        long long u = okeys[e] >> 32, v = okeys[e] & TRI_LOW32;
        long long u0 = offsets[u], u1 = offsets[u + 1], v0 = offsets[v], v1 = offsets[v + 1];
        bool u_short = (u1 - u0) <= (v1 - v0);
        long long from = (u_short ? u0 : v0) + j * chunk;
        long long end = u_short ? u1 : v1;
        long long to = from + chunk < end ? from + chunk : end;
        unsigned long long hits = tri_scan(cols, from, to, u_short ? v0 : u0, u_short ? v1 : u1,
                                           u, v, (const long long*)0, 0, counts);
        if (hits) {
            atomicAdd(&counts[u], hits);
            atomicAdd(&counts[v], hits);
            mine += hits;
        }
    }
    if (mine) atomicAdd(&block_hits, mine);
    __syncthreads();
    if (threadIdx.x == 0 && block_hits) atomicAdd(total, block_hits);
}

// Triangles through the changed undirected edges changed[i] = (u << 32) | v (sorted, distinct, all
// in keys).  keys: the sorted (row << 32) | col undirected adjacency, both orientations; N(u) is
// keys[u_start[i], u_start[i] + u_len[i]), likewise N(v).  Items as in tri_static.
extern "C" __global__
void tri_changed(const long long* keys, const long long* changed, const long long* u_start,
                 const long long* u_len, const long long* v_start, const long long* v_len,
                 const long long* item_ends, const long long nchanged, const long long chunk,
                 const long long nitems, unsigned long long* counts, unsigned long long* total)
{
    __shared__ unsigned long long block_hits;
    if (threadIdx.x == 0) block_hits = 0;
    __syncthreads();
    unsigned long long mine = 0;
    TRI_GRID_LOOP(t, nitems) {
        long long i = tri_upper_bound(item_ends, nchanged, t);
        long long j = t - (i > 0 ? item_ends[i - 1] : 0);
        long long u = changed[i] >> 32, v = changed[i] & TRI_LOW32;
        bool u_short = u_len[i] <= v_len[i];
        long long from = (u_short ? u_start[i] : v_start[i]) + j * chunk;
        long long end = u_short ? u_start[i] + u_len[i] : v_start[i] + v_len[i];
        long long to = from + chunk < end ? from + chunk : end;
        long long b0 = u_short ? v_start[i] : u_start[i];
        long long b1 = b0 + (u_short ? v_len[i] : u_len[i]);
        unsigned long long hits = tri_scan(keys, from, to, b0, b1, u, v, changed, i, counts);
        if (hits) {
            atomicAdd(&counts[u], hits);
            atomicAdd(&counts[v], hits);
            mine += hits;
        }
    }
    if (mine) atomicAdd(&block_hits, mine);
    __syncthreads();
    if (threadIdx.x == 0 && block_hits) atomicAdd(total, block_hits);
}
"""

KERNELS = ("tri_support", "tri_static", "tri_changed")

_kernels = RawKernels(SOURCE, "triangle")


#: the launcher in use; tests swap in a serial host emulation of the same source
launcher = _kernels.launch


def launch(xp, name: str, n: int, *args) -> None:
    """Run kernel ``name`` over ``n`` items; does nothing when ``n`` is 0 (arrays may be empty)."""
    if int(n) <= 0:
        return
    launcher(xp, name, int(n), tuple(args))


def count_static_oriented(xp, capacity: int, src, dst, lanes: int = 8):
    """Per-vertex triangle counts of the undirected graph under directed edges ``(src, dst)``, by
    ``tri_support``.

    Every directed edge is oriented from its endpoint of lower (degree, id) to
    the higher one, with the degree counted over the directed edges (in + out:
    a reciprocal pair counts twice, which changes the order, not the result -
    any total order finds every triangle exactly once; the degree only bounds
    the out-lists by O(sqrt(E))).  One sort of the oriented keys drops the
    reciprocal duplicates and gives the oriented CSR.  ``lanes`` (a power of two
    up to 32) threads share an edge.  Returns (counts, info) with info
    ``edges`` (undirected), ``searches`` (binary searches: the shorter list of
    every edge) and ``triangles``.
    """
    if lanes < 1 or lanes > 32 or lanes & (lanes - 1):
        raise ValueError("lanes must be a power of two in [1, 32]")
    src = xp.asarray(src).astype(np.int64)
    dst = xp.asarray(dst).astype(np.int64)
    keep = src != dst
    s, d = src[keep], dst[keep]
    deg = bincount(xp, s, capacity) + bincount(xp, d, capacity)
    first = (deg[s] < deg[d]) | ((deg[s] == deg[d]) & (s < d))
    okeys = unique_sorted(xp, (xp.where(first, s, d) << 32) | xp.where(first, d, s))
    m = int(okeys.shape[0])
    offsets = xp.searchsorted(okeys, xp.arange(capacity + 1, dtype=np.int64) << 32)
    rows = (okeys >> 32).astype(np.int32)
    cols = (okeys & LOW32).astype(np.int32)
    support = xp.zeros(m, dtype=np.uint32)
    shift = int(math.log2(lanes))
    launch(xp, "tri_support", m << shift, offsets, cols, rows, i64(m), i32(shift), support)
    sup = support.astype(np.int64)
    csum = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(sup)])
    counts = csum[offsets[1:]] - csum[offsets[:-1]] + bincount(xp, cols, capacity, weights=sup).astype(np.int64)
    counts //= 2                      # each triangle is on two of its vertex's edges
    out_deg = xp.diff(offsets)
    searches = xp.minimum(out_deg[rows], out_deg[cols]).astype(np.int64).sum()
    found3, searched = (int(x) for x in to_numpy(xp.stack([sup.sum(), searches])))     # one sync
    return counts, {"edges": m, "searches": searched, "triangles": found3 // 3}


class DeferredSymmetricIndex(SortedEdgeIndex):
    """The symmetric undirected index of directed edges ``(rows, cols)``, sorted on first use.

    The static count does not need it (:func:`count_static_oriented` sorts only
    the oriented edges); the incremental updates do, so its sort of both
    orientations moves to the first read of the index (an update or a
    checkpoint) instead of every static run.  The sort is counted in ``work``.
    """

    def __init__(self, xp, rows, cols, **kwargs):
        super().__init__(xp, None, **kwargs)
        self._edges = (rows, cols)

    @property
    def base(self):
        if self._edges is not None:
            xp = self.xp
            rows, cols = (xp.asarray(a).astype(np.int64) for a in self._edges)
            keep = rows != cols
            rows, cols = rows[keep], cols[keep]
            self._edges = None
            self._base = unique_sorted(xp, xp.concatenate([edge_keys(xp, rows, cols), edge_keys(xp, cols, rows)]))
            self.work += int(self._base.shape[0])
        return self._base

    @base.setter
    def base(self, value):
        self._base = value
        self._edges = None
