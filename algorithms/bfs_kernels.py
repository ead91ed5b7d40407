"""Direction-optimizing BFS as fused CUDA kernels (the GPU path of static BFS).

Beamer, Asanović and Patterson, "Direction-Optimizing Breadth-First Search"
(SC 2012): a level-synchronous BFS that expands small frontiers **top-down**
(every frontier vertex claims its unvisited out-neighbours) and large ones
**bottom-up** (every unvisited vertex looks for a parent among its
in-neighbours and stops at the first), switching by the paper's heuristics:

* top-down -> bottom-up when ``m_f > m_u / alpha`` (``m_f``: out-edges of the
  frontier, ``m_u``: out-edges of the vertices not yet reached; alpha = 14);
* bottom-up -> top-down when ``n_f < n / beta`` (``n_f``: frontier vertices;
  beta = 24).

Kernels (grid-stride loops, one source string so that tests compile it with
nvcc and run it serially on the host behind a small prelude):

* ``bfs_top_down`` - edge-balanced: item ``t`` is the ``t``-th out-edge of the
  frontier, found by a binary search on the running sum of frontier degrees
  (hubs are spread over many threads); a vertex is claimed by ``atomicCAS`` on
  its distance and appended to the next queue by a warp-aggregated atomic;
* ``bfs_bottom_up`` - one thread per vertex; a frontier vertex is one whose
  distance is the current level (the distance array fits in an H100's L2, so no
  separate bitmap), and a vertex discovered in this level is never mistaken
  for a frontier vertex since it is written ``level + 1``;
* ``bfs_collect`` - the frontier queue rebuilt from distances when the search
  turns back to top-down;
* ``bfs_parents`` - parents after the search, as the array program defines
  them (the smallest in-neighbour one hop closer): items of at most
  ``PARENT_CHUNK`` in-edges of one vertex, an ``atomicMin`` per item, so a hub's
  in-list is spread over many threads.

Columns are read through ``bfs_col``: a plain int32 column array, or the
Fixed-Length bit-packed cells of :class:`algorithms.compressed.FixedLengthCSR`
decoded in the kernel (two 32-bit loads, a shift and a mask) — the compressed
graph is traversed directly, never decoded into a copy.

Per level the host reads three counters (one device->host transfer): the
vertices found, their out-degree sum, and nothing else; the direction is
decided from those.  The array program (:func:`algorithms.bfs.bfs_arrays`)
stays the reference: ``tests/test_bfs_kernels.py`` runs these kernels through
a host emulation against it, and ``tests/test_bfs_fused_gpu.py`` on a GPU.
"""
from __future__ import annotations

import numpy as np

from vinestream.structures.raw_kernels import RawKernels, i32, i64

#: in-edges per item of the parent pass
PARENT_CHUNK = 256
ALPHA = 14.0
BETA = 24.0

