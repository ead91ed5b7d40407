"""Fused CUDA kernels for triangle counting (the GPU path of :mod:`algorithms.triangles`).

The array programs in :mod:`algorithms.triangles` stay the reference; these
kernels replace their memory- and launch-bound core on the GPU, where the
static form materialises every oriented wedge in global memory and the
incremental form every neighbour of the smaller endpoint:

* ``tri_hash_block`` / ``tri_hash_warp`` and the passes before them - the static
  count used by the job (:func:`count_static_hashed`): vertices relabelled by
  (degree, id) rank, one radix sort of the oriented keys, in-lists by atomic
  scatter, then every triangle u < v < w found once at its in-edge (u, v) of v
  by probing the suffix of N+(u) after v in a shared-memory hash table of N+(v)
  (block-wide tables for vertices of many out-edges, one per warp otherwise;
  tasks of up to ``per_task`` in-edges from a global counter);
* ``tri_support`` - the previous static count (kept as a second reference and
  the baseline of the benchmarks): the same degree-ordered
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

``tri_static`` and ``tri_changed`` search the elements of the *shorter* list in
the longer one (both lists are sorted).  The work of one edge is cut into items of at most ``chunk``
elements of the shorter list, so a hub edge is spread over many threads; a
thread finds its edge by a binary search on the running sum of item counts
(``item_ends``), as ``structures/graphvine_kernels.gv_walk`` does.  Within an
item the searched positions only grow, so each search starts where the last
ended.  Per-vertex counts are ``unsigned long long`` atomics: one per
triangle for ``w``, one per item for ``u`` and ``v``; the total goes through a
shared per-block sum and one global atomic per block.

The element-wise kernels use grid-stride loops; the hashed count indexes edges
with int32.  The source is one string, ``SOURCE``, so that
``tests/test_triangle_kernels.py`` can compile it with nvcc and run it serially
on the CPU behind a small host prelude (``tests/triangle_emulation.py``: a
block is one thread and its warp one lane).
"""
from __future__ import annotations

import math

import numpy as np

from vinestream.structures.array_ops import LOW32, bincount, edge_keys, row_ids, unique_sorted
from vinestream.structures.backend import count_launch, multiprocessors, to_numpy
from vinestream.structures.block_primitives import lower_bound, upper_bound
from vinestream.structures.raw_kernels import RawKernels, i32, i64

from .edge_index import SortedEdgeIndex

