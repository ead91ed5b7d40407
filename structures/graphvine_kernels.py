"""Fused CUDA kernels for GraphVine's GPU path (graphvine.txt sections 4.2, 4.5, 4.6).

The array program in :mod:`structures.graphvine` stays the reference (it runs on
NumPy and, with ``fused=False``, on CuPy); these kernels replace its
latency-bound steps on the GPU, where every level of a tree walk and every
boolean compaction costs a launch and a device->host sync:

* ``gv_walk`` - every block of the touched trees in CBT order, one thread per
  (vertex, CBT index k) following the bits of ``k+1`` from the root (section
  4.5.1 bit strings) instead of one Python step per tree level;
* ``gv_locate`` - the same walk for explicit (vertex, k) pairs;
* ``gv_find`` - Algorithm 3's one-thread-per-live-edge search of a whole batch
  of sorted keys; in delete mode it also marks the found entries, counts them
  per vertex and decrements the in-degrees;
* ``gv_activate`` - fresh edge sentinels for endpoints that were not live;
* ``gv_insert_write`` / ``gv_insert_finish`` - Algorithm 1 after the prefix-sum
  pop (Figure 3): weight upserts, new edges written at (last block, offset) or
  into popped blocks, popped blocks linked under their parents, sentinels;
* ``gv_delete_flags`` / ``gv_delete_move`` / ``gv_delete_finish`` - deletion
  with compaction: the i-th hole (in position order) takes the i-th tail edge,
  emptied blocks are unlinked and pushed to the queue tail by a prefix sum.

Blocks have the size of their vertex's class (``class_size[block_class[v]]``)
and sit at the entry base given by the pool's chunk table (``gv_base``: a
binary search over the few chunks); a vertex's pops come from its class's ring
``queue[q_start[c] + (head[c] + excl + j) % q_size[c]]``, ``excl`` being the
per-class prefix sum computed by the caller.  Threads that work on live edges
find their (segment, position) by a binary search on the running sum of the
segments' edge counts, so no thread is spent on empty entries.

All kernels use grid-stride loops and 64-bit indices.  Concurrent writes are
arranged so that every location has one writer per launch (the comments name
the owner).  The source is one string, ``SOURCE``, so that
``tests/test_graphvine_kernels_compile.py`` can compile it with nvcc and, with a
small host prelude, run it serially on the CPU as an emulation.
"""
from __future__ import annotations

from .raw_kernels import RawKernels, i32, i64  # noqa: F401  (i32/i64 used by callers)