SOURCE = r"""
#ifndef BFS_GRID_LOOP
#define BFS_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif
#ifndef BFS_LANE
#define BFS_LANE() ((int)(threadIdx.x & 31))
#endif

// smallest i in [0, n) with ends[i] > t (ends non-decreasing)
__device__ long long bfs_upper_bound(const long long* ends, long long n, long long t)
{
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (ends[mid] > t) hi = mid; else lo = mid + 1;
    }
    return lo;
}

// column at position p: plain int32 columns (bits == 0) or Fixed-Length packed cells
__device__ int bfs_col(const int* cols, const unsigned int* cells, int bits, long long p)
{
    if (bits == 0) return cols[p];
    long long bit = p * (long long)bits;
    long long c = bit >> 5;
    unsigned long long word = ((unsigned long long)cells[c + 1] << 32) | (unsigned long long)cells[c];
    return (int)((word >> (bit & 31)) & ((1ULL << bits) - 1ULL));
}

// one shared sum per block, one global atomic per block and counter
__device__ void bfs_block_add(unsigned long long* stats, unsigned long long a, unsigned long long b)
{
    __shared__ unsigned long long sa, sb;
    if (threadIdx.x == 0) { sa = 0; sb = 0; }
    __syncthreads();
    if (a) atomicAdd(&sa, a);
    if (b) atomicAdd(&sb, b);
    __syncthreads();
    if (threadIdx.x == 0) {
        if (sa) atomicAdd(&stats[0], sa);
        if (sb) atomicAdd(&stats[1], sb);
    }
}

// append v to queue when take: one atomic per warp (stats[2] is the queue length)
__device__ void bfs_append(int* queue, unsigned long long* stats, bool take, int v)
{
    unsigned int mask = __activemask();
    unsigned int votes = __ballot_sync(mask, take);
    if (votes == 0) return;
    int lane = BFS_LANE();
    int leader = __ffs(votes) - 1;
    unsigned long long base = 0;
    if (lane == leader) base = atomicAdd(&stats[2], (unsigned long long)__popc(votes));
    base = __shfl_sync(mask, base, leader);
    if (take) queue[base + __popc(votes & ((1u << lane) - 1u))] = v;
}

// Top-down: item t is out-edge t of the frontier (ends: inclusive running sum of frontier degrees).
extern "C" __global__
void bfs_top_down(const long long* off, const int* cols, const unsigned int* cells, int bits,
                  const int* frontier, long long fsize, const long long* ends, long long total,
                  int* dist, int level, int* next, unsigned long long* stats)
{
    unsigned long long found = 0, edges = 0;
    BFS_GRID_LOOP(t, total) {
        long long i = bfs_upper_bound(ends, fsize, t);
        long long u = frontier[i];
        long long pos = off[u] + t - (i ? ends[i - 1] : 0);
        int v = bfs_col(cols, cells, bits, pos);
        bool take = dist[v] == -1 && atomicCAS(&dist[v], -1, level + 1) == -1;
        if (take) { ++found; edges += (unsigned long long)(off[v + 1] - off[v]); }
        bfs_append(next, stats, take, v);
    }
    bfs_block_add(stats, found, edges);
}

// Bottom-up: every unvisited vertex looks for an in-neighbour at distance level, stops at the first.
extern "C" __global__
void bfs_bottom_up(const long long* in_off, const int* in_cols, const unsigned int* in_cells, int in_bits,
                   const long long* out_off, int* dist, int level, long long n, unsigned long long* stats)
{
    unsigned long long found = 0, edges = 0;
    BFS_GRID_LOOP(v, n) {
        if (dist[v] != -1) continue;
        long long end = in_off[v + 1];
        for (long long p = in_off[v]; p < end; ++p) {
            int u = bfs_col(in_cols, in_cells, in_bits, p);
            if (dist[u] == level) {
                dist[v] = level + 1;
                ++found;
                edges += (unsigned long long)(out_off[v + 1] - out_off[v]);
                break;
            }
        }
    }
    bfs_block_add(stats, found, edges);
}

// The queue of vertices at distance level (turning back to top-down).
extern "C" __global__
void bfs_collect(const int* dist, int level, long long n, int* queue, unsigned long long* stats)
{
    BFS_GRID_LOOP(v, n) {
        bfs_append(queue, stats, dist[v] == level, (int)v);
    }
}

// Parents: item t covers in-edges [j * chunk, (j + 1) * chunk) of vertex v = upper_bound(item_ends, t);
// parent[v] = min in-neighbour u with dist[u] == dist[v] - 1 (parent starts at 0x7fffffff).
extern "C" __global__
void bfs_parents(const long long* in_off, const int* in_cols, const unsigned int* in_cells, int in_bits,
                 const long long* item_ends, long long n, long long items, long long chunk,
                 const int* dist, int* parent)
{
    BFS_GRID_LOOP(t, items) {
        long long v = bfs_upper_bound(item_ends, n, t);
        int d = dist[v];
        if (d <= 0) continue;
        long long j = t - (v ? item_ends[v - 1] : 0);
        long long from = in_off[v] + j * chunk;
        long long to = from + chunk < in_off[v + 1] ? from + chunk : in_off[v + 1];
        int best = 0x7fffffff;
        for (long long p = from; p < to; ++p) {
            int u = bfs_col(in_cols, in_cells, in_bits, p);
            if (dist[u] == d - 1 && u < best) best = u;
        }
        if (best != 0x7fffffff) atomicMin(&parent[v], best);
    }
}

// Parents when every in-list is sorted ascending: the first in-neighbour one hop closer is the smallest.
extern "C" __global__
void bfs_parents_sorted(const long long* in_off, const int* in_cols, const unsigned int* in_cells, int in_bits,
                        long long n, const int* dist, int* parent)
{
    BFS_GRID_LOOP(v, n) {
        int d = dist[v];
        if (d <= 0) continue;
        long long end = in_off[v + 1];
        for (long long p = in_off[v]; p < end; ++p) {
            int u = bfs_col(in_cols, in_cells, in_bits, p);
            if (dist[u] == d - 1) { parent[v] = u; break; }
        }
    }
}
"""

KERNELS = ("bfs_top_down", "bfs_bottom_up", "bfs_collect", "bfs_parents", "bfs_parents_sorted")
_kernels = RawKernels(SOURCE, "BFS")


def launcher(xp, name: str, n: int, args: tuple) -> None:
    """Compile (once) and launch kernel ``name`` over ``n`` items (tests replace this)."""
    _kernels.launch(xp, name, n, args)


def _columns(xp, graph):
    """(cols, cells, bits) of a plain CSR (bits 0) or a FixedLengthCSR."""
    cells = getattr(graph, "cells", None)
    if cells is None:
        return graph.cols, xp.zeros(2, dtype=np.uint32), 0
    return xp.zeros(1, dtype=np.int32), cells, int(graph.bits)