SOURCE = r"""
#define TRI_LOW32 0xFFFFFFFFLL
#ifndef TRI_GRID_LOOP
#define TRI_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif

@UPPER_BOUND@

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

@LOWER_BOUND@
// an item's hits close as many triangles at u and at v (w's were added one by one); returns hits.  ``one``: what
// a triangle adds to a corner's count, 1, or -1 as two's complement (an update's lost triangles, subtracted from
// the job's counts in place)
__device__ unsigned long long tri_close(unsigned long long hits, long long u, long long v,
                                        unsigned long long* counts, unsigned long long one)
{
    if (hits) {
        atomicAdd(&counts[u], hits * one);
        atomicAdd(&counts[v], hits * one);
    }
    return hits;
}

// key occurs in keys[0, n) (sorted)
__device__ bool tri_contains(const long long* keys, long long n, long long key)
{
    long long lo = tri_key_lower(keys, n, key);
    return lo < n && keys[lo] == key;
}

// triangle {u, v, w} is counted at its changed edge of smallest key: at changed[me] unless u-w or v-w is
// a changed edge of smaller key (which sits before position me of the sorted changed keys)
__device__ bool tri_owned(long long u, long long v, long long w, const long long* changed, long long me)
{
    long long mine = changed[me];
    long long k1 = u < w ? (u << 32) | w : (w << 32) | u;
    long long k2 = v < w ? (v << 32) | w : (w << 32) | v;
    return !((k1 < mine && tri_contains(changed, me, k1)) || (k2 < mine && tri_contains(changed, me, k2)));
}

// One item: every column w at positions [from, to) of the shorter list searched in the longer list
// [b0, b1).  A common w closes the triangle {u, v, w}; with changed != 0 it is counted only when
// no changed edge of smaller key than changed[me] (u-w or v-w) lies in it.  Adds ``one`` to counts[w]
// per counted triangle and returns how many were counted (the caller adds them to u and v).
template <typename T>
__device__ unsigned long long tri_scan(const T* list, long long from, long long to, long long b0,
                                       long long b1, long long u, long long v,
                                       const long long* changed, long long me,
                                       unsigned long long* counts, unsigned long long one)
{
    unsigned long long hits = 0;
    long long lo = b0;
    for (long long p = from; p < to && lo < b1; ++p) {
        long long w = tri_col(list, p);
        lo = tri_lower_bound(list, lo, b1, w);
        if (lo == b1) break;
        if (tri_col(list, lo) != w) continue;
        ++lo;                                          // the next w is larger
        if (changed != 0 && !tri_owned(u, v, w, changed, me)) continue;
        atomicAdd(&counts[w], one);
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
                                           u, v, (const long long*)0, 0, counts, 1ULL);
        mine += tri_close(hits, u, v, counts, 1ULL);
    }
    if (mine) atomicAdd(&block_hits, mine);
    __syncthreads();
    if (threadIdx.x == 0 && block_hits) atomicAdd(total, block_hits);
}

// Triangles through the changed undirected edges changed[i] = (u << 32) | v (sorted, distinct, all
// in keys).  keys: the sorted (row << 32) | col undirected adjacency, both orientations; N(u) is
// keys[u_start[i], u_start[i] + u_len[i]), likewise N(v).  Items as in tri_static.  Each triangle adds
// ``sign`` (1 or -1) to its three corners' counts: an update adds its gains and subtracts its losses in the
// job's counts, no vertex-sized array of its own.
extern "C" __global__
void tri_changed(const long long* keys, const long long* changed, const long long* u_start,
                 const long long* u_len, const long long* v_start, const long long* v_len,
                 const long long* item_ends, const long long nchanged, const long long chunk,
                 const long long nitems, unsigned long long* counts, unsigned long long* total,
                 const long long sign)
{
    const unsigned long long one = (unsigned long long)sign;
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
        unsigned long long hits = tri_scan(keys, from, to, b0, b1, u, v, changed, i, counts, one);
        mine += tri_close(hits, u, v, counts, one);
    }
    if (mine) atomicAdd(&block_hits, mine);
    __syncthreads();
    if (threadIdx.x == 0 && block_hits) atomicAdd(total, block_hits);
}

// key occurs in the sorted a[lo, hi)
__device__ bool tri_in_range(const long long* a, long long lo, long long hi, long long key)
{
    const long long end = hi;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (a[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo < end && a[lo] == key;
}

// tri_changed on an index with keys pending: a vertex's row is its range of base less its range of
// dead, plus its range of extra (the three sorted arrays of a SortedEdgeIndex), so nothing is
// compacted.  ranges[k * n + i], k = 0..11: base start and length, dead start and length, extra start
// and length of u = changed[i] >> 32, then the same six of v.  An item covers up to chunk positions of
// the shorter row's base-then-extra positions (dead ones skipped); each w found is searched in the
// longer row's three ranges.  Ownership, counts and sign as in tri_changed.
extern "C" __global__
void tri_changed_parts(const long long* base, const long long* dead, const long long* extra,
                       const long long* changed, const long long* ranges, const long long* item_ends,
                       const long long nchanged, const long long chunk, const long long nitems,
                       unsigned long long* counts, unsigned long long* total, const long long sign)
{
    const unsigned long long one = (unsigned long long)sign;
    __shared__ unsigned long long block_hits;
    if (threadIdx.x == 0) block_hits = 0;
    __syncthreads();
    unsigned long long mine = 0;
    const long long n = nchanged;
    TRI_GRID_LOOP(t, nitems) {
        long long i = tri_upper_bound(item_ends, nchanged, t);
        long long j = t - (i > 0 ? item_ends[i - 1] : 0);
        long long u = changed[i] >> 32, v = changed[i] & TRI_LOW32;
        // the shorter row by true size (base less dead, plus extra); its positions are base's then extra's
        long long size_u = ranges[1 * n + i] - ranges[3 * n + i] + ranges[5 * n + i];
        long long size_v = ranges[7 * n + i] - ranges[9 * n + i] + ranges[11 * n + i];
        long long len_u = ranges[1 * n + i] + ranges[5 * n + i];
        long long len_v = ranges[7 * n + i] + ranges[11 * n + i];
        int s = size_u <= size_v ? 0 : 6;              // the shorter row's six ranges start at s
        int l = 6 - s;                                  // the longer's
        long long other = s == 0 ? v : u;
        long long sb0 = ranges[(s + 0) * n + i], sbn = ranges[(s + 1) * n + i];
        long long sd0 = ranges[(s + 2) * n + i], sdn = ranges[(s + 3) * n + i];
        long long se0 = ranges[(s + 4) * n + i];
        long long lb0 = ranges[(l + 0) * n + i], lbn = ranges[(l + 1) * n + i];
        long long ld0 = ranges[(l + 2) * n + i], ldn = ranges[(l + 3) * n + i];
        long long le0 = ranges[(l + 4) * n + i], len_ = ranges[(l + 5) * n + i];
        long long from = j * chunk;
        long long to = from + chunk < (s == 0 ? len_u : len_v) ? from + chunk : (s == 0 ? len_u : len_v);
        unsigned long long hits = 0;
        for (long long p = from; p < to; ++p) {
            long long key = p < sbn ? base[sb0 + p] : extra[se0 + p - sbn];
            if (p < sbn && sdn > 0 && tri_in_range(dead, sd0, sd0 + sdn, key)) continue;
            long long w = key & TRI_LOW32;
            long long probe = (other << 32) | w;
            bool in = (tri_in_range(base, lb0, lb0 + lbn, probe)
                       && !(ldn > 0 && tri_in_range(dead, ld0, ld0 + ldn, probe)))
                      || (len_ > 0 && tri_in_range(extra, le0, le0 + len_, probe));
            if (!in) continue;
            if (!tri_owned(u, v, w, changed, i)) continue;
            atomicAdd(&counts[w], one);
            ++hits;
        }
        mine += tri_close(hits, u, v, counts, one);
    }
    if (mine) atomicAdd(&block_hits, mine);
    __syncthreads();
    if (threadIdx.x == 0 && block_hits) atomicAdd(total, block_hits);
}

// ---- the static count by hashed intersections (count_static_hashed) ---------------------------
// Vertices are relabelled by rank (degree, id); oriented edge u -> v has rank u < rank v, and the
// oriented CSR (offsets, cols, rows: int32) has every row sorted.  A triangle u < v < w is found
// once, at the in-edge (u, v) of v: w lies in N+(v) and in the suffix of N+(u) after v (the
// positions q + 1 .. end(u) - 1, q the position of v in N+(u)).  N+(v) goes into a shared-memory
// hash table (open addressing, linear probing, at least 2^table_shift slots per key) and every
// element of those suffixes is probed in it.  The hits of a table slot (its w) are counted in
// shared memory and flushed once per task, the hits of an in-edge (its u) once per in-edge, those
// of v once per task: no per-triangle global atomic.
#ifndef TRI_WARP
#define TRI_WARP 32
#endif
#ifndef TRI_BLOCK_LOOP
#define TRI_BLOCK_LOOP(i, n) for (long long i = threadIdx.x; i < (long long)(n); i += blockDim.x)
#endif
#ifndef TRI_DYNAMIC_SHARED
#define TRI_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#endif
#define TRI_EMPTY (-1)
#define TRI_FULL_MASK 0xffffffffu
#define TRI_NONE 0x7fffffffffffffffLL
// Atomic counters spread over copies: the counter of x for item i is copy ((i >> 8) & mask) of x
// (copies * n of them), so the updates of a hub (10^4-10^5 of them on R-MAT) form copies chains
// instead of one: same-address atomics serialise in L2.
#define TRI_COPY(i, mask, n, x) ((((i) >> 8) & (mask)) * (n) + (x))


// degrees over the directed edges, in + out (self-loops skipped), into copies of the counters
extern "C" __global__
void tri_degree(const int* src, const int* dst, const long long ne, const long long n, const int mask,
                int* deg)
{
    TRI_GRID_LOOP(i, ne) {
        int s = src[i], d = dst[i];
        if (s != d) {
            atomicAdd(&deg[TRI_COPY(i, mask, n, s)], 1);
            atomicAdd(&deg[TRI_COPY(i, mask, n, d)], 1);
        }
    }
}

// the row of every element of a CSR (offsets int64, n + 1 of them): 1 << lane_shift consecutive
// threads per row write its range
extern "C" __global__
void tri_csr_rows(const long long* offsets, const long long n, const int lane_shift, int* rows)
{
    TRI_GRID_LOOP(t, n << lane_shift) {
        long long r = t >> lane_shift, end = offsets[r + 1];
        for (long long p = offsets[r] + (t & ((1LL << lane_shift) - 1)); p < end; p += 1LL << lane_shift)
            rows[p] = (int)r;
    }
}

// the rank sort's keys: (degree << 32) | id, the degree summed over the copies
extern "C" __global__
void tri_rank_keys(const int* deg, const long long n, const int mask, long long* keys)
{
    TRI_GRID_LOOP(i, n) {
        long long d = 0;
        for (int c = 0; c <= mask; ++c) d += deg[c * n + i];
        keys[i] = (d << 32) | i;
    }
}

// rank[id] = position of id in the sorted (degree, id) keys
extern "C" __global__
void tri_rank(const long long* sorted_keys, const long long n, int* rank)
{
    TRI_GRID_LOOP(i, n) rank[sorted_keys[i] & TRI_LOW32] = (int)i;
}

// oriented key (lower rank << 32) | higher rank of every directed edge; TRI_NONE for a self-loop
extern "C" __global__
void tri_orient(const int* src, const int* dst, const int* rank, const long long ne, long long* keys)
{
    TRI_GRID_LOOP(i, ne) {
        int s = src[i], d = dst[i];
        long long a = rank[s], b = rank[d];
        keys[i] = s == d ? TRI_NONE : (a < b ? (a << 32) | b : (b << 32) | a);
    }
}

// 1 where sorted key i is an edge seen for the first time (drops the reciprocal pair's second copy)
extern "C" __global__
void tri_first(const long long* keys, const long long ne, int* flags)
{
    TRI_GRID_LOOP(i, ne) flags[i] = keys[i] != TRI_NONE && (i == 0 || keys[i - 1] != keys[i]);
}

// The oriented CSR's edges from the sorted keys: first occurrence i goes to k = pos[i] - 1 (pos the
// inclusive sum of the flags)
extern "C" __global__
void tri_compact(const long long* keys, const int* flags, const int* pos, const long long ne, int* rows,
                 int* cols)
{
    TRI_GRID_LOOP(i, ne) {
        if (flags[i]) {
            long long key = keys[i];
            rows[pos[i] - 1] = (int)(key >> 32);
            cols[pos[i] - 1] = (int)(key & TRI_LOW32);
        }
    }
}

// offsets[r], r in [0, n]: the edges kept before the first key of row >= r (a binary search in the
// sorted keys; self-loops sort last), so no thread walks a run of empty rows
extern "C" __global__
void tri_offsets(const long long* keys, const int* pos, const long long ne, const long long n, int* offsets)
{
    TRI_GRID_LOOP(r, n + 1) {
        long long lo = tri_key_lower(keys, ne, r << 32);
        offsets[r] = lo == 0 ? 0 : pos[lo - 1];
    }
}

// Oriented edge q = (u, v) is an in-edge of v when v has out-edges and v is not the last of N+(u)
// (its suffix is not empty).  fill == 0: counts them in the copies cnt; else q goes to v's in-list
// at in_off[v] + cnt[copy]++ (cnt then holds each copy's start within v: tri_in_sums).  m = *mcount
// edges (the launch covers an upper bound).
extern "C" __global__
void tri_in_edges(const int* offsets, const int* rows, const int* cols, const int* mcount,
                  const long long ne, const long long n, const int mask, const int fill,
                  const int* in_off, int* cnt, int* in_q)
{
    const long long m = *mcount;
    TRI_GRID_LOOP(q, ne) {
        if (q >= m) continue;
        int u = rows[q], v = cols[q];
        if (offsets[v + 1] == offsets[v] || q + 1 == offsets[u + 1]) continue;
        int at = atomicAdd(&cnt[TRI_COPY(q, mask, n, v)], 1);
        if (fill) in_q[in_off[v] + at] = (int)q;
    }
}

// per vertex: in_cnt[v] = the sum of its copies, each copy replaced by its exclusive start within v
extern "C" __global__
void tri_in_sums(int* cnt, const long long n, const int mask, int* in_cnt)
{
    TRI_GRID_LOOP(v, n) {
        int run = 0;
        for (int c = 0; c <= mask; ++c) {
            int x = cnt[c * n + v];
            cnt[c * n + v] = run;
            run += x;
        }
        in_cnt[v] = run;
    }
}

// tasks per vertex v: ceil(in-degree / per_task) in the block-table list when v has more than
// light out-edges, else in the warp-table list
extern "C" __global__
void tri_task_counts(const int* offsets, const int* in_off, const long long n, const int light,
                     const int per_block_task, const int per_warp_task, int* block_tasks, int* warp_tasks)
{
    TRI_GRID_LOOP(v, n) {
        int d = offsets[v + 1] - offsets[v], c = in_off[v + 1] - in_off[v];
        bool heavy = d > light;
        block_tasks[v] = heavy ? (c + per_block_task - 1) / per_block_task : 0;
        warp_tasks[v] = heavy ? 0 : (c + per_warp_task - 1) / per_warp_task;
    }
}

// the task list: (v << 32) | first in-edge index, per_task in-edges each; task_off exclusive sums
extern "C" __global__
void tri_task_fill(const int* in_off, const int* task_off, const long long n, const int per_task,
                   long long* tasks)
{
    TRI_GRID_LOOP(v, n) {
        long long j = in_off[v];
        for (int t = task_off[v]; t < task_off[v + 1]; ++t, j += per_task)
            tasks[t] = ((long long)v << 32) | j;
    }
}

// log2 of the table size for d keys: at least 2^shift slots per key, at least 32 slots
__device__ int tri_table_bits(int d, int shift)
{
    int b = 5;
    while ((1LL << b) < ((long long)d << shift)) ++b;
    return b;
}

__device__ unsigned int tri_slot(int w, int bits)
{
    return ((unsigned int)w * 2654435761u) >> (32 - bits);
}

// insert w (the keys are distinct) into the table of 1 << bits slots
__device__ void tri_insert(int* keys, int bits, int w)
{
    unsigned int mask = (1u << bits) - 1, s = tri_slot(w, bits);
    while (atomicCAS(&keys[s], TRI_EMPTY, w) != TRI_EMPTY) s = (s + 1) & mask;
}

// the slot of w, or -1
__device__ int tri_find(const int* keys, int bits, int w)
{
    unsigned int mask = (1u << bits) - 1, s = tri_slot(w, bits);
    for (;;) {
        int k = keys[s];
        if (k == w) return (int)s;
        if (k == TRI_EMPTY) return -1;
        s = (s + 1) & mask;
    }
}

__device__ unsigned int tri_hit(const int* keys, int* cnt, int bits, int w)
{
    int s = tri_find(keys, bits, w);
    if (s < 0) return 0;
    atomicAdd(&cnt[s], 1);
    return 1;
}

// Is column w in N+(v)?  Its slot in v's table (bits >= 0: hits counted in cnt) or, for a v too
// large for a table, a binary search in N+(v) = cols[v0, v1) (hits counted in counts[w]).
__device__ unsigned int tri_member(const int* cols, const int* keys, int* cnt, int bits, long long v0,
                                   long long v1, unsigned long long* counts, int w)
{
    if (bits >= 0) {
        int s = tri_find(keys, bits, w);
        if (s < 0) return 0;
        atomicAdd(&cnt[s], 1);
        return 1;
    }
    long long lo = v0, hi = v1;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (cols[mid] < w) lo = mid + 1; else hi = mid;
    }
    if (lo == v1 || cols[lo] != w) return 0;
    atomicAdd(&counts[w], 1ULL);
    return 1;
}

__device__ unsigned int tri_warp_sum(unsigned int x)
{
    for (int o = TRI_WARP / 2; o > 0; o >>= 1) x += __shfl_xor_sync(TRI_FULL_MASK, x, o);
    return x;
}

// One warp: the in-edges [ja, jb) of v, grab (<= TRI_WARP) at a time.  Lane i loads the i-th in-edge
// of a batch (q, u and its suffix length); a warp scan of the lengths concatenates the batch's
// suffixes, and the lanes stride over that concatenation (each walks forward through the batch's
// ends in scratch), so short suffixes do not leave lanes idle.  A lane's hits go to its in-edge's
// counter in scratch when it moves to the next in-edge; each in-edge's total is added to counts[u]
// once.  Returns the triangles of all of them (every lane); probes += suffix elements (lane 0).
// scratch: 4 * TRI_WARP ints of this warp.
__device__ unsigned long long tri_warp_edges(const int* offsets, const int* rows, const int* cols,
                                             const int* in_q, long long ja, long long jb, int grab,
                                             const int* keys, int* cnt, int bits, long long v0, long long v1,
                                             unsigned long long* counts, int lane, int* scratch,
                                             unsigned long long* probes)
{
    int* s_first = scratch;                  // item t of in-edge k is cols[s_first[k] + t]
    int* s_end = scratch + TRI_WARP;         // inclusive end of in-edge k's items
    int* s_u = scratch + 2 * TRI_WARP;
    int* s_hits = scratch + 3 * TRI_WARP;
    unsigned long long found = 0;
    for (long long base = ja; base < jb; base += grab) {
        long long j = base + lane;
        int q = 0, u = 0, len = 0;
        if (lane < grab && j < jb) {
            q = in_q[j];
            u = rows[q];
            len = offsets[u + 1] - q - 1;
        }
        int end = len;
        for (int o = 1; o < TRI_WARP; o <<= 1) {
            int x = __shfl_up_sync(TRI_FULL_MASK, end, o);
            if (lane >= o) end += x;
        }
        const int total = __shfl_sync(TRI_FULL_MASK, end, TRI_WARP - 1);
        s_first[lane] = q + 1 - (end - len);
        s_end[lane] = end;
        s_u[lane] = u;
        s_hits[lane] = 0;
        __syncwarp();
        int k = 0;
        unsigned int mine = 0;
        for (int t = lane; t < total; t += TRI_WARP) {
            if (s_end[k] <= t) {                 // past in-edge k: its hits so far go to scratch
                if (mine) atomicAdd(&s_hits[k], (int)mine);
                mine = 0;
                do ++k; while (s_end[k] <= t);
            }
            mine += tri_member(cols, keys, cnt, bits, v0, v1, counts, cols[s_first[k] + t]);
        }
        if (mine) atomicAdd(&s_hits[k], (int)mine);
        __syncwarp();
        const int h = s_hits[lane];
        if (h) atomicAdd(&counts[s_u[lane]], (unsigned long long)h);
        found += tri_warp_sum((unsigned int)h);
        if (lane == 0) *probes += (unsigned long long)total;
        __syncwarp();                            // the next batch rewrites scratch
    }
    return found;
}

// Tasks of vertices with many out-edges: one block per task (v, per_task in-edges of v), N+(v) in a
// block-wide table of up to 1 << slot_bits slots, the warps taking grab in-edges at a time (dynamic
// shared memory: 4 * TRI_WARP ints of scratch per warp, then 2 << slot_bits ints of table).
// Blocks take tasks from next_task until none is left.
// result[0] += triangles, result[1] += suffix elements probed.
extern "C" __global__
void tri_hash_block(const int* offsets, const int* rows, const int* cols, const int* in_off,
                    const int* in_q, const long long* tasks, const int* ntasks_at, const int per_task,
                    const int want_grab, const int slot_bits, const int table_shift, int* next_task,
                    unsigned long long* counts, unsigned long long* result)
{
    TRI_DYNAMIC_SHARED(int, smem);
    int* scratch = smem + (threadIdx.x / TRI_WARP) * 4 * TRI_WARP;
    int* keys = smem + (blockDim.x / TRI_WARP) * 4 * TRI_WARP;
    int* cnt = keys + (1 << slot_bits);
    __shared__ long long s_task;
    __shared__ int s_next;
    __shared__ unsigned long long s_found;
    const long long ntasks = *ntasks_at;
    const int lane = threadIdx.x % TRI_WARP;
    const int grab = want_grab < TRI_WARP ? want_grab : TRI_WARP;
    unsigned long long mine = 0, probes = 0;
    for (;;) {
        if (threadIdx.x == 0) {
            int t = atomicAdd(next_task, 1);
            s_task = t < ntasks ? tasks[t] : -1;
            s_found = 0;
        }
        __syncthreads();
        const long long task = s_task;
        if (task < 0) break;
        const int v = (int)(task >> 32);
        const long long j0 = task & TRI_LOW32;
        const long long j1 = j0 + per_task < in_off[v + 1] ? j0 + per_task : in_off[v + 1];
        const long long v0 = offsets[v], v1 = offsets[v + 1];
        int bits = tri_table_bits((int)(v1 - v0), table_shift);
        if (bits > slot_bits) bits = -1;                 // too many keys: binary searches instead
        if (threadIdx.x == 0) s_next = (int)j0;
        if (bits >= 0) {
            TRI_BLOCK_LOOP(i, 1 << bits) {
                keys[i] = TRI_EMPTY;
                cnt[i] = 0;
            }
        }
        __syncthreads();
        if (bits >= 0) {
            TRI_BLOCK_LOOP(i, v1 - v0) tri_insert(keys, bits, cols[v0 + i]);
        }
        __syncthreads();
        unsigned long long found = 0;
        for (;;) {
            int j = 0;
            if (lane == 0) j = atomicAdd(&s_next, grab);
            j = __shfl_sync(TRI_FULL_MASK, j, 0);
            if (j >= j1) break;
            long long jb = j + grab < j1 ? j + grab : j1;
            found += tri_warp_edges(offsets, rows, cols, in_q, j, jb, grab, keys, cnt, bits, v0, v1, counts,
                                    lane, scratch, &probes);
        }
        if (lane == 0 && found) atomicAdd(&s_found, found);
        __syncthreads();
        if (bits >= 0) {
            TRI_BLOCK_LOOP(i, 1 << bits) {
                if (cnt[i]) atomicAdd(&counts[keys[i]], (unsigned long long)cnt[i]);
            }
        }
        if (threadIdx.x == 0 && s_found) {
            atomicAdd(&counts[v], s_found);
            mine += s_found;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0 && mine) atomicAdd(&result[0], mine);
    if (lane == 0 && probes) atomicAdd(&result[1], probes);
}

// Tasks of vertices with few out-edges: one warp per task, N+(v) in the warp's own table of
// 1 << slot_bits slots (dynamic shared memory: 4 * TRI_WARP + (2 << slot_bits) ints per warp).
extern "C" __global__
void tri_hash_warp(const int* offsets, const int* rows, const int* cols, const int* in_off,
                   const int* in_q, const long long* tasks, const int* ntasks_at, const int per_task,
                   const int want_grab, const int slot_bits, const int table_shift, int* next_task,
                   unsigned long long* counts, unsigned long long* result)
{
    TRI_DYNAMIC_SHARED(int, smem);
    const int lane = threadIdx.x % TRI_WARP;
    int* scratch = smem + (long long)(threadIdx.x / TRI_WARP) * (4 * TRI_WARP + (2 << slot_bits));
    int* keys = scratch + 4 * TRI_WARP;
    int* cnt = keys + (1 << slot_bits);
    const long long ntasks = *ntasks_at;
    const int grab = want_grab < TRI_WARP ? want_grab : TRI_WARP;
    unsigned long long mine = 0, probes = 0;
    for (;;) {
        int t = 0;
        if (lane == 0) t = atomicAdd(next_task, 1);
        t = __shfl_sync(TRI_FULL_MASK, t, 0);
        if (t >= ntasks) break;
        const long long task = tasks[t];
        const int v = (int)(task >> 32);
        const long long j0 = task & TRI_LOW32;
        const long long j1 = j0 + per_task < in_off[v + 1] ? j0 + per_task : in_off[v + 1];
        const long long v0 = offsets[v], v1 = offsets[v + 1];
        int bits = tri_table_bits((int)(v1 - v0), table_shift);
        if (bits > slot_bits) bits = -1;
        if (bits >= 0) {
            for (int i = lane; i < (1 << bits); i += TRI_WARP) {
                keys[i] = TRI_EMPTY;
                cnt[i] = 0;
            }
            __syncwarp();
            for (long long i = lane; i < v1 - v0; i += TRI_WARP) tri_insert(keys, bits, cols[v0 + i]);
            __syncwarp();
        }
        unsigned long long found = tri_warp_edges(offsets, rows, cols, in_q, j0, j1, grab, keys, cnt, bits,
                                                  v0, v1, counts, lane, scratch, &probes);
        __syncwarp();
        if (bits >= 0) {
            for (int i = lane; i < (1 << bits); i += TRI_WARP) {
                if (cnt[i]) atomicAdd(&counts[keys[i]], (unsigned long long)cnt[i]);
            }
        }
        if (lane == 0 && found) {
            atomicAdd(&counts[v], found);
            mine += found;
        }
        __syncwarp();
    }
    if (lane == 0 && mine) atomicAdd(&result[0], mine);
    if (lane == 0 && probes) atomicAdd(&result[1], probes);
}
""".replace("@UPPER_BOUND@", upper_bound("tri_upper_bound")).replace("@LOWER_BOUND@", lower_bound("tri_key_lower"))

