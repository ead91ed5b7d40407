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

* ``bfs_seed`` - the sources queued (repeats once) with their out-degrees, and the
  edge count, in one launch.

Per level the host reads the counters (one device->host transfer): the
vertices found and their out-degree sum; the direction is decided from those.
A kernel that queues a vertex writes its out-degree beside it, so a top-down
level's item counts are one running sum of the queue's degrees (no gathers),
and the vertices reached are the sum of the levels' sizes (no pass over the
distances).  The array program (:func:`algorithms.bfs.bfs_arrays`)
stays the reference: ``tests/test_bfs_kernels.py`` runs these kernels through
a host emulation against it, and ``tests/test_bfs_fused_gpu.py`` on a GPU.
"""
from __future__ import annotations

import numpy as np

from vinestream.structures.backend import to_numpy
from vinestream.structures.block_primitives import lower_bound, upper_bound
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

@UPPER_BOUND@

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

// append v to queue when take, its out-degree d to deg at the same place (the next top-down level's item
// counts: no pass over the queue to find them): one atomic per warp (stats[2] is the queue length)
__device__ void bfs_append(int* queue, long long* deg, unsigned long long* stats, bool take, int v, long long d)
{
    unsigned int mask = __activemask();
    unsigned int votes = __ballot_sync(mask, take);
    if (votes == 0) return;
    int lane = BFS_LANE();
    int leader = __ffs(votes) - 1;
    unsigned long long base = 0;
    if (lane == leader) base = atomicAdd(&stats[2], (unsigned long long)__popc(votes));
    base = __shfl_sync(mask, base, leader);
    if (take) {
        unsigned long long at = base + __popc(votes & ((1u << lane) - 1u));
        queue[at] = v;
        deg[at] = d;
    }
}

// The sources (ids < 0 or >= n ignored, repeats once): distance 0, queued with their out-degrees; stats
// as a level's (found, their out-degree sum, queue length), and stats[3] the edge count off[n].
extern "C" __global__
void bfs_seed(const long long* src, long long ns, const long long* off, long long n, int* dist, int* queue,
              long long* deg, unsigned long long* stats)
{
    unsigned long long found = 0, edges = 0;
    if (blockIdx.x == 0 && threadIdx.x == 0) stats[3] = (unsigned long long)off[n];
    BFS_GRID_LOOP(t, ns) {
        long long v = src[t];
        bool take = v >= 0 && v < n && atomicCAS(&dist[v], -1, 0) == -1;
        long long d = take ? off[v + 1] - off[v] : 0;
        if (take) { ++found; edges += (unsigned long long)d; }
        bfs_append(queue, deg, stats, take, (int)v, d);
    }
    bfs_block_add(stats, found, edges);
}

// Top-down: item t is out-edge t of the frontier (ends: inclusive running sum of frontier degrees).
extern "C" __global__
void bfs_top_down(const long long* off, const int* cols, const unsigned int* cells, int bits,
                  const int* frontier, long long fsize, const long long* ends, long long total,
                  int* dist, int level, int* next, long long* next_deg, unsigned long long* stats)
{
    unsigned long long found = 0, edges = 0;
    BFS_GRID_LOOP(t, total) {
        long long i = bfs_upper_bound(ends, fsize, t);
        long long u = frontier[i];
        long long pos = off[u] + t - (i ? ends[i - 1] : 0);
        int v = bfs_col(cols, cells, bits, pos);
        bool take = dist[v] == -1 && atomicCAS(&dist[v], -1, level + 1) == -1;
        long long d = take ? off[v + 1] - off[v] : 0;
        if (take) { ++found; edges += (unsigned long long)d; }
        bfs_append(next, next_deg, stats, take, v, d);
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

// The queue of vertices at distance level, with their out-degrees (turning back to top-down).
extern "C" __global__
void bfs_collect(const int* dist, int level, long long n, const long long* off, int* queue, long long* deg,
                 unsigned long long* stats)
{
    BFS_GRID_LOOP(v, n) {
        bool take = dist[v] == level;
        bfs_append(queue, deg, stats, take, (int)v, take ? off[v + 1] - off[v] : 0);
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

// ============================================================ incremental repair (small batches)
// Warp-cooperative loops: warp i takes item i, its lanes stride the item's row.
#ifndef BFSR_WARP
#define BFSR_WARP 32
#define BFSR_WARP_LOOP(i, n) \
    for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < (n); \
         i += ((long long)blockDim.x * gridDim.x) >> 5)
#define BFSR_BALLOT(p) __ballot_sync(0xffffffffu, (p))
#define BFSR_SYNCWARP() __syncwarp()
#endif

#define BFSR_CUT 1
#define BFSR_INV 2
#define BFSR_NONE 0xFFFFFFFFFFFFFFFFULL
// stats: queue lengths (cut, 3 rotating walk queues, 3 rotating relax queues, invalidated, touched),
// the seeded flag and the counters the host reads once per batch
#define S_CUT 0
#define S_WALK 1
#define S_RELAX 4
#define S_INV 7
#define S_TOUCHED 8
#define S_SEEDED 9
#define S_EDGES 10
#define S_LOST 11
#define S_NEWLY 12
#define S_WALK_LEVELS 13
#define S_RELAX_ROUNDS 14

__device__ unsigned long long bfsr_pack(unsigned int d, int p)
{
    return ((unsigned long long)d << 32) | (unsigned long long)(unsigned int)p;
}

// append v to queue when take, bumping *count (one atomic per append: callers sit in divergent code,
// where a mask from __activemask() would not make the warp converge for a vote)
__device__ void bfsr_push(int* queue, unsigned long long* count, bool take, int v)
{
    if (take) queue[atomicAdd(count, 1ULL)] = v;
}

@LOWER_BOUND@

// The live in-list of v: snapshot row [s0, s0 + sc) less the edges whose alive flag is off, then extra[e0, e1).
struct bfsr_in_list { long long s0, sc, e0, total; };

__device__ bfsr_in_list bfsr_in_row(const long long* in_off, long long in_rows, const long long* extra,
                                    long long n_extra, long long v)
{
    bfsr_in_list r;
    r.s0 = v < in_rows ? in_off[v] : 0;
    r.sc = v < in_rows ? in_off[v + 1] - r.s0 : 0;
    r.e0 = n_extra ? bfsr_lower(extra, n_extra, v << 32) : 0;
    long long e1 = n_extra ? bfsr_lower(extra, n_extra, (v + 1) << 32) : 0;
    r.total = r.sc + e1 - r.e0;
    return r;
}

// in-neighbour at place p of the list, -1 for a deleted snapshot edge
__device__ int bfsr_in_at(const bfsr_in_list& r, const int* in_cols, const bool* alive, const long long* extra,
                          long long p)
{
    if (p < r.sc) return alive[r.s0 + p] ? in_cols[r.s0 + p] : -1;
    return (int)(extra[r.e0 + p - r.sc] & 0xFFFFFFFFLL);
}

// Offer v the label d with parent `from`: the packed (label, parent) of a vertex changed this batch lives
// in key[] (BFSR_NONE elsewhere) and only drops (atomicMin).  A first change lists v in `touched`; a lower
// label queues v for the next relax round once per round (stamp).
__device__ void bfsr_offer(int v, unsigned int d, int from, const int* dist, unsigned long long* key,
                           int* touched, int* qout, unsigned long long* qcount, int* stamp, int round,
                           unsigned long long* stats)
{
    unsigned long long k = key[v];
    unsigned int cur = k != BFSR_NONE ? (unsigned int)(k >> 32) : (unsigned int)dist[v];   // -1: unreached
    bool improve = d < cur;
    unsigned long long old = BFSR_NONE;
    if (improve) old = atomicMin(&key[v], bfsr_pack(d, from));
    bool first = improve && old == BFSR_NONE;
    unsigned int was = old != BFSR_NONE ? (unsigned int)(old >> 32) : (unsigned int)dist[v];
    // newly reached: counted at the first offer (dist[v] stays as it is until the commit), so the host's one
    // read after the last round has the count, and the reached total needs no device arithmetic
    if (first && dist[v] < 0) atomicAdd(&stats[S_NEWLY], 1ULL);
    bool lowered = improve && was > d && atomicExch(&stamp[v], round) != round;
    bfsr_push(touched, &stats[S_TOUCHED], first, v);
    bfsr_push(qout, qcount, lowered, v);
}

// 1. Deleted tree edges u -> v (parent[v] == u) cut v: flag and list it.
extern "C" __global__
void bfsr_cut(const int* del_s, const int* del_d, long long k, const int* dist, const int* parent, int* flag,
              int* cutq, unsigned long long* stats)
{
    BFS_GRID_LOOP(t, k) {
        int v = del_d[t];
        bool take = parent[v] == del_s[t] && dist[v] > 0 && (atomicOr(&flag[v], BFSR_CUT) & BFSR_CUT) == 0;
        bfsr_push(cutq, &stats[S_CUT], take, v);
    }
}

// 2. A cut vertex keeps its label when a live in-neighbour one level closer is not cut itself (it becomes
//    the parent); the others are invalidated and start the subtree walk.
extern "C" __global__
void bfsr_rescue(const long long* in_off, const int* in_cols, long long in_rows, const bool* alive,
                 const long long* extra, long long n_extra, const int* cutq, const int* dist,
                 int* parent, int* flag, int* walkq, int* invq, unsigned long long* stats)
{
    long long n = (long long)stats[S_CUT];
    int lane = BFS_LANE();
    unsigned long long edges = 0;
    BFSR_WARP_LOOP(i, n) {
        long long v = cutq[i];
        int want = dist[v] - 1;
        bfsr_in_list r = bfsr_in_row(in_off, in_rows, extra, n_extra, v);
        int found = -1;
        for (long long b = 0; b < r.total; b += BFSR_WARP) {
            long long p = b + lane;
            int w = p < r.total ? bfsr_in_at(r, in_cols, alive, extra, p) : -1;
            if (p < r.total) ++edges;
            bool ok = w >= 0 && dist[w] == want && !(flag[w] & BFSR_CUT);
            unsigned int votes = BFSR_BALLOT(ok);
            if (votes) {
                found = (int)__shfl_sync(0xffffffffu, w, __ffs(votes) - 1);
                break;
            }
        }
        if (lane == 0) {
            if (found >= 0) {
                parent[v] = found;
            } else {
                atomicOr(&flag[v], BFSR_INV);
                walkq[atomicAdd(&stats[S_WALK], 1ULL)] = (int)v;
                invq[atomicAdd(&stats[S_INV], 1ULL)] = (int)v;
            }
        }
    }
    if (edges) atomicAdd(&stats[S_EDGES], edges);
}

// 3. One level of the walk down the invalidated subtrees (round r reads walk queue r % 3).
extern "C" __global__
void bfsr_walk(const long long* off, const int* cols, int* walkq, long long cap, int r, const int* dist,
               const int* parent, int* flag, int* invq, unsigned long long* stats)
{
    const int* qin = walkq + (long long)(r % 3) * cap;
    int* qout = walkq + (long long)((r + 1) % 3) * cap;
    long long n = (long long)stats[S_WALK + r % 3];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        stats[S_WALK + (r + 2) % 3] = 0;          // written by the next round, read by none in this one
        if (n) stats[S_WALK_LEVELS] += 1;
    }
    int lane = BFS_LANE();
    unsigned long long edges = 0;
    BFSR_WARP_LOOP(i, n) {
        int x = qin[i];
        long long a = off[x], e = off[x + 1];
        if (lane == 0) edges += (unsigned long long)(e - a);
        for (long long p = a + lane; p < e; p += BFSR_WARP) {
            int c = cols[p];
            bool take = parent[c] == x && dist[c] > 0 && (atomicOr(&flag[c], BFSR_INV) & BFSR_INV) == 0;
            bfsr_push(qout, &stats[S_WALK + (r + 1) % 3], take, c);
            bfsr_push(invq, &stats[S_INV], take, c);
        }
    }
    if (edges) atomicAdd(&stats[S_EDGES], edges);
}

// whether the walk is over (its current queue empty) and the seeds are not placed yet
__device__ bool bfsr_ready(const unsigned long long* stats, int walk_slot)
{
    return stats[S_WALK + walk_slot] == 0 && stats[S_SEEDED] == 0;
}

// 4. Invalidated vertices lose their labels and take the best offer of their live, valid in-neighbours.
extern "C" __global__
void bfsr_seed(const long long* in_off, const int* in_cols, long long in_rows, const bool* alive,
               const long long* extra, long long n_extra, const int* invq, int* dist,
               int* parent, const int* flag, unsigned long long* key, int* touched, int* relaxq, int* stamp,
               int round, int walk_slot, unsigned long long* stats)
{
    if (!bfsr_ready(stats, walk_slot)) return;
    long long n = (long long)stats[S_INV];
    int lane = BFS_LANE();
    unsigned long long edges = 0, lost = 0;
    BFSR_WARP_LOOP(i, n) {
        long long v = invq[i];
        if (lane == 0) {
            lost += dist[v] >= 0;
            dist[v] = -1;
            parent[v] = -1;
        }
        BFSR_SYNCWARP();
        bfsr_in_list r = bfsr_in_row(in_off, in_rows, extra, n_extra, v);
        unsigned long long best = BFSR_NONE;
        for (long long p = lane; p < r.total; p += BFSR_WARP) {
            int w = bfsr_in_at(r, in_cols, alive, extra, p);
            ++edges;
            if (w >= 0 && !(flag[w] & BFSR_INV) && dist[w] >= 0) {
                unsigned long long o = bfsr_pack((unsigned int)dist[w] + 1u, w);
                if (o < best) best = o;
            }
        }
        if (best != BFSR_NONE)
            bfsr_offer((int)v, (unsigned int)(best >> 32), (int)(best & 0xFFFFFFFFULL), dist, key, touched,
                       relaxq, &stats[S_RELAX], stamp, round, stats);
    }
    if (edges) atomicAdd(&stats[S_EDGES], edges);
    if (lost) atomicAdd(&stats[S_LOST], lost);
}

// 4. Inserted edges u -> v offer v the label dist[u] + 1 (u neither invalidated nor unreached).
extern "C" __global__
void bfsr_insert(const int* ins_s, const int* ins_d, long long k, const int* dist, const int* flag,
                 unsigned long long* key, int* touched, int* relaxq, int* stamp, int round, int walk_slot,
                 unsigned long long* stats)
{
    if (!bfsr_ready(stats, walk_slot)) return;
    BFS_GRID_LOOP(t, k) {
        int u = ins_s[t];
        if (!(flag[u] & BFSR_INV) && dist[u] >= 0)
            bfsr_offer(ins_d[t], (unsigned int)dist[u] + 1u, u, dist, key, touched, relaxq, &stats[S_RELAX],
                       stamp, round, stats);
    }
}

// Marks the seeds placed (after bfsr_seed and bfsr_insert ran; a no-op while the walk is not over).
extern "C" __global__
void bfsr_seeded(int walk_slot, unsigned long long* stats)
{
    if (blockIdx.x == 0 && threadIdx.x == 0 && bfsr_ready(stats, walk_slot)) stats[S_SEEDED] = 1;
}

// 5. One label-correcting round: every vertex lowered in the last round offers its out-neighbours
//    its label + 1 (round r reads relax queue r % 3).
extern "C" __global__
void bfsr_relax(const long long* off, const int* cols, int* relaxq, long long cap, int r, const int* dist,
                unsigned long long* key, int* touched, int* stamp, int round, unsigned long long* stats)
{
    if (stats[S_SEEDED] == 0) return;
    const int* qin = relaxq + (long long)(r % 3) * cap;
    int* qout = relaxq + (long long)((r + 1) % 3) * cap;
    long long n = (long long)stats[S_RELAX + r % 3];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        stats[S_RELAX + (r + 2) % 3] = 0;
        if (n) stats[S_RELAX_ROUNDS] += 1;
    }
    int lane = BFS_LANE();
    unsigned long long edges = 0;
    BFSR_WARP_LOOP(i, n) {
        int x = qin[i];
        unsigned int d = (unsigned int)(key[x] >> 32) + 1u;
        long long a = off[x], e = off[x + 1];
        if (lane == 0) edges += (unsigned long long)(e - a);
        for (long long p = a + lane; p < e; p += BFSR_WARP)
            bfsr_offer(cols[p], d, x, dist, key, touched, qout, &stats[S_RELAX + (r + 1) % 3], stamp, round, stats);
    }
    if (edges) atomicAdd(&stats[S_EDGES], edges);
}

// 6. Labels of the touched vertices written back, the scratch reset at the touched ids only.
extern "C" __global__
void bfsr_commit(const int* touched, const int* cutq, const int* invq, int* dist, int* parent,
                 unsigned long long* key, int* flag, unsigned long long* stats)
{
    long long nt = (long long)stats[S_TOUCHED], nc = (long long)stats[S_CUT], ni = (long long)stats[S_INV];
    BFS_GRID_LOOP(t, nt) {
        int v = touched[t];
        unsigned long long k = key[v];
        dist[v] = (int)(unsigned int)(k >> 32);
        parent[v] = (int)(unsigned int)(k & 0xFFFFFFFFULL);
        key[v] = BFSR_NONE;
    }
    BFS_GRID_LOOP(t, nc) flag[cutq[t]] = 0;
    BFS_GRID_LOOP(t, ni) flag[invq[t]] = 0;
}

// ---- the in-edge log's keys of one batch: (dst << 32) | src, the nd deleted edges first, then the inserted ones
extern "C" __global__
void bfsl_keys(const int* del_s, const int* del_d, long long nd, const int* ins_s, const int* ins_d, long long k,
               long long* keys)
{
    BFS_GRID_LOOP(t, k) {
        keys[t] = t < nd ? ((long long)del_d[t] << 32) | (long long)(unsigned int)del_s[t]
                         : ((long long)ins_d[t - nd] << 32) | (long long)(unsigned int)ins_s[t - nd];
    }
}

// ---- the in-edge log's fold of one batch (algorithms/in_edge_log.InEdgeLog.fold, fused form) ----
// keys [0, nd) deleted, [nd, k) inserted (one BatchDelta: distinct, deleted ones live, inserted ones not).
// A key (v << 32 | u) that is a snapshot edge (u in v's sorted snapshot row) sets its alive flag (off for a
// delete, on for an insert); the others go to gone / add (unordered) with their counts in cnt[0] / cnt[1];
// cnt[2]: the columns and offsets read.
extern "C" __global__
void bfsl_fold_find(const long long* keys, long long nd, long long k, const long long* off, const int* cols,
                    long long rows, bool* alive, long long* gone, long long* add, unsigned long long* cnt)
{
    BFS_GRID_LOOP(t, k) {
        long long key = keys[t];
        long long v = key >> 32;
        int u = (int)(key & 0xFFFFFFFFLL);
        long long at = -1;
        unsigned long long reads = 0;
        if (v >= 0 && v < rows) {
            long long lo = off[v], hi = off[v + 1];
            reads = 2;
            while (lo < hi) {
                long long mid = (lo + hi) >> 1;
                ++reads;
                if (cols[mid] < u) lo = mid + 1; else hi = mid;
            }
            if (lo < off[v + 1] && cols[lo] == u) at = lo;
        }
        atomicAdd(&cnt[2], reads + 1ULL);
        if (at >= 0) {
            alive[at] = t >= nd;
        } else if (t < nd) {
            gone[atomicAdd(&cnt[0], 1ULL)] = key;
        } else {
            add[atomicAdd(&cnt[1], 1ULL)] = key;
        }
    }
}

// extra less gone (a subset of it) plus add (disjoint from it), all sorted and distinct, into out: each key's
// place is its rank, a binary search in the other lists (no scan)
extern "C" __global__
void bfsl_fold_merge(const long long* extra, long long n_extra, const long long* gone, long long n_gone,
                     const long long* add, long long n_add, long long* out)
{
    BFS_GRID_LOOP(t, n_extra + n_add) {
        if (t < n_extra) {
            long long x = extra[t];
            long long g = bfsr_lower(gone, n_gone, x);
            if (!(g < n_gone && gone[g] == x)) out[t - g + bfsr_lower(add, n_add, x)] = x;
        } else {
            long long j = t - n_extra, y = add[j];
            out[j + bfsr_lower(extra, n_extra, y) - bfsr_lower(gone, n_gone, y)] = y;
        }
    }
}
""".replace("@UPPER_BOUND@", upper_bound("bfs_upper_bound")).replace("@LOWER_BOUND@", lower_bound("bfsr_lower"))