def bfs_direction_optimizing(xp, out_graph, in_graph, sources, capacity: int, *, parents: bool = True,
                             sorted_rows: bool = False, alpha: float = ALPHA, beta: float = BETA, launch=None):
    """Static BFS by the fused kernels: ``(dist, parent, levels, info)``.

    ``out_graph`` / ``in_graph``: the out- and in-adjacency (``CSR`` or ``FixedLengthCSR``)
    over ``capacity`` rows; ``sources``: internal ids (-1 entries ignored).  Distances are
    exact hop counts (-1: unreachable); ``parent`` is the smallest in-neighbour one hop
    closer (-1 for sources and unreachable vertices), or None with ``parents=False``;
    ``sorted_rows`` says every in-list is sorted ascending, so the first match is the smallest
    and the parent pass stops there.
    ``info`` counts the levels run in each direction and the host syncs.
    """
    launch = launch or launcher
    n = int(capacity)
    out_cols, out_cells, out_bits = _columns(xp, out_graph)
    in_cols, in_cells, in_bits = _columns(xp, in_graph)
    out_off, in_off = out_graph.offsets, in_graph.offsets
    dist = xp.full(n, -1, dtype=np.int32)
    src = xp.asarray(sources, dtype=np.int64)
    src = src[src >= 0]
    queue = xp.zeros(max(n, 1), dtype=np.int32)
    nxt = xp.zeros(max(n, 1), dtype=np.int32)
    stats = xp.zeros(3, dtype=np.uint64)
    info = {"top_down_levels": 0, "bottom_up_levels": 0, "syncs": 0}
    if src.shape[0]:
        dist[src] = 0
        seeds = xp.nonzero(dist == 0)[0].astype(np.int32)       # distinct sources
        fsize = int(seeds.shape[0])
        queue[:fsize] = seeds
        m_f = int((out_off[seeds.astype(np.int64) + 1] - out_off[seeds.astype(np.int64)]).sum())
        info["syncs"] += 2
    else:
        fsize = m_f = 0
    m_u = int(out_off[-1]) - m_f
    info["syncs"] += 1
    level, top_down = 0, True
    while fsize:
        if top_down and m_f > m_u / alpha:
            top_down = False
        elif not top_down and fsize < n / beta:
            stats[2] = 0
            launch(xp, "bfs_collect", n, (dist, i32(level), i64(n), queue, stats))
            top_down = True
        stats[:2] = 0
        stats[2] = 0
        if top_down:
            f = queue[:fsize].astype(np.int64)
            ends = xp.cumsum(out_off[f + 1] - out_off[f])
            launch(xp, "bfs_top_down", m_f, (out_off, out_cols, out_cells, i32(out_bits), queue, i64(fsize),
                                             ends, i64(m_f), dist, i32(level), nxt, stats))
            queue, nxt = nxt, queue
            info["top_down_levels"] += 1
        else:
            launch(xp, "bfs_bottom_up", n, (in_off, in_cols, in_cells, i32(in_bits), out_off, dist, i32(level),
                                            i64(n), stats))
            info["bottom_up_levels"] += 1
        found, edges, _ = (int(x) for x in (stats.get() if hasattr(stats, "get") else stats))
        info["syncs"] += 1
        fsize, m_f = found, edges
        m_u -= edges
        level += 1
    parent = None
    if parents:
        parent = bfs_parents(xp, in_graph, dist, sorted_rows=sorted_rows, launch=launch)
        info["syncs"] += 1
    return dist, parent, level, info


def bfs_parents(xp, in_graph, dist, *, sorted_rows: bool = False, chunk: int = PARENT_CHUNK, launch=None):
    """The smallest in-neighbour one hop closer for every reached vertex (-1 elsewhere).

    With ``sorted_rows`` (every in-list ascending) one thread per vertex stops at the first
    match; otherwise every in-list is scanned whole, in items of ``chunk`` in-edges.
    """
    launch = launch or launcher
    n = int(dist.shape[0])
    in_cols, in_cells, in_bits = _columns(xp, in_graph)
    in_off = in_graph.offsets
    if sorted_rows:
        parent = xp.full(n, -1, dtype=np.int32)
        launch(xp, "bfs_parents_sorted", n, (in_off, in_cols, in_cells, i32(in_bits), i64(n), dist, parent))
        return parent
    deg = in_off[1:n + 1] - in_off[:n]
    item_ends = xp.cumsum((deg + chunk - 1) // chunk)
    items = int(item_ends[-1]) if n else 0
    parent = xp.full(n, 0x7FFFFFFF, dtype=np.int32)
    if items:
        launch(xp, "bfs_parents", items, (in_off, in_cols, in_cells, i32(in_bits), item_ends, i64(n), i64(items),
                                          i64(chunk), dist, parent))
    parent[parent == 0x7FFFFFFF] = -1
    return parent