KERNELS = ("tri_support", "tri_static", "tri_changed", "tri_changed_parts", "tri_csr_rows", "tri_degree",
           "tri_rank_keys", "tri_rank",
           "tri_orient", "tri_first", "tri_compact", "tri_offsets", "tri_in_edges", "tri_in_sums", "tri_task_counts",
           "tri_task_fill", "tri_hash_block", "tri_hash_warp")

_kernels = RawKernels(SOURCE, "triangle")


#: the launchers in use; tests swap in a serial host emulation of the same source
launcher = _kernels.launch
block_launcher = _kernels.launch_blocks

#: threads per block of the hashed count's kernels (whole warps)
HASH_THREADS = 256


def launch(xp, name: str, n: int, *args) -> None:
    """Run kernel ``name`` over ``n`` items; does nothing when ``n`` is 0 (arrays may be empty)."""
    if int(n) <= 0:
        return
    launcher(xp, name, int(n), tuple(args))


def launch_blocks(xp, name: str, grid: int, block: int, args, shared_mem: int = 0) -> None:
    """Run block-level kernel ``name`` on ``grid`` blocks of ``block`` threads (counted as one launch)."""
    count_launch(name)
    block_launcher(xp, name, int(grid), int(block), tuple(args), int(shared_mem))


def _table_bits(keys: int, shift: int) -> int:
    """``tri_table_bits``: log2 of the slots for ``keys`` keys, at least ``2**shift`` per key and 32."""
    b = 5
    while (1 << b) < (keys << shift):
        b += 1
    return b