SOURCE = r"""
#define GV_EMPTY (-1)
#define GV_LOW32 0xFFFFFFFFLL
#ifndef GV_GRID_LOOP
#define GV_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif
// the pool's chunk table: first block id (ascending), entry base and block size of each chunk
#define GV_CHUNKS const long long* cfirst, const long long* cbase, const long long* csize, const int nchunks
#define GV_CHUNK_ARGS cfirst, cbase, csize, nchunks

// smallest i in [0, n) with ends[i] > t (ends non-decreasing); n when none
__device__ long long gv_upper_bound(const long long* ends, long long n, long long t)
{
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (ends[mid] > t) hi = mid; else lo = mid + 1;
    }
    return lo;
}

// block id of CBT index k in the tree rooted at root: follow the bits of k+1 below its leading one
__device__ int gv_walk_to(int root, long long k, const int* left, const int* right)
{
    unsigned long long x = (unsigned long long)(k + 1);
    int depth = 63 - __clzll((long long)x);
    int node = root;
    for (int s = depth - 1; s >= 0 && node >= 0; --s)
        node = ((x >> s) & 1ULL) ? right[node] : left[node];
    return node;
}

// entry offset of block id: base of its chunk (the last one whose first id <= id) + rank x size
__device__ long long gv_base(long long id, GV_CHUNKS)
{
    int lo = 0, hi = nchunks;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (cfirst[mid] <= id) lo = mid + 1; else hi = mid;
    }
    return cbase[lo - 1] + (id - cfirst[lo - 1]) * csize[lo - 1];
}

// slot of position p of segment i, whose blocks (size bs) are table[ends[i] - nb[i] ...]
__device__ long long gv_slot(long long i, long long p, long long bs, const int* table,
                             const long long* ends, const long long* nb, GV_CHUNKS)
{
    long long k = p / bs;
    return gv_base(table[ends[i] - nb[i] + k], GV_CHUNK_ARGS) + (p - k * bs);
}

// segment of live edge e (cnt_ends: running sums of the segments' edge counts) and its position
__device__ long long gv_segment(const long long* cnt_ends, long long n, long long e, long long* p)
{
    long long i = gv_upper_bound(cnt_ends, n, e);
    *p = e - (i > 0 ? cnt_ends[i - 1] : 0);
    return i;
}

// j-th popped block of a vertex of class c whose pops start excl entries after its ring's head
__device__ int gv_popped(const int* queue, const long long* qstart, const long long* qsize,
                         const long long* qhead, long long c, long long excl, long long j)
{
    return queue[qstart[c] + (qhead[c] + excl + j) % qsize[c]];
}

// table[t] = block k of vertex (segs[i] >> shift), t = ends[i] - nb[i] + k; tidx[t] = i; tk[t] = k
extern "C" __global__
void gv_walk(const long long* segs, const int shift, const long long* ends, const long long nseg,
             const int* root_block, const int* left, const int* right, const long long total,
             int* table, long long* tidx, long long* tk)
{
    GV_GRID_LOOP(t, total) {
        long long i = gv_upper_bound(ends, nseg, t);
        long long start = i > 0 ? ends[i - 1] : 0;
        long long k = t - start;
        long long v = segs[i] >> shift;
        table[t] = gv_walk_to(root_block[v], k, left, right);
        tidx[t] = i;
        tk[t] = k;
    }
}

extern "C" __global__
void gv_locate(const long long* verts, const long long* ks, const long long n,
               const int* root_block, const int* left, const int* right, int* out)
{
    GV_GRID_LOOP(i, n) {
        int r = root_block[verts[i]];
        out[i] = r < 0 ? r : gv_walk_to(r, ks[i], left, right);
    }
}

// one thread per live edge e of the keys' sources (segment i = the vertex's first key).
// found[key] = slot (the key's one writer: keys are distinct and an edge is stored once).  Delete
// mode also sets dead[e], counts dels[i] and decrements in_degree[col].
extern "C" __global__
void gv_find(const int* table, const long long* ends, const long long* nb, const long long* cnt_ends,
             const long long* ukeys, const long long nkeys, const signed char* block_class,
             const long long* class_size, GV_CHUNKS, const int* block_cols, const bool* wanted,
             const long long wanted_len, const long long live, long long* found,
             const int delete_mode, signed char* dead, unsigned long long* dels, int* in_degree)
{
    GV_GRID_LOOP(e, live) {
        long long p;
        long long i = gv_segment(cnt_ends, nkeys, e, &p);
        long long v = ukeys[i] >> 32;
        if (delete_mode) dead[e] = 0;
        long long slot = gv_slot(i, p, class_size[block_class[v]], table, ends, nb, GV_CHUNK_ARGS);
        int col = block_cols[slot];
        if (col < 0 || col >= wanted_len || !wanted[col]) continue;
        long long key = (v << 32) | (long long)(unsigned int)col;
        long long lo = 0, hi = nkeys;
        while (lo < hi) {
            long long mid = (lo + hi) >> 1;
            if (ukeys[mid] < key) lo = mid + 1; else hi = mid;
        }
        if (lo < nkeys && ukeys[lo] == key) {
            found[lo] = slot;
            if (delete_mode) {
                dead[e] = 1;
                atomicAdd(&dels[i], 1ULL);
                atomicAdd(&in_degree[col], -1);
            }
        }
    }
}

// endpoints (src then dst) that are not live get an empty sentinel; duplicates write the same
// values, and alive is set last, so a thread that sees it set has nothing left to do
extern "C" __global__
void gv_activate(const long long* src, const long long* dst, const long long n, bool* alive,
                 long long* edge_count, int* num_blocks, int* root_block, int* last_block,
                 int* last_offset, int* in_degree, signed char* block_class)
{
    GV_GRID_LOOP(t, 2 * n) {
        long long v = t < n ? src[t] : dst[t - n];
        if (alive[v]) continue;
        edge_count[v] = 0;
        num_blocks[v] = 0;
        root_block[v] = GV_EMPTY;
        last_block[v] = GV_EMPTY;
        last_offset[v] = 0;
        in_degree[v] = 0;
        block_class[v] = GV_EMPTY;
        alive[v] = true;
    }
}

// one thread per sorted distinct key i (s = its vertex's first key, which carries the vertex's
// plan: old count and blocks, class, block size, per-class pop offset): an existing edge gets its
// weight (its slot's one writer); a new one is written at position old_count + rank
extern "C" __global__
void gv_insert_write(const long long* ukeys, const long long n, const long long* found,
                     const float* uw, const long long* first_idx, const long long* sfirst,
                     const long long* newc, const long long* old_count, const long long* old_blocks,
                     const long long* cexcl, const long long* cls, const long long* bsz,
                     const int* last_block, const int* queue, const long long* qstart,
                     const long long* qsize, const long long* qhead, GV_CHUNKS,
                     int* block_cols, float* block_weights, int* in_degree, bool* mask)
{
    GV_GRID_LOOP(i, n) {
        long long f = found[i];
        mask[first_idx[i]] = f < 0;
        if (f >= 0) { block_weights[f] = uw[i]; continue; }
        long long s = sfirst[i];
        long long v = ukeys[i] >> 32;
        int col = (int)(ukeys[i] & GV_LOW32);
        long long bs = bsz[s];
        long long before_s = newc[s] - (found[s] < 0 ? 1 : 0);   // new keys before the vertex's first
        long long p = old_count[s] + (newc[i] - 1 - before_s);
        long long kb = p / bs;
        long long blk = kb >= old_blocks[s]
            ? gv_popped(queue, qstart, qsize, qhead, cls[s], cexcl[s], kb - old_blocks[s])
            : last_block[v];
        long long slot = gv_base(blk, GV_CHUNK_ARGS) + (p - kb * bs);
        block_cols[slot] = col;
        block_weights[slot] = uw[i];
        atomicAdd(&in_degree[col], 1);
    }
}

// threads t < total: popped block t (global pop order: vertex by vertex), its links, owner, root;
// its parent's link when the parent is an old block (that link's one writer); threads t < n: the
// sentinel of the vertex whose first key is t (the vertex's one writer).  Old counts / blocks
// come in per-key arrays, never re-read.
extern "C" __global__
void gv_insert_finish(const long long* ukeys, const long long n, const long long* need,
                      const long long* needc, const long long* add, const long long* old_count,
                      const long long* old_blocks, const long long* cexcl, const long long* cls,
                      const long long* bsz, const int* queue, const long long* qstart,
                      const long long* qsize, const long long* qhead, const long long total,
                      int* left, int* right, int* owner, int* root_block, int* last_block,
                      int* last_offset, long long* edge_count, int* num_blocks, signed char* block_class)
{
    long long m = total > n ? total : n;
    GV_GRID_LOOP(t, m) {
        if (t < total) {
            long long i = gv_upper_bound(needc, n, t);
            long long nbo = old_blocks[i];
            long long nbn = nbo + need[i];
            long long j = t - (needc[i] - need[i]);
            long long k = nbo + j;
            long long c = cls[i], ex = cexcl[i];
            long long v = ukeys[i] >> 32;
            int id = gv_popped(queue, qstart, qsize, qhead, c, ex, j);
            left[id] = 2 * k + 1 < nbn ? gv_popped(queue, qstart, qsize, qhead, c, ex, 2 * k + 1 - nbo)
                                       : GV_EMPTY;
            right[id] = 2 * k + 2 < nbn ? gv_popped(queue, qstart, qsize, qhead, c, ex, 2 * k + 2 - nbo)
                                        : GV_EMPTY;
            owner[id] = (int)v;
            if (k == 0) {
                root_block[v] = id;
            } else {
                long long kp = (k - 1) / 2;
                if (kp < nbo) {                 // an old parent: reached by the bit string of kp
                    int parent = gv_walk_to(root_block[v], kp, left, right);
                    if (k % 2 == 1) left[parent] = id; else right[parent] = id;
                }
            }
        }
        if (t < n && add[t] > 0) {
            long long v = ukeys[t] >> 32;
            long long nbo = old_blocks[t];
            long long bs = bsz[t];
            long long cnt = old_count[t] + add[t];
            long long last_k = (cnt + bs - 1) / bs - 1;
            if (last_k >= nbo)
                last_block[v] = gv_popped(queue, qstart, qsize, qhead, cls[t], cexcl[t], last_k - nbo);
            last_offset[v] = (int)(cnt - last_k * bs);
            edge_count[v] = cnt;
            num_blocks[v] = (int)(nbo + need[t]);
            block_class[v] = (signed char)cls[t];
        }
    }
}

// per live edge e (segment i, position p): packed[e] = (hole << 32) | mover
extern "C" __global__
void gv_delete_flags(const long long* cnt_ends, const long long n, const signed char* dead,
                     const long long* new_count, const long long live, long long* packed)
{
    GV_GRID_LOOP(e, live) {
        long long p;
        long long i = gv_segment(cnt_ends, n, e, &p);
        long long nc = new_count[i];
        long long hole = (dead[e] && p < nc) ? 1 : 0;
        long long mover = (!dead[e] && p >= nc) ? 1 : 0;
        packed[e] = (hole << 32) | mover;
    }
}

// movers (live edges past the new count) fill the holes (dead edges below it) in order: the r-th
// mover of the batch takes the r-th hole (both lists are in (vertex, position) order and each
// vertex has as many of one as of the other); every entry past the new count is cleared by its
// own thread after it was read
extern "C" __global__
void gv_delete_move(const int* table, const long long* ends, const long long* nb,
                    const long long* cnt_ends, const long long* ukeys, const long long n,
                    const long long* packed_incl, const long long* new_count,
                    const signed char* block_class, const long long* class_size, GV_CHUNKS,
                    const long long live, int* block_cols, float* block_weights)
{
    GV_GRID_LOOP(e, live) {
        long long p;
        long long i = gv_segment(cnt_ends, n, e, &p);
        if (p < new_count[i]) continue;
        long long bs = class_size[block_class[ukeys[i] >> 32]];
        long long slot = gv_slot(i, p, bs, table, ends, nb, GV_CHUNK_ARGS);
        long long before = e > 0 ? packed_incl[e - 1] : 0;
        if ((packed_incl[e] & GV_LOW32) != (before & GV_LOW32)) {      // a mover
            long long r = packed_incl[e] & GV_LOW32;                    // 1-based mover rank
            long long lo = 0, hi = live;                                // first entry with r holes
            while (lo < hi) {
                long long mid = (lo + hi) >> 1;
                if ((packed_incl[mid] >> 32) >= r) hi = mid; else lo = mid + 1;
            }
            long long hp;
            long long hi_seg = gv_segment(cnt_ends, n, lo, &hp);        // the same vertex as e
            long long hslot = gv_slot(hi_seg, hp, bs, table, ends, nb, GV_CHUNK_ARGS);
            block_cols[hslot] = block_cols[slot];
            block_weights[hslot] = block_weights[slot];
        }
        block_cols[slot] = GV_EMPTY;
    }
}

// threads t < total (table rows): a freed block is cleared and pushed at its class's tail + its
// rank in the class (its queue entry's one writer) and cut from a surviving parent; threads t < n:
// the sentinel of the vertex with key position t (the class of a freed row comes in tcls, never
// from block_class, which these threads reset)
extern "C" __global__
void gv_delete_finish(const int* table, const long long* tidx, const long long* tk, const bool* freed,
                      const long long* frank, const long long* tcls, const long long* ukeys,
                      const long long* ends, const long long* nb, const long long* new_count,
                      const long long n, const long long total, const long long* class_size,
                      int* queue, const long long* qstart, const long long* qsize,
                      const long long* qtail, int* left, int* right, int* owner, int* root_block,
                      int* last_block, int* last_offset, long long* edge_count, int* num_blocks,
                      signed char* block_class)
{
    long long m = total > n ? total : n;
    GV_GRID_LOOP(t, m) {
        if (t < total && freed[t]) {
            long long i = tidx[t];
            long long k = tk[t];
            long long c = tcls[t];
            long long bs = class_size[c];
            long long nbn = (new_count[i] + bs - 1) / bs;
            int id = table[t];
            left[id] = GV_EMPTY;
            right[id] = GV_EMPTY;
            owner[id] = GV_EMPTY;
            queue[qstart[c] + (qtail[c] + frank[t]) % qsize[c]] = id;
            long long kp = (k - 1) / 2;
            if (k >= 1 && kp < nbn) {
                int parent = table[t - k + kp];
                if (k % 2 == 1) left[parent] = GV_EMPTY; else right[parent] = GV_EMPTY;
            }
        }
        if (t < n && nb[t] > 0) {
            long long v = ukeys[t] >> 32;
            long long nc = new_count[t];
            long long bs = class_size[block_class[v]];
            long long nbn = (nc + bs - 1) / bs;
            long long tstart = ends[t] - nb[t];
            if (nbn > 0) {
                last_block[v] = table[tstart + nbn - 1];
                last_offset[v] = (int)(nc - (nbn - 1) * bs);
            } else {
                root_block[v] = GV_EMPTY;
                last_block[v] = GV_EMPTY;
                last_offset[v] = 0;
                block_class[v] = GV_EMPTY;
            }
            edge_count[v] = nc;
            num_blocks[v] = (int)nbn;
        }
    }
}

// CSR gather: output edge e of row r = upper_bound(row_ends, e); its block comes from the table
extern "C" __global__
void gv_gather(const long long* row_ends, const long long nrows, const long long* tends,
               const long long* tnb, const int* table, const long long* rowv,
               const signed char* block_class, const long long* class_size, GV_CHUNKS,
               const int* block_cols, const float* block_weights, const long long total,
               int* cols, float* weights)
{
    GV_GRID_LOOP(e, total) {
        long long r = gv_upper_bound(row_ends, nrows, e);
        long long pos = e - (r > 0 ? row_ends[r - 1] : 0);
        long long bs = class_size[block_class[rowv[r]]];
        long long slot = gv_slot(r, pos, bs, table, tends, tnb, GV_CHUNK_ARGS);
        cols[e] = block_cols[slot];
        weights[e] = block_weights[slot];
    }
}
"""

KERNELS = ("gv_walk", "gv_locate", "gv_find", "gv_activate", "gv_insert_write", "gv_insert_finish",
           "gv_delete_flags", "gv_delete_move", "gv_delete_finish", "gv_gather")

_kernels = RawKernels(SOURCE, "GraphVine")


#: the launcher in use; tests swap in a serial host emulation of the same source
launcher = _kernels.launch


def launch(xp, name: str, n: int, *args) -> None:
    """Run kernel ``name`` over ``n`` items; does nothing when ``n`` is 0 (arrays may be empty)."""
    if int(n) <= 0:
        return
    launcher(xp, name, int(n), tuple(args))