KERNELS = ("bfs_seed", "bfs_top_down", "bfs_bottom_up", "bfs_collect", "bfs_parents", "bfs_parents_sorted",
           "bfsr_cut", "bfsr_rescue", "bfsr_walk", "bfsr_seed", "bfsr_insert", "bfsr_seeded", "bfsr_relax",
           "bfsr_commit", "bfsl_keys", "bfsl_fold_find", "bfsl_fold_merge")
_kernels = RawKernels(SOURCE, "BFS")


def launcher(xp, name: str, n: int, args: tuple) -> None:
    """Compile (once) and launch kernel ``name`` over ``n`` items (tests replace this)."""
    _kernels.launch(xp, name, n, args)


def _host(stats):
    """A small device array's values on the host (one transfer)."""
    return to_numpy(stats)


def _columns(xp, graph):
    """(cols, cells, bits) of a plain CSR (bits 0) or a FixedLengthCSR."""
    cells = getattr(graph, "cells", None)
    if cells is None:            # bits 0: the kernels never read the cells (no fill needed)
        return graph.cols, xp.empty(2, dtype=np.uint32), 0
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
    ``info`` counts the levels run in each direction and the host syncs, and ``reached`` the vertices
    given a distance (a host int: the sum of the levels' sizes, no pass over ``dist``).

    One launch and one read seed the sources; a level costs a fill of its counters, a launch and a read
    of them (a top-down level also one running sum of its queue's degrees, written beside the queue by
    the kernel that filled it).
    """
    launch = launch or launcher
    n = int(capacity)
    out_cols, out_cells, out_bits = _columns(xp, out_graph)
    in_cols, in_cells, in_bits = _columns(xp, in_graph)
    out_off, in_off = out_graph.offsets, in_graph.offsets
    dist = xp.full(n, -1, dtype=np.int32)
    src = xp.asarray(sources, dtype=np.int64)
    # the queue of a level and the next one, each entry's out-degree beside it (written where it is queued):
    # a top-down level's item counts are one running sum, no pass over the queue (never read past their length)
    queue, nxt = xp.empty(max(n, 1), dtype=np.int32), xp.empty(max(n, 1), dtype=np.int32)
    qdeg, ndeg = xp.empty(max(n, 1), dtype=np.int64), xp.empty(max(n, 1), dtype=np.int64)
    stats = xp.zeros(4, dtype=np.uint64)
    info = {"top_down_levels": 0, "bottom_up_levels": 0, "syncs": 0, "reached": 0}
    fsize = m_f = m_u = 0
    if src.shape[0]:
        # the distinct sources queued, their degree sum and the edge count: one launch, one read
        launch(xp, "bfs_seed", int(src.shape[0]), (src, i64(src.shape[0]), out_off, i64(n), dist, queue, qdeg,
                                                    stats))
        found, m_f, fsize, total = (int(x) for x in _host(stats))
        m_u = total - m_f
        info["syncs"] += 1
    level, top_down = 0, True
    while fsize:
        info["reached"] += fsize
        if top_down and m_f > m_u / alpha:
            top_down = False
        elif not top_down and fsize < n / beta:
            stats.fill(0)
            launch(xp, "bfs_collect", n, (dist, i32(level), i64(n), out_off, queue, qdeg, stats))
            top_down = True
        stats.fill(0)
        if top_down:
            ends = xp.cumsum(qdeg[:fsize])
            launch(xp, "bfs_top_down", m_f, (out_off, out_cols, out_cells, i32(out_bits), queue, i64(fsize),
                                             ends, i64(m_f), dist, i32(level), nxt, ndeg, stats))
            queue, nxt = nxt, queue
            qdeg, ndeg = ndeg, qdeg
            info["top_down_levels"] += 1
        else:
            launch(xp, "bfs_bottom_up", n, (in_off, in_cols, in_cells, i32(in_bits), out_off, dist, i32(level),
                                            i64(n), stats))
            info["bottom_up_levels"] += 1
        found, edges = (int(x) for x in _host(stats)[:2])
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


# -- incremental repair ---------------------------------------------------------------------------
#: threads of a repair launch whose work list lives on the device (its length is never read back)
REPAIR_THREADS = 1 << 17
#: rounds (walk levels, relax rounds) launched between two reads of the counters
REPAIR_ROUNDS = 4
STATS = 16
(S_CUT, S_WALK, S_RELAX, S_INV, S_TOUCHED, S_SEEDED, S_EDGES, S_LOST, S_NEWLY, S_WALK_LEVELS,
 S_RELAX_ROUNDS) = (0, 1, 4, 7, 8, 9, 10, 11, 12, 13, 14)
NONE = np.uint64(2**64 - 1)


class RepairScratch:
    """Device scratch of the fused repair over ``capacity`` slots, kept between batches: flags and packed
    labels are reset at the touched ids only (by ``bfsr_commit``), the stamps never need a reset."""

    def __init__(self, xp, capacity: int):
        cap = max(int(capacity), 1)
        self.capacity = cap
        self.flag = xp.zeros(cap, dtype=np.int32)
        self.key = xp.full(cap, NONE, dtype=np.uint64)
        self.stamp = xp.zeros(cap, dtype=np.int32)
        self.walkq = xp.empty(3 * cap, dtype=np.int32)
        self.relaxq = xp.empty(3 * cap, dtype=np.int32)
        self.invq = xp.empty(cap, dtype=np.int32)
        self.touched = xp.empty(cap, dtype=np.int32)
        self.cutq = xp.empty(cap, dtype=np.int32)
        self.stats = xp.zeros(STATS, dtype=np.uint64)
        self.round = 1                      # stamp id of the next round (monotonic across batches)


def batch_keys(xp, del_s, del_d, ins_s, ins_d, launch=None):
    """The in-edge keys ``(dst << 32) | src`` of a batch's deleted then inserted edges as one int64 array (one
    launch: ``bfsl_keys``); the array program is :func:`structures.array_ops.edge_keys` of each."""
    launch = launch or launcher
    nd, k = int(del_s.shape[0]), int(del_s.shape[0]) + int(ins_s.shape[0])
    keys = xp.empty(k, dtype=np.int64)
    if k:
        c = lambda a: xp.ascontiguousarray(a, dtype=np.int32)      # a BatchDelta's: as they are
        launch(xp, "bfsl_keys", k, (c(del_s), c(del_d), i64(nd), c(ins_s), c(ins_d), i64(k), keys))
    return keys


def _host_stats(stats) -> np.ndarray:
    return to_numpy(stats).astype(np.int64)          # a host array (one transfer; what it reads is the host's)


def bfs_repair(xp, out_graph, in_log, dist, parent, scratch: RepairScratch, del_s, del_d, ins_s, ins_d, *,
               rounds: int = REPAIR_ROUNDS, launch=None) -> dict:
    """Repair ``dist`` / ``parent`` in place after a batch, by the ``bfsr_*`` kernels (the fused form of
    :meth:`algorithms.bfs.BFS.update`'s array program, same steps):

    1. ``bfsr_cut``: deleted tree edges cut their heads; 2. ``bfsr_rescue``: a cut vertex with a live
    in-neighbour one level closer (not cut) re-parents, the others are invalidated; 3. ``bfsr_walk``
    (one launch per level): the subtrees below the invalidated are invalidated; 4. ``bfsr_seed``: the
    invalidated lose their labels and take the best offer of their valid in-neighbours, and
    ``bfsr_insert``: inserted edges offer ``dist[u] + 1``; 5. ``bfsr_relax`` (one launch per round):
    label-correcting rounds from every lowered vertex; 6. ``bfsr_commit``.

    Work lists and their lengths stay on the device: every launch runs on a fixed grid and reads its
    list's length there, so ``rounds`` walk levels, the seeds and ``rounds`` relax rounds are queued
    back to back and the host reads the counters **once** (one transfer) — more only when the walk or
    the relaxation needs more than ``rounds`` steps (the seeds wait on the device until the walk is
    over).  ``out_graph``: the out-CSR (``offsets``, ``cols``) over at least the slots in use;
    ``in_log``: an :class:`~algorithms.in_edge_log.InEdgeLog` of the current in-edges (None for a batch
    without deletions: nothing is cut, so no in-edge is read and steps 1-3 and ``bfsr_seed`` do not run).  Returns the
    counters (host ints) and ``syncs``; ``lost`` / ``newly`` change the reached count, and
    ``reached_change`` is that change (a host int: a vertex newly reached is counted at its first offer,
    so the last read has it).
    """
    launch = launch or launcher
    s = scratch
    cap = s.capacity
    stats = s.stats
    stats.fill(0)
    off, cols = out_graph.offsets, out_graph.cols
    # a BatchDelta's ids are contiguous int32 already: no copies
    del_s, del_d, ins_s, ins_d = (xp.ascontiguousarray(a, dtype=np.int32) for a in (del_s, del_d, ins_s, ins_d))
    k_del, k_ins = int(del_s.shape[0]), int(ins_s.shape[0])
    if k_del:
        # only a cut reads in-edges (the rescue, the seeds of invalidated vertices): a batch of insertions
        # needs no log (``in_log`` None) and launches no bfsr_seed (no vertex is invalidated)
        if in_log is None:
            raise ValueError("a batch with deletions needs the in-edge log")
        in_log._settle()                  # the kernels read alive flags only (a host log defers some)
        in_args = (in_log.offsets, in_log.cols, i64(in_log.rows), in_log.alive, in_log.extra,
                   i64(in_log.extra.shape[0]))
    T = REPAIR_THREADS
    if k_del:
        launch(xp, "bfsr_cut", k_del, (del_s, del_d, i64(k_del), dist, parent, s.flag, s.cutq, stats))
        launch(xp, "bfsr_rescue", T, (*in_args, s.cutq, dist, parent, s.flag, s.walkq, s.invq, stats))
    walk_r = relax_r = syncs = 0
    base = s.round

    def relax_chunk(first: int) -> int:
        # ``rounds`` relax rounds queued from round ``first``; the next round's number
        for r in range(first, first + rounds):
            launch(xp, "bfsr_relax", T, (off, cols, s.relaxq, i64(cap), i32(r), dist, s.key, s.touched,
                                         s.stamp, i32(base + 1 + r), stats))
        return first + rounds

    while True:
        if k_del:
            for _ in range(rounds):
                launch(xp, "bfsr_walk", T, (off, cols, s.walkq, i64(cap), i32(walk_r), dist, parent, s.flag,
                                            s.invq, stats))
                walk_r += 1
        slot = i32(walk_r % 3)
        if k_del:
            launch(xp, "bfsr_seed", T, (*in_args, s.invq, dist, parent, s.flag, s.key, s.touched, s.relaxq,
                                        s.stamp, i32(base), slot, stats))
        if k_ins:
            launch(xp, "bfsr_insert", k_ins, (ins_s, ins_d, i64(k_ins), dist, s.flag, s.key, s.touched, s.relaxq,
                                              s.stamp, i32(base), slot, stats))
        launch(xp, "bfsr_seeded", 1, (slot, stats))
        relax_r = relax_chunk(0)
        h = _host_stats(stats)
        syncs += 1
        if h[S_SEEDED]:
            break                       # else the walk was longer than ``rounds`` levels: go on with it
    while h[S_RELAX + relax_r % 3]:
        relax_r = relax_chunk(relax_r)
        h = _host_stats(stats)
        syncs += 1
    s.round = base + 2 + relax_r
    launch(xp, "bfsr_commit", T, (s.touched, s.cutq, s.invq, dist, parent, s.key, s.flag, stats))
    return {"syncs": syncs, "cut": int(h[S_CUT]), "invalidated": int(h[S_INV]), "touched": int(h[S_TOUCHED]),
            "edges": int(h[S_EDGES]), "lost": int(h[S_LOST]), "walk_levels": int(h[S_WALK_LEVELS]),
            "relax_rounds": int(h[S_RELAX_ROUNDS]), "newly": int(h[S_NEWLY]),
            "reached_change": int(h[S_NEWLY]) - int(h[S_LOST])}