def count_static_hashed(xp, capacity: int, src=None, dst=None, *, offsets=None, light: int = 32,
                        per_block_task: int = 1024, per_warp_task: int = 64, grab: int = 8,
                        table_shift: int = 2, block_slot_bits: int = 12, blocks_per_sm: int = 8):
    """Per-vertex triangle counts of the undirected graph under directed edges ``(src, dst)`` (or
    the CSR ``offsets``, ``dst``: ``src`` is then its rows), by hashed intersections.

    The forward algorithm of Schank and Wagner with the GPU scheme of TRUST (Pandey
    et al., "TRUST: Triangle Counting Reloaded on GPUs", IEEE TPDS 2021) and Hu et
    al.'s hash tables for the intersections:

    * vertices are relabelled by rank, the order of (degree, id) with the degree
      counted over the directed edges (a reciprocal pair counts twice: any total order
      counts every triangle once; the degree bounds the out-lists by sqrt(2E));
    * one radix sort of the packed keys ``(rank u << 32) | rank v``, u the lower,
      gives the oriented CSR with sorted rows; a neighbour compare drops the second
      copy of a reciprocal pair (and self-loops sort last and go too);
    * triangle u < v < w is counted once, at its in-edge (u, v) of v: w is in N+(v)
      and in the suffix of N+(u) after v.  Each in-edge's suffix is probed in a
      shared-memory hash table of N+(v) -- one block per task of ``per_block_task``
      in-edges where v has more than ``light`` out-edges (a block-wide table of up to
      ``2**block_slot_bits`` slots; past that, binary searches in N+(v)), one warp
      per task of ``per_warp_task`` in-edges otherwise (a table per warp); tasks
      are taken from a global counter, so R-MAT's hubs (in-lists of 10^4-10^5
      in-edges) spread over many blocks.  ``table_shift``: the tables have at
      least ``2**table_shift`` slots per key.

    The hits of a table slot (w), of an in-edge (u) and of a task (v) are summed in
    shared memory or registers and added once each, and no host read happens
    before the result's.  Returns (counts int64 by input id, info) with info
    ``edges`` (undirected), ``probes`` (suffix elements probed) and ``triangles``.
    """
    n = int(capacity)
    ne = int(dst.shape[0])
    if ne >= 2**31 - (1 << 20) or n >= 2**31:
        raise ValueError("the hashed count indexes edges and vertices with int32")
    warps = HASH_THREADS // 32
    warp_bits = _table_bits(light, table_shift)
    block_shared = warps * 4 * 32 * 4 + (8 << block_slot_bits)         # scratch, then the table
    warp_shared = warps * (4 * 32 * 4 + (8 << warp_bits))
    if (not 0 <= light <= 256 or min(per_block_task, per_warp_task) < 1 or not 1 <= grab <= 32
            or not 5 <= block_slot_bits <= 12 or max(block_shared, warp_shared) > 48 << 10):
        raise ValueError("light in [0, 256], tasks of at least one in-edge, grab in [1, 32], block tables "
                         "of 2**5..2**12 slots, shared memory within 48 KiB")
    if ne == 0:
        return xp.zeros(n, dtype=np.int64), {"edges": 0, "probes": 0, "triangles": 0}
    dst = xp.asarray(dst).astype(np.int32, copy=False)
    # the int32 scratch in one allocation (a small graph's count is host-bound, ~3-5 us an allocation): views
    # of it, in this order, for the rows of the CSR's edges (when built here), rank, the first-edge flags and
    # their sums, the oriented rows and columns, their offsets, the in-edge counts and list, the task counts
    scratch = _carve(xp, np.int32, ([ne] if src is None else []) + [n, ne, ne, ne, ne, n + 1, n, ne, n, n])
    if src is None:
        src = scratch.pop(0)
        rows_n = int(offsets.shape[0]) - 1
        launch(xp, "tri_csr_rows", rows_n << 5, xp.asarray(offsets).astype(np.int64, copy=False), i64(rows_n),
               i32(5), src)
    else:
        src = xp.asarray(src).astype(np.int32, copy=False)
    copies = 16 if n <= 1 << 22 else 4 if n <= 1 << 24 else 1    # atomic counters per vertex
    # what starts at zero, in one allocation and one memset (a small graph's count is host-bound: each
    # CuPy call is ~5-10 us of it): the degree copies (reused for the in-edge counts), in_off, the two
    # task lists' offsets and their task counters; and the counts with the results (found, probes, edges)
    zeros = xp.zeros(copies * n + 3 * (n + 1) + 2, dtype=np.int32)
    deg = zeros[: copies * n]
    in_off = zeros[copies * n: copies * n + n + 1]
    task_offs = (zeros[copies * n + n + 1: copies * n + 2 * (n + 1)],
                 zeros[copies * n + 2 * (n + 1): copies * n + 3 * (n + 1)])
    next_task = zeros[copies * n + 3 * (n + 1):]
    counts_and_result = xp.zeros(n + 3, dtype=np.uint64)
    counts, result = counts_and_result[:n], counts_and_result[n:]
    launch(xp, "tri_degree", ne, src, dst, i64(ne), i64(n), i32(copies - 1), deg)
    rank_keys = xp.empty(n, dtype=np.int64)
    launch(xp, "tri_rank_keys", n, deg, i64(n), i32(copies - 1), rank_keys)
    rank_keys.sort()
    rank, flags, pos, rows, cols, out_off, in_cnt, in_q, block_n, warp_n = scratch
    launch(xp, "tri_rank", n, rank_keys, i64(n), rank)
    keys = xp.empty(ne, dtype=np.int64)
    launch(xp, "tri_orient", ne, src, dst, rank, i64(ne), keys)
    keys.sort()                                          # one radix sort: the oriented CSR
    launch(xp, "tri_first", ne, keys, i64(ne), flags)
    xp.cumsum(flags, dtype=np.int32, out=pos)
    launch(xp, "tri_compact", ne, keys, flags, pos, i64(ne), rows, cols)
    launch(xp, "tri_offsets", n + 1, keys, pos, i64(ne), i64(n), out_off)
    mcount = pos[ne - 1:]                                # the edge count stays on the device
    cnt = deg                                            # reused: copies * n counters
    cnt.fill(0)
    launch(xp, "tri_in_edges", ne, out_off, rows, cols, mcount, i64(ne), i64(n), i32(copies - 1), i32(0),
           out_off, cnt, rows)
    launch(xp, "tri_in_sums", n, cnt, i64(n), i32(copies - 1), in_cnt)
    xp.cumsum(in_cnt, dtype=np.int32, out=in_off[1:])
    launch(xp, "tri_in_edges", ne, out_off, rows, cols, mcount, i64(ne), i64(n), i32(copies - 1), i32(1),
           in_off, cnt, in_q)
    launch(xp, "tri_task_counts", n, out_off, in_off, i64(n), i32(light), i32(per_block_task),
           i32(per_warp_task), block_n, warp_n)
    grid = multiprocessors(xp) * blocks_per_sm
    for i, (name, per, bits, shared, task_n) in enumerate((
            ("tri_hash_block", per_block_task, block_slot_bits, block_shared, block_n),
            ("tri_hash_warp", per_warp_task, warp_bits, warp_shared, warp_n))):
        task_off = task_offs[i]
        xp.cumsum(task_n, dtype=np.int32, out=task_off[1:])
        tasks = xp.empty(ne // per + n + 1, dtype=np.int64)
        launch(xp, "tri_task_fill", n, in_off, task_off, i64(n), i32(per), tasks)
        launch_blocks(xp, name, grid, HASH_THREADS,
                      (out_off, rows, cols, in_off, in_q, tasks, task_off[n:], i32(per), i32(grab), i32(bits),
                       i32(table_shift), next_task[i:i + 1], counts, result), shared)
    by_id = counts.view(np.int64)[rank]                 # back from ranks to the input's ids (counts < 2**63)
    result[2:] = mcount                                 # one read: (found, probes, edges)
    found, probes, m = (int(x) for x in to_numpy(result))
    return by_id, {"edges": m, "probes": probes, "triangles": found}


def _carve(xp, dtype, sizes) -> list:
    """Consecutive views of the given sizes into one new uninitialised array (one allocation)."""
    buf = xp.empty(int(sum(sizes)), dtype=dtype)
    out, at = [], 0
    for size in sizes:
        out.append(buf[at: at + size])
        at += size
    return out


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

    def __init__(self, xp, rows, cols, offsets=None, **kwargs):
        super().__init__(xp, None, **kwargs)
        self._edges = (rows, cols)
        self._offsets = offsets          # rows None: the CSR's, found on first use

    @property
    def base(self):
        if self._edges is not None:
            xp = self.xp
            rows, cols = self._edges
            if rows is None:
                rows = row_ids(xp, self._offsets, int(cols.shape[0]))
            rows, cols = (xp.asarray(a).astype(np.int64) for a in (rows, cols))
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
