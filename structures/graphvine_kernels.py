"""Fused CUDA kernels for GraphVine's GPU path (graphvine.txt sections 4.2, 4.5, 4.6).

The array program in :mod:`structures.graphvine` stays the reference (it runs on
NumPy and, with ``fused=False``, on CuPy); these kernels replace its
latency-bound steps on the GPU, where every level of a tree walk and every
boolean compaction costs a launch and a device->host sync:

* ``gv_walk`` - every block of the touched trees in CBT order, one thread per
  (vertex, CBT index k) following the bits of ``k+1`` from the root (section
  4.5.1 bit strings) instead of one Python step per tree level;
* ``gv_walk_fill`` (small batches; large ones: ``gv_walk`` then ``gv_fill_rows``,
  which at 1e6 keys cost less device time than every lane searching and walking) -
  the walk of a batch's trees and, in the same pass, the slot
  and the segment of every live entry of their rows (8 lanes per block), so that
  the kernels over live entries (``gv_find``, ``gv_insert_write``, ``gv_delete_move``)
  read them instead of binary-searching the segments' running sums and the chunk
  table per entry;
* ``gv_locate`` - the same walk for explicit (vertex, k) pairs;
* ``gv_find`` - Algorithm 3's one-thread-per-live-edge search of a whole batch
  of sorted keys (each edge gallops through its own vertex's keys); it copies the
  touched rows aside for the merge / compaction, and in delete mode also marks the
  found entries, counts them per vertex and decrements the in-degrees;
* ``gv_activate`` - fresh edge sentinels for endpoints that were not live;
  ``gv_new_vertices`` the same for a vertex batch's new ids (one launch for the
  vertex phase's insertions);
* ``gv_key_blocks`` - the walk's per-key segments (blocks and live edges at each
  source's first key);
* ``gv_insert_plan`` / ``gv_plan_scan`` - the insert's pop plan per key (new
  edges, class, block size, blocks to pop, and the re-homing: a vertex whose new
  count leaves its class two classes behind moves its merged row whole into blocks
  of the right class and pushes its old tree back), and the per-class pop and push
  offsets by chunks of 32 keys (per-chunk column sums, their prefix sum over the
  chunks, then each key adds the keys before it in its chunk: no sort by class);
* ``gv_insert_write`` / ``gv_insert_finish`` - Algorithm 1 after the prefix-sum
  pop (Figure 3), keeping rows sorted: the old row and the new keys of each vertex
  merged (each entry written once at its merged position, in the old blocks or
  the popped ones), weight upserts; popped blocks linked under their parents,
  sentinels;
* ``gv_delete_plan`` / ``gv_delete_move`` / ``gv_delete_finish`` - deletion (the plan also checks
  whether a vertex is left misplaced, to be re-homed) with order-preserving
  compaction (each survivor shifts left by the deletions before it in its row: the
  found keys of its vertex below its own, a prefix count over the keys, not over the
  live entries), emptied blocks unlinked and pushed to the queue tail at per-class
  offsets computed per vertex;
* ``gv_prep`` - a CSR batch's keys (in order by CSRBatch's promise, which it
  checks), the walk's segments, the find's flags and the id checks, in one launch;
* ``gv_scan`` (``scan_rows``, ``scan_columns``) - the large
  batches' prefix sums (the walk's running sums, the running counts of new or found
  keys, the plans' chunk sums down their columns) in one pass (decoupled look-back:
  each tile publishes its sum, then its prefix from the tiles before it), totals straight
  into the io buffer; one launch where CuPy's ``cumsum`` cost the host 100-140 us a call
  while the device waited;
* ``gv_prep_block`` / ``gv_insert_plan_block`` / ``gv_delete_plan_block`` - small
  batches (up to 8,192 keys: a replay's 1e4-event batch carries 5-6k edges): one block
  of 1,024 threads does a step together with the prefix sums the host otherwise
  asks CuPy for (block scans by warp shuffles), the flag initialisation, the
  activation of the endpoints, and writes the sizes the host needs into the io
  buffer, which the host reads in one transfer per sync.  A 1,000-edge insert or
  delete is then 6 launches and 2 reads (the one-sync path: one read; both edge
  phases of a batch as CUDA graphs: one read for the two, gv_prep_block of the
  insert reading the delete's io through its device parameters);
* the queue table (ring starts, sizes, heads, tails) lives on the device in two
  parities: a phase's kernels read one, its finish kernel writes the other advanced
  by the phase's totals, so the host uploads it only after it changed the table
  itself (a pool growth, the array program's pops and pushes);
* ``gv_query_i32`` / ``gv_query_i64`` - batched edge queries: a binary search of
  the source's sorted row (over its blocks by first column, then inside one);
* the key-side path (``keyside`` / ``keyside_small`` in graphvine.py): ``gv_walk_keys``
  (the walk's table, no listing of the live entries), ``gv_rank`` (each key's
  rank in its sorted row by a binary search, the found / new flags, in-place
  weight upserts and the in-degree drops of deletes, and per vertex the least
  rank of its changed keys by an atomic minimum), ``gv_stage`` (the suffix of each
  touched row from that rank on copied aside, entries leaving the pool cleared)
  and ``gv_insert_scatter`` / ``gv_delete_scatter`` (each staged entry written at
  its shifted position, the shift from a pointer through its vertex's keys
  advanced as the lane's positions grow; the new keys at rank + new keys before
  them).  Passes over live entries: only the changed suffixes, twice (stage,
  scatter), instead of every entry of the touched rows three times;
* ``gv_tile_keys`` / ``gv_insert_shift`` / ``gv_delete_shift`` (the key side's large batches, the default):
  the changed suffixes moved in one pass, in place - tiles of entries taken in dependency order from a
  counter, each read into shared memory, published, and written once the tiles it overwrites have read
  theirs; each tile first builds a table of its entries' rows and shifts in shared memory from the keys
  that fall in it, and reads each row's fields from one 32-byte record (``gv_shift_row``, written at the
  row's first key by gv_tile_keys); positions and counts are 32-bit there (``SHIFT_ENTRIES``; see the
  comment above the kernels), and so are the tiles' pool slots (``SHIFT_POOL_ENTRIES``).  An insert's new
  keys that take the slots of moved entries are written by the tiles too, after their wait;
  ``gv_insert_scatter`` writes the others (past the old counts, in popped blocks) beside the shift;
* the one-sync kernels take a negative key count to read it from the device
  (``io[GV_IO_N]``, written by gv_prep_block) and their plan rows a separate
  stride, so that a CUDA graph captured once replays any small batch:
  gv_prep_block then reads the batch from device parameters ``prm``.

Cost of the sorted rows against the unsorted layout (tail filling): per live
entry of a touched row, ``gv_find`` also reads its weight and writes an 8-byte
copy (``tcol`` / ``tw``), and the merge / compaction reads that copy and rewrites
the entries that shift (on average half of a touched row for a random insert,
everything after the first deletion for a delete) where tail filling moved at
most one entry per inserted or deleted edge.  The passes are the same (one
thread per live entry of the touched rows already ran to find the keys); the
memory traffic over those rows grows from ~4 to ~20-28 bytes per entry.

Passes over the live entries of the touched rows per batch: insert - gv_walk_fill
or gv_fill_rows (list), gv_find (copy + search), gv_insert_write (merge); delete -
the same listing, gv_find, gv_delete_move.  Everything else runs over the batch's keys or the
walked blocks.

Blocks have the size of their vertex's class (``class_size[block_class[v]]``)
and sit at the entry base given by the pool's chunk table (``gv_base``: a
binary search over the few chunks); a vertex's pops come from its class's ring
``queue[q_start[c] + (head[c] + excl + j) % q_size[c]]``, ``excl`` being the
per-class prefix sum computed by the caller.  Threads that work on live edges
find their (segment, position) by a binary search on the running sum of the
segments' edge counts, so no thread is spent on empty entries.

All kernels but the shifts and the scans (which take tiles from their grid) use grid-stride
loops; indices are 64-bit but for the shifts' positions and counts.  Concurrent writes are
arranged so that every location has one writer per launch (the comments name
the owner).  The source is one string, ``SOURCE``, so that
``tests/test_graphvine_kernels_compile.py`` can compile it with nvcc and, with a
small host prelude, run it serially on the CPU as an emulation.
"""
from __future__ import annotations

import re

import numpy as np

from .backend import count_launch
from .block_primitives import block_exclusive_scan, upper_bound
from .raw_kernels import RawKernels, i32, i64  # i32 / i64: used by callers too

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
// the one-block kernels (small batches: one launch for a step and its prefix sums): GV_BLOCK_THREADS
// threads, at most GV_BLOCK_KEYS keys, at most GV_MAX_CLASSES size classes.  The host emulation runs a
// block as one thread (blockDim.x == 1) and redefines GV_BLOCK_LOOP to visit its items in several orders.
#define GV_BLOCK_THREADS 1024
#define GV_BLOCK_KEYS 8192
#define GV_MAX_CLASSES 16
#define GV_MAX_WIDTH (2 * GV_MAX_CLASSES + 2)
#ifndef GV_BLOCK_LOOP
#define GV_BLOCK_LOOP(i, n) for (long long i = threadIdx.x; i < (n); i += blockDim.x)
#endif
// the io buffer (int64 slots) the host reads in one transfer: sync 1 reads [0, 7), sync 2 [7, 9 + width)
#define GV_IO_BAD 0          // keys not above the previous one (the batch breaks CSRBatch's promise)
#define GV_IO_NEG 1          // negative ids
#define GV_IO_TOP 2          // the largest id
#define GV_IO_BLOCKS 3       // blocks of the keys' trees (the walk's size)
#define GV_IO_LIVE 4         // live edges of their rows
#define GV_IO_NEWV 5         // vertices the one-block prep activated
#define GV_IO_ACTIVATED 6    // 1 when the one-block prep activated the batch's endpoints
#define GV_IO_NEWV2 7        // vertices gv_activate activated (the host zeroes it first)
#define GV_IO_COUNT 8        // new edges (insert) / removed edges (delete)
#define GV_IO_STOP 9         // the one-sync path stops after gv_prep_block (bad or negative ids, an id past
                             // the dictionary, rows larger than the workspace): the host takes another path
#define GV_IO_HOLD 10        // the insert's pops may grow the pool: the host decides, then writes
#define GV_IO_TOTALS 11      // the plan's column totals (width of them)
#define GV_IO_N (GV_IO_TOTALS + GV_MAX_WIDTH)   // the batch's keys (gv_prep_block writes it: the one-sync
                             // kernels launched with a negative key count read it, as a CUDA graph's do)
// kernels of the one-sync path run only while gate[0] (STOP) and gate[1] (HOLD) are 0; the other paths
// pass a zero gate.  Their sizes: a scalar argument, or when it is negative dsz[0] (blocks) / dsz[1]
// (live edges) on the device (the io buffer's slots 3 and 4, which gv_prep_block writes).
#define GV_GATED(gate) if ((gate)[0] | (gate)[1]) return
#define GV_SIZE(arg, dev) ((arg) >= 0 ? (arg) : (dev))
#define GV_KEYS(arg, dsz) GV_SIZE(arg, (dsz)[GV_IO_N - GV_IO_BLOCKS])

// the queue table of one parity: q[c] ring start, q[C + c] ring size, q[2C + c] head, q[3C + c] tail
#define GV_QSTART(q, C) (q)
#define GV_QSIZE(q, C) ((q) + (C))
#define GV_QHEAD(q, C) ((q) + 2 * (C))
#define GV_QTAIL(q, C) ((q) + 3 * (C))

// the next parity of the queue table: heads advanced by the pops of column pop_col + c, tails by
// the pushes of column push_col + c (columns of the plan's totals tot; a negative column adds nothing)
__device__ void gv_queue_next(const long long* q, long long* qn, const long long C, const long long* tot,
                              const long long pop_col, const long long push_col)
{
    for (long long c = 0; c < C; ++c) {
        qn[c] = q[c];
        qn[C + c] = q[C + c];
        qn[2 * C + c] = q[2 * C + c] + (pop_col >= 0 ? tot[pop_col + c] : 0);
        qn[3 * C + c] = q[3 * C + c] + (push_col >= 0 ? tot[push_col + c] : 0);
    }
}

@BLOCK_EXCL@
// the block's thread r owns items [lo, hi) of n (contiguous ranges, so that a scan is in item order)
#define GV_RANGE(n, lo, hi) \
    const long long gv_per_ = ((n) + blockDim.x - 1) / blockDim.x; \
    const long long lo = (long long)threadIdx.x * gv_per_ < (n) ? (long long)threadIdx.x * gv_per_ : (n); \
    const long long hi = lo + gv_per_ < (n) ? lo + gv_per_ : (n)

// claim vertex v: alive[v] from false to true by a CAS of the aligned 32-bit word holding it; true for
// the one thread that set it (so that the activated vertices are counted exactly once)
__device__ bool gv_claim(bool* alive, long long v)
{
    unsigned long long addr = (unsigned long long)(alive + v);
    unsigned int* word = (unsigned int*)(addr & ~3ULL);
    unsigned int shift = (unsigned int)(addr & 3ULL) * 8u;
    unsigned int old = *((volatile unsigned int*)word);
    while (((old >> shift) & 0xFFu) == 0u) {
        unsigned int seen = atomicCAS(word, old, old | (1u << shift));
        if (seen == old) return true;
        old = seen;
    }
    return false;
}

@UPPER_BOUND@

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

// the walk and the listing of the live entries of a batch's rows in one pass: GV_WALK_LANES lanes per
// table row t (block k of the vertex of key i, t = ends[i] - nb[i] + k; ends: running sums of the
// blocks at each source's first key).  Every lane walks to the block (the bits of k+1 from the root,
// section 4.5.1), lane 0 records it (table[t], tidx[t] = i, tk[t] = k), and the lanes write, for the
// block's entries j = lane, lane + lanes, ... at positions p = k * bs + j below the vertex's count,
// tslot[e] (the entry's pool slot) and tseg[e] = i of live entry e = cnt_ends[i] - cnt[i] + p.  The
// kernels over live entries then read their segment and slot instead of searching the segments'
// running sums and the chunk table for every entry.
#define GV_FILL_LANES 8
// gv_walk_fill's lanes per table row: a warp per block, so that the largest blocks (4,096 entries) cost 128
// steps of a lane and the writes of a step are consecutive (with 8 lanes the big blocks' 512 steps made
// it the one-sync path's longest kernel: 21 / 34 us of a 1,000-edge delete / insert on an H200)
#define GV_WALK_LANES 32
extern "C" __global__
void gv_walk_fill(const long long* ukeys, const long long* ends, const long long nseg_arg, const long long total_arg,
                  const int* root_block, const int* left, const int* right, const long long* cnt,
                  const long long* cnt_ends, const signed char* block_class, const long long* class_size,
                  GV_CHUNKS, int* table, long long* tidx, long long* tk, long long* tslot, int* tseg,
                  const long long* dsz, const long long* gate)
{
    GV_GATED(gate);
    const long long total = GV_SIZE(total_arg, dsz[0]);
    const long long nseg = GV_KEYS(nseg_arg, dsz);
    GV_GRID_LOOP(q, total * GV_WALK_LANES) {
        long long t = q / GV_WALK_LANES;
        long long lane = q % GV_WALK_LANES;
        long long i = gv_upper_bound(ends, nseg, t);
        long long k = t - (i > 0 ? ends[i - 1] : 0);
        long long v = ukeys[i] >> 32;
        int id = gv_walk_to(root_block[v], k, left, right);
        if (lane == 0) {
            table[t] = id;
            tidx[t] = i;
            tk[t] = k;
        }
        long long bs = class_size[block_class[v]];
        long long base = gv_base(id, GV_CHUNK_ARGS);
        long long row = cnt_ends[i] - cnt[i] + k * bs;
        long long m = cnt[i] - k * bs < bs ? cnt[i] - k * bs : bs;
        for (long long j = lane; j < m; j += GV_WALK_LANES) {
            tslot[row + j] = base + j;
            tseg[row + j] = (int)i;
        }
    }
}

// large batches (the two-sync path): gv_walk, then the slot and segment of every live entry of the walked
// rows (gv_walk_fill's listing, with each table row's vertex and CBT index read from gv_walk's tidx / tk
// instead of searched for and walked by all 8 lanes, which at 1e6 keys costs more than the second launch):
// GV_FILL_LANES lanes per table row t (block tk[t] of the vertex of key tidx[t]) write, for the
// block's entries j = lane, lane + lanes, ... at positions p = k * bs + j below the vertex's count,
// tslot[e] (the entry's pool slot) and tseg[e] = i of live entry e = cnt_ends[i] - cnt[i] + p.  The
// kernels over live entries then read their segment and slot instead of searching the segments'
// running sums and the chunk table for every entry.
extern "C" __global__
void gv_fill_rows(const int* table, const long long* tidx, const long long* tk, const long long total,
                  const long long* ukeys, const long long* cnt, const long long* cnt_ends,
                  const signed char* block_class, const long long* class_size, GV_CHUNKS, long long* tslot,
                  int* tseg)
{
    GV_GRID_LOOP(q, total * GV_FILL_LANES) {
        long long t = q / GV_FILL_LANES;
        long long lane = q % GV_FILL_LANES;
        long long i = tidx[t];
        long long k = tk[t];
        long long bs = class_size[block_class[ukeys[i] >> 32]];
        long long base = gv_base(table[t], GV_CHUNK_ARGS);
        long long row = cnt_ends[i] - cnt[i] + k * bs;
        long long m = cnt[i] - k * bs < bs ? cnt[i] - k * bs : bs;
        for (long long j = lane; j < m; j += GV_FILL_LANES) {
            tslot[row + j] = base + j;
            tseg[row + j] = (int)i;
        }
    }
}

// first index in [i, n) whose key is >= key, galloping from i (keys ascending; the keys of one
// vertex are few and follow i, so this reads a handful of cached entries)
__device__ long long gv_gallop(const long long* keys, long long i, long long n, long long key)
{
    long long lo = i, hi = i, step = 1;            // keys[lo - 1] < key (or lo == i)
    while (hi < n && keys[hi] < key) { lo = hi + 1; hi = i + step; step <<= 1; }
    if (hi > n) hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (keys[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// the first key of source v at or before key i (keys ascending): a gallop back from i (i - 1, i - 2, i - 4, ...), then
// a binary search inside the last step.  Most keys are a few keys from their row's first, whose keys share a cache
// line; a binary search from 0 read log2(i) scattered keys for each of them (H100: gv_rank 0.093 / 0.118 ms and
// gv_insert_plan 0.050 against 0.101 / 0.126 and 0.058; bench-results/2026-11-26-session22/call8-gallop)
__device__ long long gv_first_of(const long long* ukeys, long long i, long long v)
{
    if (i == 0 || (ukeys[i - 1] >> 32) != v) return i;
    long long hi = i - 1, lo = -1, step = 1;       // ukeys[hi] is v's; the first key is in (lo, hi]
    while (hi - step >= 0) {
        if ((ukeys[hi - step] >> 32) != v) {
            lo = hi - step;
            break;
        }
        hi -= step;
        step <<= 1;
    }
    while (lo + 1 < hi) {
        const long long mid = (lo + hi) >> 1;
        if ((ukeys[mid] >> 32) != v) lo = mid; else hi = mid;
    }
    return hi;
}

// one thread per live edge e of the keys' sources (segment tseg[e] = the vertex's first key, slot
// tslot[e]: gv_walk_fill / gv_fill_rows): the entry is copied to tcol[e] / tw[e] (the compaction and the merge read
// these, never the pool they rewrite), and looked up among the vertex's keys.  flag[key] = mark for a
// key found (its one writer: keys are distinct and an edge is stored once): the insert's "new" flags
// start at 1 and mark 0, the delete's "found" flags start at 0 and mark 1.  Delete mode also
// decrements in_degree[col] of a hit.
extern "C" __global__
void gv_find(const int* tseg, const long long* tslot, const long long* ukeys, const long long nkeys_arg,
             const int* block_cols, const float* block_weights, const long long live_arg, signed char* flag,
             int* tcol, float* tw, const int delete_mode, const int mark, int* in_degree, const long long* dsz,
             const long long* gate)
{
    GV_GATED(gate);
    const long long live = GV_SIZE(live_arg, dsz[1]);
    const long long nkeys = GV_KEYS(nkeys_arg, dsz);
    GV_GRID_LOOP(e, live) {
        long long i = tseg[e];
        long long v = ukeys[i] >> 32;
        long long slot = tslot[e];
        int col = block_cols[slot];
        tcol[e] = col;
        tw[e] = block_weights[slot];
        long long key = (v << 32) | (long long)(unsigned int)col;
        long long lo = gv_gallop(ukeys, i, nkeys, key);
        bool hit = lo < nkeys && ukeys[lo] == key;
        if (hit) {
            flag[lo] = (signed char)mark;
            if (delete_mode) atomicAdd(&in_degree[col], -1);
        }
    }
}

// vertex v gets an empty edge sentinel and in-degree 0
__device__ void gv_fresh_vertex(long long v, long long* edge_count, int* num_blocks, int* root_block,
                                int* last_block, int* last_offset, int* in_degree, signed char* block_class)
{
    edge_count[v] = 0;
    num_blocks[v] = 0;
    root_block[v] = GV_EMPTY;
    last_block[v] = GV_EMPTY;
    last_offset[v] = 0;
    in_degree[v] = 0;
    block_class[v] = GV_EMPTY;
}

// ... and is alive (alive set last)
__device__ void gv_empty_vertex(long long v, bool* alive, long long* edge_count, int* num_blocks, int* root_block,
                                int* last_block, int* last_offset, int* in_degree, signed char* block_class)
{
    gv_fresh_vertex(v, edge_count, num_blocks, root_block, last_block, last_offset, in_degree, block_class);
    alive[v] = true;
}

// endpoints (sources then destinations of keys) that are not live get an empty sentinel: the thread
// that claims a vertex (gv_claim) writes it and counts it in *count, the others have nothing to do
// (gate: a zero gate outside the large batches' launches before sync 1, which pass io's BAD and NEG)
extern "C" __global__
void gv_activate(const long long* keys, const long long n, bool* alive,
                 long long* edge_count, int* num_blocks, int* root_block, int* last_block,
                 int* last_offset, int* in_degree, signed char* block_class, unsigned long long* count,
                 const long long* gate)
{
    GV_GATED(gate);
    GV_GRID_LOOP(t, 2 * n) {
        long long v = t < n ? keys[t] >> 32 : keys[t - n] & GV_LOW32;
        if (alive[v] || !gv_claim(alive, v)) continue;
        gv_fresh_vertex(v, edge_count, num_blocks, root_block, last_block, last_offset, in_degree, block_class);
        atomicAdd(count, 1ULL);
    }
}

// new vertices (distinct ids that are not live): an empty edge sentinel, in-degree 0, alive
extern "C" __global__
void gv_new_vertices(const int* ids, const long long n, bool* alive, long long* edge_count,
                     int* num_blocks, int* root_block, int* last_block, int* last_offset, int* in_degree,
                     signed char* block_class)
{
    GV_GRID_LOOP(t, n) {
        gv_empty_vertex((long long)ids[t], alive, edge_count, num_blocks, root_block, last_block, last_offset,
                        in_degree, block_class);
    }
}

#ifndef GV_HOST_ATOMIC_MAX
__device__ void gv_atomic_max(unsigned long long* a, unsigned long long v) { atomicMax(a, v); }
#endif

// a CSR edge batch (rows ascending and distinct, cols ascending within a row: CSRBatch's promise,
// checked here), one thread per edge e: its key; at the first edge of a row whose vertex is in the
// dictionary, the vertex's blocks and live edges (0 elsewhere: the walk's segments, as gv_key_blocks
// makes them for sorted keys).  stats[0] counts edges whose key is not above the previous one (then
// the caller sorts), stats[1] negative ids, stats[2] is the largest id (read before the atomic, so
// that few threads contend for it).
// edge e of a CSR batch: its key, and its source's blocks and live edges at a row's first edge (0
// elsewhere); stats[0] += out of order, stats[1] += negative id, stats[2] = max(largest id)
__device__ void gv_prep_at(long long e, const int* rows, const long long* offsets, const long long nrows,
                           const int* cols, const long long cap, const int* num_blocks,
                           const long long* edge_count, long long* keys, long long* nbv, long long* cnt,
                           unsigned long long* stats)
{
    long long r = gv_upper_bound(offsets + 1, nrows, e);
    long long v = rows[r];
    long long d = cols[e];
    keys[e] = (v << 32) | (d & GV_LOW32);
    bool first = e == offsets[r];
    bool ok = first && v >= 0 && v < cap;
    nbv[e] = ok ? num_blocks[v] : 0;
    cnt[e] = ok ? edge_count[v] : 0;
    bool bad = first ? (r > 0 && rows[r - 1] >= v) : (cols[e - 1] >= d);
    if (bad) atomicAdd(&stats[0], 1ULL);
    if (v < 0 || d < 0) {
        atomicAdd(&stats[1], 1ULL);
    } else {
        unsigned long long top = (unsigned long long)(v > d ? v : d);
        if (top > stats[2]) gv_atomic_max(&stats[2], top);
    }
}

// gv_prep of a large batch: an edge with an id past the dictionary also counts in stats[0] (the host sorts such a
// batch, and grows the dictionary on that path), and an edge with a negative id or one past it gets key 0: the
// plan's kernels, which the host queues before it reads stats (gv_insert_plan, gv_delete_plan, ungated), then read
// only vertices of the dictionary, whatever the batch (their results are dropped when stats[0] or stats[1] is set)
extern "C" __global__
void gv_prep(const int* rows, const long long* offsets, const long long nrows, const int* cols,
             const long long n, const long long cap, const int* num_blocks, const long long* edge_count,
             long long* keys, long long* nbv, long long* cnt, unsigned long long* stats, signed char* flag,
             const int flag_init)
{
    GV_GRID_LOOP(e, n) {
        gv_prep_at(e, rows, offsets, nrows, cols, cap, num_blocks, edge_count, keys, nbv, cnt, stats);
        flag[e] = (signed char)flag_init;
        const long long v = keys[e] >> 32, d = (long long)cols[e];
        if (v < 0 || d < 0 || v >= cap || d >= cap) {
            keys[e] = 0;
            if (v >= 0 && d >= 0) atomicAdd(&stats[GV_IO_BAD], 1ULL);
        }
    }
}

// gv_prep of a small batch (n <= GV_BLOCK_KEYS) in one block, with what the host otherwise does
// around it: the running sums of the walk's segments (seg rows 0 nbv, 1 their inclusive sum, 2 cnt,
// 3 theirs; rows ps apart), flag[e] = flag_init (the find's flags), and, when activate is set and the
// ids are all non-negative and inside the dictionary, the endpoints' activation (gv_activate's,
// counted).  io slots 0-6 get the sizes and checks (sync 1 reads them), io[GV_IO_N] the key count.
// A negative n_arg (a CUDA graph's launch, whose arguments are fixed): the batch comes from the device
// parameters prm = (n, nrows, rows, offsets, cols, weights or 0, after, slot) and its weights are copied
// to wout.  after (0: none) is the io buffer of a phase queued before this one (the combined edge phases:
// the delete's, read in the same transfer); when its STOP or its slot (the delete's re-homing total) is
// set, that phase did not finish on the device, so this one does nothing but STOP (the host runs it after).
extern "C" __global__ __launch_bounds__(GV_BLOCK_THREADS)
void gv_prep_block(const int* rows_arg, const long long* offsets_arg, const long long nrows_arg,
              const int* cols_arg, const long long n_arg, const long long cap, const int* num_blocks,
              long long* edge_count, long long* keys, long long* seg, signed char* flag, const int flag_init,
              const int activate, bool* alive, int* root_block, int* last_block, int* last_offset,
              int* in_degree, signed char* block_class, int* num_blocks_w, long long* io, const long long wb,
              const long long wl, const long long ps, const long long* prm, float* wout)
{
    __shared__ long long sh[GV_BLOCK_THREADS / 32 + 1];
    __shared__ unsigned long long st[4];
    const bool by_prm = n_arg < 0;
    const long long* after = by_prm && prm[6] ? (const long long*)prm[6] : (const long long*)0;
    const bool skip = after && (after[GV_IO_STOP] | after[prm[7]]) != 0;
    const long long n = by_prm ? (skip ? 0 : prm[0]) : n_arg;
    const long long nrows = by_prm ? prm[1] : nrows_arg;
    const int* rows = by_prm ? (const int*)prm[2] : rows_arg;
    const long long* offsets = by_prm ? (const long long*)prm[3] : offsets_arg;
    const int* cols = by_prm ? (const int*)prm[4] : cols_arg;
    const float* win = by_prm ? (const float*)prm[5] : (const float*)0;
    long long* nbv = seg;
    long long* ends = seg + ps;
    long long* cnt = seg + 2 * ps;
    long long* cnt_ends = seg + 3 * ps;
    if (threadIdx.x == 0) st[0] = st[1] = st[2] = st[3] = 0;
    __syncthreads();
    GV_RANGE(n, lo, hi);
    long long sb = 0, sc = 0;
    for (long long e = lo; e < hi; ++e) {
        gv_prep_at(e, rows, offsets, nrows, cols, cap, num_blocks, edge_count, keys, nbv, cnt, st);
        flag[e] = (signed char)flag_init;
        if (by_prm) wout[e] = win ? win[e] : 1.0f;
        sb += nbv[e];
        sc += cnt[e];
    }
    long long tb, tc;
    long long rb = gv_block_excl(sb, sh, &tb);
    long long rc = gv_block_excl(sc, sh, &tc);
    for (long long e = lo; e < hi; ++e) {
        rb += nbv[e];
        ends[e] = rb;
        rc += cnt[e];
        cnt_ends[e] = rc;
    }
    const bool act = activate && st[1] == 0 && st[2] < (unsigned long long)cap;
    if (act) {
        GV_BLOCK_LOOP(t, 2 * n) {
            long long v = t < n ? keys[t] >> 32 : keys[t - n] & GV_LOW32;
            if (alive[v] || !gv_claim(alive, v)) continue;
            gv_fresh_vertex(v, edge_count, num_blocks_w, root_block, last_block, last_offset, in_degree,
                            block_class);
            atomicAdd(&st[3], 1ULL);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        // the one-sync path (wb >= 0: the workspace's blocks and entries) goes on only for a batch in
        // order, with valid ids, activated (an insert) and rows that fit the workspace
        bool stop = skip || (wb >= 0 && (st[0] > 0 || st[1] > 0 || (activate && !act) || tb > wb || tc > wl));
        io[GV_IO_STOP] = stop ? 1 : 0;
        io[GV_IO_HOLD] = 0;
        io[GV_IO_BAD] = (long long)st[0];
        io[GV_IO_NEG] = (long long)st[1];
        io[GV_IO_TOP] = (long long)st[2];
        io[GV_IO_BLOCKS] = tb;
        io[GV_IO_LIVE] = tc;
        io[GV_IO_NEWV] = (long long)st[3];
        io[GV_IO_ACTIVATED] = act ? 1 : 0;
        io[GV_IO_N] = n;
    }
}

// per sorted key i: the blocks and live edges of its source when i is the source's first key and
// the source is in the dictionary, 0 otherwise (the walk's and the live-edge scan's segments)
extern "C" __global__
void gv_key_blocks(const long long* keys, const long long n, const long long cap, const int* num_blocks,
                   const long long* edge_count, long long* nbv, long long* cnt)
{
    GV_GRID_LOOP(i, n) {
        long long v = keys[i] >> 32;
        bool first = i == 0 || (keys[i - 1] >> 32) != v;
        bool ok = first && v >= 0 && v < cap;
        nbv[i] = ok ? num_blocks[v] : 0;
        cnt[i] = ok ? edge_count[v] : 0;
    }
}

// the class of a vertex of cnt edges: about cnt / target entries a block (the number of class sizes
// <= that, less one); and whether a tree of class c holding cnt edges is to be re-homed (its
// count's class is rehome classes or more away, or the top one while c is below it)
__device__ long long gv_class_of(long long cnt, const long long* class_size, int nclasses, long long target)
{
    long long per = ((cnt > 1 ? cnt : 1) + target - 1) / target;
    long long c = 0;
    while (c + 1 < nclasses && class_size[c + 1] <= per) ++c;
    return c;
}

__device__ bool gv_misplaced(long long c, long long cnt, const long long* class_size, int nclasses,
                             long long target, long long rehome)
{
    long long want = gv_class_of(cnt, class_size, nclasses, target);
    long long d = want > c ? want - c : c - want;
    return cnt > 0 && (d >= rehome || (want == nclasses - 1 && c < nclasses - 1));
}

// per-class prefix sums of a plan by chunks of GV_SCAN_CHUNK keys (instead of a sort by class): the
// plan kernel adds each key's values into its chunk's row of sums (atomics: at most GV_SCAN_CHUNK
// writers a cell), the caller's column prefix sum over the chunks gives csum (inclusive), and a key's
// exclusive sum in a column is its chunk's predecessor row plus the values of the keys before it in
// its chunk.  gv_cell is the value of key i in column col: mode 0, the insert plan (need at its class
// column, free at nclasses + old class, need at 2 nclasses, the re-homing flag at 2 nclasses + 1);
// mode 1, the delete plan (freed blocks at its class column, the misplaced flag at nclasses).
#define GV_SCAN_CHUNK 32
__device__ long long gv_cell(const int mode, const long long* plan, const long long ps, const long long i,
                             const long long col, const long long nc)
{
    const long long n = ps;            // plan rows are ps apart (the keys' count, or the graph buffers' room)
    if (mode == 0) {
        long long c = plan[4 * n + i], need = plan[6 * n + i], fr = plan[7 * n + i], oc = plan[8 * n + i];
        return (col == c ? need : 0) + (fr > 0 && col == nc + oc ? fr : 0) + (col == 2 * nc ? need : 0)
               + (fr > 0 && col == 2 * nc + 1 ? 1 : 0);
    }
    long long c = plan[n + i], fr = plan[3 * n + i], mis = plan[4 * n + i];
    return (col == c ? fr : 0) + (col == nc ? mis : 0);
}

__device__ long long gv_excl(const int mode, const long long* plan, const long long ps, const long long i,
                             const long long col, const long long nc, const long long* csum,
                             const long long width)
{
    long long ch = i / GV_SCAN_CHUNK;
    long long v = ch > 0 ? csum[(ch - 1) * width + col] : 0;
    for (long long j = ch * GV_SCAN_CHUNK; j < i; ++j) v += gv_cell(mode, plan, ps, j, col, nc);
    return v;
}

// (S: unsigned long long for the grid path's sums in global memory, unsigned int for a one-block plan's in
// shared memory, whose sums stay below 2^32: block ids are int32)
template <typename S>
__device__ void gv_add_cell(S* sums, long long i, long long width, long long col, long long v)
{
    if (v != 0) atomicAdd(&sums[(i / GV_SCAN_CHUNK) * width + col], (S)v);
}

// the insert's pop plan, one thread per sorted distinct key i (v = its source): rows of plan
// (each n long) 0 sfirst (the vertex's first key), 1 add (its new keys), 2 old_count, 3 old_blocks
// (the old blocks the merged row keeps: 0 when re-homed), 4 class, 5 block size, 6 need (blocks to
// pop; 0 but at the first key), 7 free (old blocks to push back: the re-homed vertex's tree, at its
// first key), 8 old class.  A vertex with blocks keeps its class unless its new count makes it
// misplaced (gv_misplaced): then it is re-homed in place - its merged row goes whole into blocks
// popped from the class of its new count and its old tree goes back to its class's queue.  A vertex
// without blocks takes the class of its new count.  newc: inclusive prefix count of new keys.  The
// key's values go into its chunk's row of sums (width = 2 nclasses + 2 columns, gv_cell mode 0).
template <typename S>
__device__ void gv_insert_plan_at(long long i, const long long* ukeys, const long long n, const long long* newc,
                                  const long long* edge_count, const int* num_blocks,
                                  const signed char* block_class, const long long* class_size,
                                  const int nclasses, const long long target, const long long rehome,
                                  long long* plan, const long long ps, const long long width, S* sums)
{
    long long v = ukeys[i] >> 32;
    long long s = gv_first_of(ukeys, i, v);         // the vertex's first key
    long long end = gv_gallop(ukeys, s, n, (v + 1) << 32);
    long long add = newc[end - 1] - (s > 0 ? newc[s - 1] : 0);
    long long oc = edge_count[v], ob = num_blocks[v];
    long long oldc = block_class[v];
    long long c = oldc;
    bool moves = ob > 0 && add > 0 && gv_misplaced(oldc, oc + add, class_size, nclasses, target, rehome);
    if (ob == 0 || moves)
        c = gv_class_of(oc + add, class_size, nclasses, target);
    long long keep = moves ? 0 : ob;
    long long bs = class_size[c];
    long long need = i == s ? (oc + add + bs - 1) / bs - keep : 0;
    long long fr = (i == s && moves) ? ob : 0;
    plan[i] = s;
    plan[ps + i] = i == s ? add : 0;
    plan[2 * ps + i] = oc;
    plan[3 * ps + i] = keep;
    plan[4 * ps + i] = c;
    plan[5 * ps + i] = bs;
    plan[6 * ps + i] = need;
    plan[7 * ps + i] = fr;
    plan[8 * ps + i] = oldc;
    gv_add_cell(sums, i, width, c, need);
    if (fr > 0) {
        gv_add_cell(sums, i, width, nclasses + oldc, fr);
        gv_add_cell(sums, i, width, 2 * nclasses + 1, 1);
    }
    gv_add_cell(sums, i, width, 2 * nclasses, need);
}

extern "C" __global__
void gv_insert_plan(const long long* ukeys, const long long n, const long long* newc,
                    const long long* edge_count, const int* num_blocks, const signed char* block_class,
                    const long long* class_size, const int nclasses, const long long target,
                    const long long rehome, long long* plan, const long long width, unsigned long long* sums)
{
    GV_GRID_LOOP(i, n) {
        gv_insert_plan_at(i, ukeys, n, newc, edge_count, num_blocks, block_class, class_size, nclasses, target,
                          rehome, plan, n, width, sums);
    }
}

// per key i: cexcl[i] (the pop offset in its class's ring), pexcl[i] (the push offset of its freed
// tree in its old class's ring) and needc[i] (inclusive over all keys) from the chunk sums' column
// prefix sums csum (gv_excl)
// (gv_excl's three sums in one pass over the keys before i in its chunk: each key's plan is read once,
// not once a column.  In gv_cell's mode 0, column c < nc sums the need of keys of class c, column nc + oc
// the free of keys whose old class is oc, column 2 nc every need.)
template <typename C>
__device__ void gv_plan_scan_at(long long i, const long long* plan, const long long ps, const long long nc,
                                const long long width, const C* csum, long long* cexcl, long long* pexcl,
                                long long* needc)
{
    const long long n = ps;
    long long c = plan[4 * n + i], need = plan[6 * n + i], fr = plan[7 * n + i], oc = plan[8 * n + i];
    const long long ch = i / GV_SCAN_CHUNK;
    const C* prev = ch > 0 ? csum + (ch - 1) * width : csum;
    long long ce = ch > 0 ? (long long)prev[c] : 0, pe = ch > 0 && fr > 0 ? (long long)prev[nc + oc] : 0;
    long long ne = ch > 0 ? (long long)prev[2 * nc] : 0;
    for (long long j = ch * GV_SCAN_CHUNK; j < i; ++j) {
        long long cj = plan[4 * n + j], nj = plan[6 * n + j], fj = plan[7 * n + j], oj = plan[8 * n + j];
        ce += cj == c ? nj : 0;
        pe += fj > 0 && oj == oc ? fj : 0;
        ne += nj;
    }
    cexcl[i] = ce;
    pexcl[i] = fr > 0 ? pe : 0;
    needc[i] = ne + need;
}

extern "C" __global__
void gv_plan_scan(const long long* plan, const long long n, const long long nc, const long long width,
                  const long long* csum, long long* cexcl, long long* pexcl, long long* needc)
{
    GV_GRID_LOOP(i, n) {
        gv_plan_scan_at(i, plan, n, nc, width, csum, cexcl, pexcl, needc);
    }
}

// ---- the large batches' prefix sums, in place of CuPy's cumsum: a CuPy scan cost the host 100-140 us a call
// (an H200; bench-results/2026-11-26-session21/call4-blocks6: the device waited for most of it); this is one launch
// of this module.  Tiles of `tile` items (SCAN_TILE on the host, at most GV_SCAN_TILE_MAX).
#define GV_SCAN_THREADS 256
#define GV_SCAN_TILE_MAX 4096
// a tile's items in shared memory, one pad word every 16, so that a thread's run of 16 consecutive items spreads
// over the banks
#define GV_SPAD(j) ((j) + ((j) >> 4))

// item at a of a scan's input: int8 flags (kind 0) or int64 values (kind 1)
__device__ long long gv_scan_in(const void* in, const int kind, const long long a)
{
    return kind == 0 ? (long long)((const signed char*)in)[a] : ((const long long*)in)[a];
}

// the inclusive prefix sums of `rows` rows of n items in one pass (decoupled look-back: Merrill and Garland,
// "Single-pass parallel prefix scan with decoupled look-back", 2016), item i of row r at r * rs + i * is (rows of a
// row-major array: rs = n, is = 1; its columns: rs = 1, is = the width) into out (same strides; out may be in);
// total[r] = row r's sum.  A block takes tiles in order from the counter state[0] (zeroed, as the rest of state:
// 1 + 3 x the tiles), reads its tile into shared memory (coalesced), sums each thread's run of consecutive items, and
// publishes the tile's sum (flag 1); its first warp then adds the sums of the tiles before it in its row, looking
// back 32 tiles at a time until one that has published its inclusive prefix (flag 2; a row's first tile starts from
// 0), and publishes its own; the tile's scan is written from shared memory.  (Looking back one tile at a time from
// one thread took 0.037-0.041 ms for 1e6 keys on an H100: the tiles publish their sums at about the same time, so
// most look-backs walked far.)  A tile waits only for tiles taken before it, by blocks that
// are running, so any grid runs (the host emulation: one block of one thread).  On an H100 (R-MAT 22, 1e6 edges) a
// scan takes 0.020-0.033 ms; the two-launch form this replaced (every tile's sum, then every tile's scan a
// block-width of items at a time) took 0.027-0.048 (bench-results/2026-11-26-session22/call12-scan-warp-lookback).
extern "C" __global__ __launch_bounds__(GV_SCAN_THREADS)
void gv_scan(const void* in, const int kind, const long long n, const long long rows, const long long rs,
             const long long is, const long long tile, long long* state, long long* out, long long* total)
{
    __shared__ long long s_item[GV_SPAD(GV_SCAN_TILE_MAX)];
    __shared__ long long sh[GV_SCAN_THREADS / 32 + 1];
    __shared__ long long s_b, s_prefix;
    const long long ntiles = (n + tile - 1) / tile;
    long long* flag = state + 1;                    // per tile: 0, 1 (its sum in aggr), 2 (its prefix in incl)
    long long* aggr = flag + rows * ntiles;
    long long* incl = aggr + rows * ntiles;
    while (true) {
        if (threadIdx.x == 0) s_b = (long long)atomicAdd((unsigned long long*)state, 1ULL);
        __syncthreads();
        const long long b = s_b;
        if (b >= rows * ntiles) break;
        const long long r = b / ntiles, t = b % ntiles, lo = t * tile;
        const int len = (int)(lo + tile < n ? tile : n - lo);
        for (int j = threadIdx.x; j < len; j += blockDim.x)
            s_item[GV_SPAD(j)] = gv_scan_in(in, kind, r * rs + (lo + j) * is);
        __syncthreads();
        GV_RANGE(len, a, z);                            // the thread's run of items [a, z)
        long long v = 0, sum;
        for (long long j = a; j < z; ++j) v += s_item[GV_SPAD(j)];
        long long run = gv_block_excl(v, sh, &sum);    // the tile's items before the thread's run; sum: the tile's
        const int lanes = blockDim.x < 32 ? (int)blockDim.x : 32;
        if ((int)threadIdx.x < lanes) {                 // warp 0: the look-back, a tile a lane
            const int lane = (int)threadIdx.x;
            long long prefix = 0;
            if (t > 0) {
                if (lane == 0) {
                    aggr[b] = sum;
                    __threadfence();                    // the sum before its flag
                    ((volatile long long*)flag)[b] = 1;
                }
                for (long long top = b - 1;; top -= lanes) {
                    // lane l reads tile top - l once it has published; tiles before the row's first count as
                    // prefixes of 0 (the first tile always publishes its prefix, so the look-back stops there)
                    const long long u = top - lane;
                    long long f = 2, val = 0;
                    if (u >= r * ntiles) {
                        while ((f = ((volatile long long*)flag)[u]) == 0) { }
                        __threadfence();                // the flag before the value it announces
                        val = f == 2 ? ((volatile long long*)incl)[u] : ((volatile long long*)aggr)[u];
                    }
                    const unsigned int found = __ballot_sync(0xffffffffu, f == 2);
                    const int stop = found ? __ffs(found) - 1 : lanes - 1;  // the nearest tile with its prefix
                    long long add = lane <= stop ? val : 0;
                    for (int d = 16; d > 0; d >>= 1) add += __shfl_down_sync(0xffffffffu, add, d);
                    prefix += __shfl_sync(0xffffffffu, add, 0);
                    if (found) break;
                }
            }
            if (lane == 0) {
                incl[b] = prefix + sum;
                __threadfence();
                ((volatile long long*)flag)[b] = 2;
                if (t == ntiles - 1) total[r] = prefix + sum;
                s_prefix = prefix;
            }
        }
        __syncthreads();
        run += s_prefix;
        for (long long j = a; j < z; ++j) {
            run += s_item[GV_SPAD(j)];
            s_item[GV_SPAD(j)] = run;
        }
        __syncthreads();
        for (int j = threadIdx.x; j < len; j += blockDim.x) out[r * rs + (lo + j) * is] = s_item[GV_SPAD(j)];
        __syncthreads();                                // s_item and s_b are reused by the next tile
    }
}

// the chunk sums of a one-block plan (nch chunks of GV_SCAN_CHUNK keys, width columns, in shared
// memory): each column's prefix sum over the chunks (inclusive, as the grid path's cumsum gives csum);
// then io[GV_IO_TOTALS + col] = the column's total.  Every thread of the block calls it.
__device__ void gv_block_csum(unsigned int* cs, const long long nch, const long long width, long long* io)
{
    __syncthreads();
    GV_BLOCK_LOOP(col, width) {
        unsigned int run = 0;
        for (long long ch = 0; ch < nch; ++ch) { run += cs[ch * width + col]; cs[ch * width + col] = run; }
        io[GV_IO_TOTALS + col] = (long long)run;
    }
    __syncthreads();
}

// the inclusive prefix count of a block's int8 flags (n of them) into out; the total into io[GV_IO_COUNT]
__device__ void gv_block_count(const signed char* flag, const long long n, long long* out, long long* sh,
                               long long* io)
{
    GV_RANGE(n, lo, hi);
    long long s = 0;
    for (long long i = lo; i < hi; ++i) s += flag[i];
    long long total;
    long long run = gv_block_excl(s, sh, &total);
    for (long long i = lo; i < hi; ++i) { run += flag[i]; out[i] = run; }
    if (threadIdx.x == 0) io[GV_IO_COUNT] = total;
    __syncthreads();
}

// the insert's plan of a small batch (n <= GV_BLOCK_KEYS keys, nclasses <= GV_MAX_CLASSES) in one
// block: newc (the inclusive count of the new keys, from gv_find's flags), gv_insert_plan's rows, its
// chunk sums and their prefix sums over the chunks (in shared memory), and gv_plan_scan's offsets;
// io gets the new edges and the column totals (sync 2 reads them)
extern "C" __global__ __launch_bounds__(GV_BLOCK_THREADS)
void gv_insert_plan_block(const long long* ukeys, const long long n_arg, const signed char* isnew, long long* newc,
                     const long long* edge_count, const int* num_blocks, const signed char* block_class,
                     const long long* class_size, const int nclasses, const long long target,
                     const long long rehome, long long* plan, const long long ps, const long long width,
                     long long* cexcl, long long* pexcl, long long* needc, long long* io, const long long* q4,
                     const int one_sync, const long long* gate)
{
    GV_GATED(gate);
    const long long n = GV_SIZE(n_arg, io[GV_IO_N]);
    __shared__ long long sh[GV_BLOCK_THREADS / 32 + 1];
    __shared__ unsigned int cs[(GV_BLOCK_KEYS / GV_SCAN_CHUNK) * GV_MAX_WIDTH];
    const long long nch = (n + GV_SCAN_CHUNK - 1) / GV_SCAN_CHUNK;
    GV_BLOCK_LOOP(j, nch * width) cs[j] = 0;
    gv_block_count(isnew, n, newc, sh, io);
    GV_BLOCK_LOOP(i, n) {
        gv_insert_plan_at(i, ukeys, n, newc, edge_count, num_blocks, block_class, class_size, nclasses, target,
                          rehome, plan, ps, width, cs);
    }
    gv_block_csum(cs, nch, width, io);
    GV_BLOCK_LOOP(i, n) {
        gv_plan_scan_at(i, plan, ps, nclasses, width, (const unsigned int*)cs, cexcl, pexcl, needc);
    }
    // the one-sync path writes and finishes before the host reads anything: it holds them when the pops
    // of a class may grow the pool (the host's rule, GROW_AT = 0.8 of a class's blocks in use after
    // them, checked here with a margin so that the host, which decides, never grows where this did not hold)
    if (one_sync && threadIdx.x == 0) {
        long long hold = 0;
        for (long long c = 0; c < nclasses; ++c) {
            long long need = io[GV_IO_TOTALS + c];
            long long size = GV_QSIZE(q4, nclasses)[c];
            long long used = size - (GV_QTAIL(q4, nclasses)[c] - GV_QHEAD(q4, nclasses)[c]);
            if (need > 0 && (size == 0 || 5 * (used + need) >= 4 * size)) hold = 1;
        }
        io[GV_IO_HOLD] = hold;
    }
}

// slot of position q of the vertex whose first key is s, after the pop: its old blocks come from
// the walk's table, the rest were popped from its class's ring
__device__ long long gv_merged_slot(long long s, long long q, const long long* bsz,
                                    const long long* old_blocks, const int* table,
                                    const long long* ends, const long long* nb, const int* queue,
                                    const long long* qstart, const long long* qsize,
                                    const long long* qhead, const long long* cls,
                                    const long long* cexcl, GV_CHUNKS)
{
    long long bs = bsz[s];
    long long kb = q / bs;
    long long blk = kb < old_blocks[s]
        ? (long long)table[ends[s] - nb[s] + kb]
        : (long long)gv_popped(queue, qstart, qsize, qhead, cls[s], cexcl[s], kb - old_blocks[s]);
    return gv_base(blk, GV_CHUNK_ARGS) + (q - kb * bs);
}

// the sorted merge of each touched vertex's old row (tcol / tw, copied by gv_find) with its new keys.
// Threads t < live: old edge t (segment i, position p) moves right by the number of the vertex's new
// keys below it and takes its key's weight when the batch names it (written only when it moves or
// its weight changes: an unmoved entry has no other writer).  Threads live + i: key i; an existing
// key only reports itself (mask), a new one goes to (old edges below it) + (new keys before it).
// Every final position has exactly one writer; no thread reads the pool.  newc: inclusive prefix
// count of new keys; cnt_ends: running sums of the old rows' lengths (0 for a vertex's other keys).
extern "C" __global__
void gv_insert_write(const long long* ukeys, const long long n_arg, const signed char* isnew,
                     const float* uw, const long long* first_idx, const long long* sfirst,
                     const long long* newc, const long long* old_count, const long long* old_blocks,
                     const long long* cexcl, const long long* cls, const long long* bsz,
                     const int* table, const long long* ends, const long long* nb,
                     const long long* cnt_ends, const int* tcol, const float* tw, const long long live_arg,
                     const int* queue, const long long* qstart, const long long* qsize,
                     const long long* qhead, GV_CHUNKS, const long long* fr, const long long* oldc,
                     const long long* class_size, const int* tseg, const long long* tslot,
                     int* block_cols, float* block_weights, int* in_degree, const int ident, bool* mask,
                     const long long* dsz, const long long* gate)
{
    GV_GATED(gate);
    const long long live = GV_SIZE(live_arg, dsz[1]);
    const long long n = GV_KEYS(n_arg, dsz);
    GV_GRID_LOOP(t, live + n) {
        if (t < live) {
            long long s = tseg[t];
            long long row = cnt_ends[s] - old_count[s];
            long long p = t - row;
            long long v = ukeys[s] >> 32;
            long long key = (v << 32) | (long long)(unsigned int)tcol[t];
            long long lo = gv_gallop(ukeys, s, n, key);
            bool named = lo < n && ukeys[lo] == key;
            long long shift = (lo > 0 ? newc[lo - 1] : 0) - (s > 0 ? newc[s - 1] : 0);
            bool moves = fr[s] > 0;        // re-homed: every old edge goes to the new tree, its old
            if (moves)                     // entry is cleared (no other thread writes the old tree)
                block_cols[tslot[t]] = GV_EMPTY;
            else if (shift == 0 && !named) continue;
            long long q = p + shift;       // inside the old row (kept): the slot the walk listed
            long long slot = !moves && q < old_count[s] ? tslot[row + q]
                : gv_merged_slot(s, q, bsz, old_blocks, table, ends, nb, queue, qstart, qsize, qhead, cls,
                                 cexcl, GV_CHUNK_ARGS);
            block_cols[slot] = tcol[t];
            block_weights[slot] = named ? uw[lo] : tw[t];
            continue;
        }
        long long i = t - live;
        bool is_new = isnew[i] != 0;
        mask[ident ? i : first_idx[i]] = is_new;       // ident: the batch's keys were distinct, in order
        if (!is_new) continue;
        long long s = sfirst[i];
        int col = (int)(ukeys[i] & GV_LOW32);
        // old edges of the vertex below col: a binary search of its copied row
        long long lo = cnt_ends[s] - old_count[s], hi = cnt_ends[s];
        long long base = lo;
        while (lo < hi) {
            long long mid = (lo + hi) >> 1;
            if (tcol[mid] < col) lo = mid + 1; else hi = mid;
        }
        long long q = (lo - base) + (newc[i] - 1 - (s > 0 ? newc[s - 1] : 0));
        long long slot = fr[s] == 0 && q < old_count[s] ? tslot[base + q]
            : gv_merged_slot(s, q, bsz, old_blocks, table, ends, nb, queue, qstart, qsize, qhead, cls,
                             cexcl, GV_CHUNK_ARGS);
        block_cols[slot] = col;
        block_weights[slot] = uw[i];
        atomicAdd(&in_degree[col], 1);
    }
}

// threads t < total: popped block t (global pop order: vertex by vertex), its links, owner, root;
// its parent's link when the parent is an old block (that link's one writer); threads t < n: the
// sentinel of the vertex whose first key is t (the vertex's one writer); threads t < ttotal: walk
// table row t, a block of a re-homed vertex's old tree (fr > 0 at its segment) is unlinked and
// pushed at its old class's tail + pexcl + its CBT index (its queue entry's one writer; pops read
// other ring entries: the pushed blocks were in use).  Old counts / blocks come in per-key arrays,
// never re-read.
extern "C" __global__
void gv_insert_finish(const long long* ukeys, const long long n_arg, const long long* need,
                      const long long* needc, const long long* add, const long long* old_count,
                      const long long* old_blocks, const long long* cexcl, const long long* cls,
                      const long long* bsz, int* queue, const long long* qstart,
                      const long long* qsize, const long long* qhead, const long long pop_arg,
                      const int* table, const long long* tidx, const long long* tk, const long long ttotal_arg,
                      const long long* fr, const long long* pexcl, const long long* oldc,
                      const long long* qtail,
                      int* left, int* right, int* owner, int* root_block, int* last_block,
                      int* last_offset, long long* edge_count, int* num_blocks, signed char* block_class,
                      const long long* q4, long long* qn, const long long nq, const long long* tot,
                      const long long* dsz, const long long* gate)
{
    GV_GATED(gate);
    const long long n = GV_KEYS(n_arg, dsz);
    const long long total = GV_SIZE(pop_arg, tot[2 * nq]);                 // all pops
    const long long ttotal = GV_SIZE(ttotal_arg, tot[2 * nq + 1] > 0 ? dsz[0] : 0);   // re-homed: the walk
    long long m = total > n ? total : n;
    if (ttotal > m) m = ttotal;
    GV_GRID_LOOP(t, m) {
        if (t == 0) gv_queue_next(q4, qn, nq, tot, 0, nq);     // the next parity: pops and pushes
        if (t < ttotal && fr[tidx[t]] > 0) {
            long long i = tidx[t];
            long long c = oldc[i];
            int id = table[t];
            left[id] = GV_EMPTY;
            right[id] = GV_EMPTY;
            owner[id] = GV_EMPTY;
            queue[qstart[c] + (qtail[c] + pexcl[i] + tk[t]) % qsize[c]] = id;
        }
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
            // the block count and class only where they change (gv_delete_finish's reason): blocks popped, a row
            // that was empty or is re-homed (0.072 ms against 0.079 writing all, H100)
            if (need[t] > 0) num_blocks[v] = (int)(nbo + need[t]);
            if (nbo == 0 || fr[t] > 0) block_class[v] = (signed char)cls[t];
        }
    }
}

// the delete's plan, one thread per sorted distinct key i (after gv_find; foundc: inclusive prefix
// count of the found keys): at a vertex's first key (nb[i] > 0) its new count, class, blocks kept,
// blocks freed, and whether its tree is then misplaced (gv_misplaced: to be re-homed); zeros at the
// other keys.  plan rows (each n long): 0 new_count, 1 class, 2 kept blocks, 3 freed, 4 misplaced.
// The key's values go into its chunk's row of sums (width = nclasses + 1 columns, gv_cell mode 1):
// their prefix sums rank the freed blocks of each class (the push offsets) and count the misplaced.
template <typename S>
__device__ void gv_delete_plan_at(long long i, const long long* ukeys, const long long n, const long long* nb,
                                  const long long* cnt, const long long* foundc, const signed char* block_class,
                                  const long long* class_size, const int nclasses, const long long target,
                                  const long long rehome, long long* plan, const long long ps,
                                  const long long width, S* sums)
{
    long long nc = 0, c = 0, nbn = 0, fr = 0, mis = 0;
    if (nb[i] > 0) {
        long long v = ukeys[i] >> 32;
        long long end = gv_gallop(ukeys, i, n, (v + 1) << 32);
        nc = cnt[i] - (foundc[end - 1] - (i > 0 ? foundc[i - 1] : 0));
        c = block_class[v];
        long long bs = class_size[c];
        nbn = (nc + bs - 1) / bs;
        fr = nb[i] - nbn;
        mis = nc > 0 && gv_misplaced(c, nc, class_size, nclasses, target, rehome) ? 1 : 0;
    }
    plan[i] = nc;
    plan[ps + i] = c;
    plan[2 * ps + i] = nbn;
    plan[3 * ps + i] = fr;
    plan[4 * ps + i] = mis;
    gv_add_cell(sums, i, width, c, fr);
    gv_add_cell(sums, i, width, nclasses, mis);
}

extern "C" __global__
void gv_delete_plan(const long long* ukeys, const long long n, const long long* nb, const long long* cnt,
                    const long long* foundc, const signed char* block_class, const long long* class_size,
                    const int nclasses, const long long target, const long long rehome, long long* plan,
                    const long long width, unsigned long long* sums)
{
    GV_GRID_LOOP(i, n) {
        gv_delete_plan_at(i, ukeys, n, nb, cnt, foundc, block_class, class_size, nclasses, target, rehome, plan,
                          n, width, sums);
    }
}

// the delete's plan of a small batch in one block: foundc (the inclusive count of gv_find's hits),
// gv_delete_plan's rows, and the prefix sums over the chunks of its chunk sums into csum (global: the
// finish reads them); io gets the removed edges and the column totals (sync 2 reads them)
extern "C" __global__ __launch_bounds__(GV_BLOCK_THREADS)
void gv_delete_plan_block(const long long* ukeys, const long long n_arg, const long long* nb, const long long* cnt,
                     const signed char* hit, long long* foundc, const signed char* block_class,
                     const long long* class_size, const int nclasses, const long long target,
                     const long long rehome, long long* plan, const long long ps, const long long width,
                     long long* csum, long long* io, const long long* gate)
{
    GV_GATED(gate);
    const long long n = GV_SIZE(n_arg, io[GV_IO_N]);
    __shared__ long long sh[GV_BLOCK_THREADS / 32 + 1];
    __shared__ unsigned int cs[(GV_BLOCK_KEYS / GV_SCAN_CHUNK) * GV_MAX_WIDTH];
    const long long nch = (n + GV_SCAN_CHUNK - 1) / GV_SCAN_CHUNK;
    GV_BLOCK_LOOP(j, nch * width) cs[j] = 0;
    gv_block_count(hit, n, foundc, sh, io);
    GV_BLOCK_LOOP(i, n) {
        gv_delete_plan_at(i, ukeys, n, nb, cnt, foundc, block_class, class_size, nclasses, target, rehome, plan,
                          ps, width, cs);
    }
    gv_block_csum(cs, nch, width, io);
    GV_BLOCK_LOOP(j, nch * width) csum[j] = (long long)cs[j];
}

// order-preserving compaction: survivor e (segment i = tseg[e], position p, column tcol[e]) moves
// left by the deleted entries before it in its row, which are the found keys of its vertex below its
// own key (rows are sorted: a gallop through the vertex's keys and the prefix count foundc), read from
// the copy gv_find made, into the slot of the row's entry that many places back (tslot: a row's live
// entries are consecutive); every entry at or past the new count is cleared by its own thread.
// Targets are below the new count and cleared entries at or past it: one writer per location.
extern "C" __global__
void gv_delete_move(const int* tseg, const long long* tslot, const long long* cnt, const long long* cnt_ends,
                    const long long* ukeys, const long long n_arg, const long long* foundc,
                    const long long* new_count, const int* tcol, const float* tw, const long long live_arg,
                    int* block_cols, float* block_weights, const long long* dsz, const long long* gate)
{
    GV_GATED(gate);
    const long long n = GV_KEYS(n_arg, dsz);
    const long long live = GV_SIZE(live_arg, dsz[1]);
    GV_GRID_LOOP(e, live) {
        long long i = tseg[e];
        long long p = e - (cnt_ends[i] - cnt[i]);
        long long v = ukeys[i] >> 32;
        long long key = (v << 32) | (long long)(unsigned int)tcol[e];
        long long lo = gv_gallop(ukeys, i, n, key);
        bool dead = lo < n && ukeys[lo] == key;
        long long before = (lo > 0 ? foundc[lo - 1] : 0) - (i > 0 ? foundc[i - 1] : 0);
        if (!dead && before > 0) {
            long long to = tslot[e - before];
            block_cols[to] = tcol[e];
            block_weights[to] = tw[e];
        }
        if (p >= new_count[i])
            block_cols[tslot[e]] = GV_EMPTY;
    }
}

// threads t < total (table rows: block tk[t] of the vertex of key tidx[t]): a block past its
// vertex's kept blocks is cleared and pushed at its class's tail + its rank (the vertex's push offset
// in its class - gv_excl over gv_delete_plan's chunk sums - plus its index among the vertex's freed
// blocks; its queue entry's one writer) and
// cut from a surviving parent; threads t < n: the sentinel of the vertex with key position t (class
// and counts from the plan, never from block_class, which these threads reset)
extern "C" __global__
void gv_delete_finish(const int* table, const long long* tidx, const long long* tk,
                      const long long* plan, const long long* csum, const long long width,
                      const long long nclasses, const long long* ukeys, const long long* ends,
                      const long long* nb, const long long n_arg, const long long ps, const long long total_arg,
                      const long long* class_size, int* queue, const long long* qstart, const long long* qsize,
                      const long long* qtail, int* left, int* right, int* owner, int* root_block,
                      int* last_block, int* last_offset, long long* edge_count, int* num_blocks,
                      signed char* block_class, const long long* q4, long long* qn, const long long* tot,
                      const long long* dsz, const long long* gate)
{
    GV_GATED(gate);
    const long long total = GV_SIZE(total_arg, dsz[0]);
    const long long n = GV_KEYS(n_arg, dsz);
    const long long* new_count = plan;
    const long long* cls = plan + ps;
    const long long* kept = plan + 2 * ps;
    long long m = total > n ? total : n;
    GV_GRID_LOOP(t, m) {
        if (t == 0) gv_queue_next(q4, qn, nclasses, tot, -1, 0);   // the next parity: the pushes
        if (t < total) {
            long long i = tidx[t];
            long long k = tk[t];
            long long nbn = kept[i];
            if (k >= nbn) {
                long long c = cls[i];
                int id = table[t];
                left[id] = GV_EMPTY;
                right[id] = GV_EMPTY;
                owner[id] = GV_EMPTY;
                long long base = gv_excl(1, plan, ps, i, c, nclasses, csum, width);
                queue[qstart[c] + (qtail[c] + base + k - nbn) % qsize[c]] = id;
                long long kp = (k - 1) / 2;
                if (k >= 1 && kp < nbn) {
                    int parent = table[t - k + kp];
                    if (k % 2 == 1) left[parent] = GV_EMPTY; else right[parent] = GV_EMPTY;
                }
            }
        }
        if (t < n && nb[t] > 0) {
            long long v = ukeys[t] >> 32;
            long long nc = new_count[t];
            long long nbn = kept[t];
            long long bs = class_size[cls[t]];
            long long tstart = ends[t] - nb[t];
            if (nbn > 0) {
                if (nbn != nb[t]) last_block[v] = table[tstart + nbn - 1];    // blocks freed (see below)
                last_offset[v] = (int)(nc - (nbn - 1) * bs);
            } else {
                root_block[v] = GV_EMPTY;
                last_block[v] = GV_EMPTY;
                last_offset[v] = 0;
                block_class[v] = GV_EMPTY;
            }
            edge_count[v] = nc;
            // a field is written only where it changes: each is a scattered write to a sector of its own (H100:
            // 0.098 ms against 0.108 writing all; bench-results/2026-11-26-session22/call7-prefetch-skip)
            if (nbn != nb[t]) num_blocks[v] = (int)nbn;
        }
    }
}

// ---- the key-side path of the large batches (keyside=True): searches from the keys, not the rows ----
// Each key binary-searches its source's sorted row (gv_rank); only the part of a row from its first
// changed position on is copied aside (gv_stage) and written back shifted (gv_insert_scatter /
// gv_delete_scatter), each entry's shift found by a merge-like pointer through the vertex's keys
// (their ranks ascend with them) instead of a gallop per live entry.  Where gv_fill_rows + gv_find +
// gv_insert_write / gv_delete_move pass over every live entry of every touched row three times,
// these pass over the keys once and over the changed suffixes of the rows twice.

// slot of position q of a row whose blocks (size bs) are table[t0 ...]
__device__ long long gv_row_slot(long long t0, long long q, long long bs, const int* table, GV_CHUNKS)
{
    long long k = q / bs;
    return gv_base(table[t0 + k], GV_CHUNK_ARGS) + (q - k * bs);
}

// a new key t (its vertex's first key s; cum: running count of the new keys) goes to its merged position
// *to = its rank plus the vertex's new keys before it.  Where its row stays in its blocks (freed[s] == 0: not
// re-homed) and *to is below the old count, that is the slot the old entry at *to leaves, returned; else -1 (past
// the old count or re-homed: the popped blocks, gv_merged_slot).  gv_tile_keys gives these slots to the shift
// and gv_insert_scatter writes the others, so both take them from here: each new key has exactly one writer.
__device__ long long gv_kept_slot(long long t, long long s, const long long* rank, const long long* cum,
                                  const long long* freed, const long long* old_count, const long long* ends,
                                  const long long* nb, const long long* bsz, const int* table, GV_CHUNKS,
                                  long long* to)
{
    *to = rank[t] + (cum[t] - 1 - (s > 0 ? cum[s - 1] : 0));
    return freed[s] == 0 && *to < old_count[s]
        ? gv_row_slot(ends[s] - nb[s], *to, bsz[s], table, GV_CHUNK_ARGS) : -1;
}

// the key-side path's walk: threads t < total, block k of the vertex of key i (t = ends[i] - nb[i] + k,
// ends: running sums of the blocks at each source's first key) into table[t], tidx[t] = i, tk[t] = k (as
// gv_walk); threads t < n set rmin[t] to its largest value (gv_rank lowers it).  Sizes from the arguments,
// or, negative, from the device (the one-sync path: dsz[0] blocks, the key count)
extern "C" __global__
void gv_walk_keys(const long long* ukeys, const long long* ends, const long long nseg_arg, const long long total_arg,
                  const int* root_block, const int* left, const int* right, int* table, long long* tidx,
                  long long* tk, long long* rmin, const long long* dsz, const long long* gate)
{
    GV_GATED(gate);
    const long long total = GV_SIZE(total_arg, dsz[0]);
    const long long nseg = GV_KEYS(nseg_arg, dsz);
    const long long m = total > nseg ? total : nseg;
    GV_GRID_LOOP(t, m) {
        if (t < nseg) rmin[t] = 0x7FFFFFFFFFFFFFFFLL;
        if (t >= total) continue;
        long long i = gv_upper_bound(ends, nseg, t);
        long long k = t - (i > 0 ? ends[i - 1] : 0);
        table[t] = gv_walk_to(root_block[ukeys[i] >> 32], k, left, right);
        tidx[t] = i;
        tk[t] = k;
    }
}

// one thread per sorted distinct key i (source v, column c; s = v's first key, whose segment holds
// v's blocks at table[ends[s] - nb[s] ...] and its cnt[s] live edges): rank[i] = the number of v's
// edges whose column is below c - a binary search over v's blocks by their first column, then inside
// one block - and whether v holds the key.  Insert (mode 0): a held key is not new (flag[i] = 0) and
// takes its new weight uw[i] in place (its slot's one writer: keys are distinct); delete (mode 1): a
// held key is found (flag[i] = 1) and its column's in-degree drops.  rmin[s] (set to a large value by
// the caller) becomes the least rank of v's new (insert) / found (delete) keys: the first position of
// v's row that changes.
extern "C" __global__
void gv_rank(const long long* ukeys, const long long n_arg, const long long* ends, const long long* nb,
             const long long* cnt, const int* table, const signed char* block_class, const long long* class_size,
             GV_CHUNKS, const int* block_cols, float* block_weights, const float* uw, const int mode,
             signed char* flag, long long* rank, long long* rmin, int* in_degree, const long long* dsz,
             const long long* gate)
{
    GV_GATED(gate);
    const long long n = GV_KEYS(n_arg, dsz);
    GV_GRID_LOOP(i, n) {
        long long key = ukeys[i];
        long long v = key >> 32;
        long long c = key & GV_LOW32;
        long long s = gv_first_of(ukeys, i, v);
        long long count = cnt[s];
        long long r = 0;
        bool held = false;
        if (count > 0) {
            long long bs = class_size[block_class[v]];
            long long t0 = ends[s] - nb[s];
            long long lo = 0, hi = nb[s] - 1;              // the last block whose first column <= c
            while (lo < hi) {
                long long mid = (lo + hi + 1) >> 1;
                if ((long long)block_cols[gv_base(table[t0 + mid], GV_CHUNK_ARGS)] <= c) lo = mid; else hi = mid - 1;
            }
            long long base = gv_base(table[t0 + lo], GV_CHUNK_ARGS);
            long long m = count - lo * bs < bs ? count - lo * bs : bs;
            long long a = 0, z = m;
            while (a < z) {
                long long mid = (a + z) >> 1;
                if ((long long)block_cols[base + mid] < c) a = mid + 1; else z = mid;
            }
            r = lo * bs + a;
            held = a < m && (long long)block_cols[base + a] == c;
            if (held) {
                if (mode == 0) block_weights[base + a] = uw[i];
                // (tried: these drops in gv_delete_finish, beside the shift: gv_rank took 0.095 ms against 0.114
                // and the shift 0.609 against 0.591; H100, R-MAT 22, 1e6 edges, bench-results/2026-11-27-session24)
                else atomicAdd(&in_degree[c], -1);
            }
        }
        rank[i] = r;
        if (held) flag[i] = (signed char)mode;
        // the row's least rank of a moving key: one atomic a row and warp.  Keys ascend, so a row's keys are
        // consecutive lanes and their ranks do not decrease: a lane whose left neighbour is of its row and moves has
        // nothing lower to offer (hub rows' thousands of keys each took the same address's atomic; H100, R-MAT 22, 1e6
        // edges: the delete's gv_rank 0.111 ms against 0.119, bench-results/2026-11-26-session22/call15-rank-warp-min)
        const bool moves = held == (mode == 1);
        const unsigned int lane = threadIdx.x & 31u, active = __activemask();
        const long long left_s = __shfl_up_sync(active, s, 1u);
        const long long left_moves = __shfl_up_sync(active, (long long)moves, 1u);
        const bool covered = lane > 0u && ((active >> (lane - 1u)) & 1u) && left_s == s && left_moves;
        if (moves && !covered) atomicMin(&rmin[s], r);
    }
}

// first index h in [i, n) whose key is not of vertex v or whose rank is above p (strict) or at p
// (!strict); keys of v from i on have ascending ranks, so the predicate is monotone: a gallop
__device__ long long gv_rank_bound(const long long* ukeys, const long long* rank, long long i, long long n,
                                  long long v, long long p, bool strict)
{
    long long lo = i, hi = i, step = 1;
#define GV_RB_IN(j) ((ukeys[j] >> 32) == v && (strict ? rank[j] <= p : rank[j] < p))
    while (hi < n && GV_RB_IN(hi)) { lo = hi + 1; hi = i + step; step <<= 1; }
    if (hi > n) hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (GV_RB_IN(mid)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// the staging copy: GV_FILL_LANES lanes per walked block t (block k = tk[t] of the vertex of first key
// i = tidx[t]); each live entry at a position p >= r0 (the row's first changed position: rmin[i], 0
// for an insert's re-homed row, aux[i] = its freed blocks > 0) is copied to tcol / tw at
// e = cnt_ends[i] - cnt[i] + p.  Insert (mode 0): a re-homed row's old entries are cleared (its
// merged row goes to new blocks); delete (mode 1): entries at or past the new count (aux[i]) are
// cleared.  Each entry has its one reader and writer here; the scatter runs after.
extern "C" __global__
void gv_stage(const int* table, const long long* tidx, const long long* tk, const long long total_arg,
              const long long* ukeys, const long long* cnt, const long long* cnt_ends,
              const signed char* block_class, const long long* class_size, GV_CHUNKS, const long long* rmin,
              const long long* aux, const int mode, int* block_cols, const float* block_weights, int* tcol,
              float* tw, const long long* dsz, const long long* gate)
{
    GV_GATED(gate);
    const long long total = GV_SIZE(total_arg, dsz[0]);
    GV_GRID_LOOP(q, total * GV_FILL_LANES) {
        long long t = q / GV_FILL_LANES;
        long long lane = q % GV_FILL_LANES;
        long long i = tidx[t];
        long long k = tk[t];
        long long count = cnt[i];
        bool whole = mode == 0 && aux[i] > 0;
        long long r0 = whole ? 0 : rmin[i];
        long long bs = class_size[block_class[ukeys[i] >> 32]];
        long long p0 = k * bs;
        long long m = count - p0 < bs ? count - p0 : bs;
        if (p0 + m <= r0) continue;
        long long base = gv_base(table[t], GV_CHUNK_ARGS);
        long long row = cnt_ends[i] - count;
        long long clear_from = mode == 0 ? (whole ? 0 : count) : aux[i];
        for (long long j = lane; j < m; j += GV_FILL_LANES) {
            long long p = p0 + j;
            if (p < r0) continue;
            tcol[row + p] = block_cols[base + j];
            tw[row + p] = block_weights[base + j];
            if (p >= clear_from) block_cols[base + j] = GV_EMPTY;
        }
    }
}

// the insert's merge from the staged rows.  Threads q < total * GV_FILL_LANES: lanes of walked block t,
// as gv_stage; old entry p >= r0 moves right by the vertex's new keys whose rank is <= p (a pointer
// through the vertex's keys that each lane advances as its p grows) into its merged position's slot:
// in the kept old blocks (the walk's table) or in the popped ones (gv_merged_slot).  Threads
// total * GV_FILL_LANES + i: key i reports itself in the mask; a new key goes to its rank plus the
// vertex's new keys before it (+1 in-degree) unless gv_insert_shift writes it (in_shift, kslot[i] >= 0).
// Every merged position from r0 on has one writer, and no thread reads the pool.  The plan's rows as
// gv_insert_write takes them.
extern "C" __global__
void gv_insert_scatter(const int* table, const long long* tidx, const long long* tk, const long long total_arg,
                       const long long* ukeys, const long long n_arg, const long long* cnt, const long long* cnt_ends,
                       const signed char* block_class, const long long* class_size, GV_CHUNKS,
                       const long long* rank, const long long* rmin, const long long* newc,
                       const signed char* isnew, const float* uw, const long long* first_idx, const int ident,
                       bool* mask, const long long* sfirst, const long long* old_count,
                       const long long* old_blocks, const long long* cexcl, const long long* cls,
                       const long long* bsz, const long long* fr, const long long* ends, const long long* nb,
                       const int* queue, const long long* qstart, const long long* qsize, const long long* qhead,
                       const int* tcol, const float* tw, int* block_cols, float* block_weights, int* in_degree,
                       const int in_shift, const int* kslot, const long long* dsz, const long long* gate)
{
    GV_GATED(gate);
    const long long total = GV_SIZE(total_arg, dsz[0]);
    const long long n = GV_KEYS(n_arg, dsz);
    const long long lanes_total = total * GV_FILL_LANES;
    GV_GRID_LOOP(q, lanes_total + n) {
        if (q < lanes_total) {
            long long t = q / GV_FILL_LANES;
            long long lane = q % GV_FILL_LANES;
            long long i = tidx[t];
            long long k = tk[t];
            long long count = cnt[i];
            long long v = ukeys[i] >> 32;
            bool whole = fr[i] > 0;
            long long r0 = whole ? 0 : rmin[i];
            long long obs = class_size[block_class[v]];     // the old blocks' size (the class changes later)
            long long p0 = k * obs;
            long long m = count - p0 < obs ? count - p0 : obs;
            if (p0 + m <= r0) continue;
            long long row = cnt_ends[i] - count;
            long long t0 = ends[i] - nb[i];
            long long before = i > 0 ? newc[i - 1] : 0;
            long long nbs = bsz[i], keep = old_blocks[i];
            long long h = -1, ck = -1, cb = 0;        // the lane's last target block (merged CBT index), base
            for (long long j = lane; j < m; j += GV_FILL_LANES) {
                long long p = p0 + j;
                if (p < r0) continue;
                if (h < 0) h = gv_rank_bound(ukeys, rank, i, n, v, p, true);
                else while (h < n && (ukeys[h] >> 32) == v && rank[h] <= p) ++h;
                long long to = p + (h > 0 ? newc[h - 1] : 0) - before;
                long long kb = to / nbs;               // gv_merged_slot's block, its base kept while it lasts
                if (kb != ck) {
                    ck = kb;
                    cb = gv_base(kb < keep ? (long long)table[t0 + kb]
                                 : (long long)gv_popped(queue, qstart, qsize, qhead, cls[i], cexcl[i], kb - keep),
                                 GV_CHUNK_ARGS);
                }
                long long slot = cb + (to - kb * nbs);
                block_cols[slot] = tcol[row + p];
                block_weights[slot] = tw[row + p];
            }
            continue;
        }
        long long i = q - lanes_total;
        bool is_new = isnew[i] != 0;
        mask[ident ? i : first_idx[i]] = is_new;
        if (!is_new) continue;
        int col = (int)(ukeys[i] & GV_LOW32);
        atomicAdd(&in_degree[col], 1);
        if (in_shift && kslot[i] >= 0) continue;       // gv_insert_shift writes it
        long long s = sfirst[i], to;
        long long slot = gv_kept_slot(i, s, rank, newc, fr, old_count, ends, nb, bsz, table, GV_CHUNK_ARGS, &to);
        if (slot < 0)
            slot = gv_merged_slot(s, to, bsz, old_blocks, table, ends, nb, queue, qstart, qsize, qhead, cls, cexcl,
                                  GV_CHUNK_ARGS);
        block_cols[slot] = col;
        block_weights[slot] = uw[i];
    }
}

// the delete's compaction from the staged rows: lanes of walked block t, as gv_stage; a survivor at
// p >= r0 (no found key has rank p: found keys sit at their ranks) moves left by the found keys of its
// vertex ranked below it (two pointers through the vertex's keys, advanced as p grows) into the slot
// of that position in the kept blocks.  Targets are below the new count; gv_stage cleared the rest.
extern "C" __global__
void gv_delete_scatter(const int* table, const long long* tidx, const long long* tk, const long long total_arg,
                       const long long* ukeys, const long long n_arg, const long long* cnt, const long long* cnt_ends,
                       const signed char* block_class, const long long* class_size, GV_CHUNKS,
                       const long long* rank, const long long* rmin, const long long* foundc,
                       const long long* ends, const long long* nb, const int* tcol, const float* tw,
                       int* block_cols, float* block_weights, const long long* dsz, const long long* gate)
{
    GV_GATED(gate);
    const long long total = GV_SIZE(total_arg, dsz[0]);
    const long long n = GV_KEYS(n_arg, dsz);
    GV_GRID_LOOP(q, total * GV_FILL_LANES) {
        long long t = q / GV_FILL_LANES;
        long long lane = q % GV_FILL_LANES;
        long long i = tidx[t];
        long long k = tk[t];
        long long count = cnt[i];
        long long v = ukeys[i] >> 32;
        long long r0 = rmin[i];
        long long bs = class_size[block_class[v]];
        long long p0 = k * bs;
        long long m = count - p0 < bs ? count - p0 : bs;
        if (p0 + m <= r0) continue;
        long long row = cnt_ends[i] - count;
        long long t0 = ends[i] - nb[i];
        long long f0 = i > 0 ? foundc[i - 1] : 0;
        long long lo = -1, hi = -1;                 // keys of v ranked below p: [i, lo); at most p: [i, hi)
        long long ck = -1, cb = 0;                   // the lane's last target block and its base
        for (long long j = lane; j < m; j += GV_FILL_LANES) {
            long long p = p0 + j;
            if (p < r0) continue;
            if (lo < 0) {
                lo = gv_rank_bound(ukeys, rank, i, n, v, p, false);
                hi = gv_rank_bound(ukeys, rank, lo, n, v, p, true);
            } else {
                while (lo < n && (ukeys[lo] >> 32) == v && rank[lo] < p) ++lo;
                if (hi < lo) hi = lo;
                while (hi < n && (ukeys[hi] >> 32) == v && rank[hi] <= p) ++hi;
            }
            long long flo = lo > 0 ? foundc[lo - 1] : 0;
            long long fhi = hi > 0 ? foundc[hi - 1] : 0;
            if (fhi > flo) continue;                 // deleted
            long long to = p - (flo - f0);
            long long kb = to / bs;
            if (kb != ck) {
                ck = kb;
                cb = gv_base(table[t0 + kb], GV_CHUNK_ARGS);
            }
            long long slot = cb + (to - kb * bs);
            block_cols[slot] = tcol[row + p];
            block_weights[slot] = tw[row + p];
        }
    }
}

// ---- the key side's one-pass shifts (large batches): gv_stage + a scatter in one pass, in place ----------
// Flat entries e in [0, live) of the touched rows (key i = the first key of e's vertex, the upper bound of e
// in cnt_ends; position p = e - (cnt_ends[i] - cnt[i])) are cut into tiles of ``tile`` entries.  A thread
// block takes a tile, reads the tile's moving entries into shared memory, publishes that (flags[1 + T]),
// waits for the tiles holding the entries its writes overwrite, then writes.  Insert entries move right
// (to later flat entries of their row), delete survivors left, so the tiles are taken in that order from
// the counter flags[0] - the last tile first for an insert, the first for a delete: every tile waited on
// was taken by a block that is running, whatever the grid, and waits only for reads, never for writes
// (no cycle).  Each entry is read once and written once (the staged pair read and wrote it twice, and
// its lanes looped over whole blocks, so hub rows' blocks ran on 8 threads each).
//
// How an entry learns its row and its shift: a table per tile in shared memory (gv_tile_table, below).  The
// first form (session 19) searched the keys' running counts at every row change and galloped through the
// row's key ranks at every entry: chains of dependent global loads (57% of the entries ran the row search,
// 3.5 gallop steps each, by Nsight Compute); the table took gv_insert_shift from 1.27 to 0.99-1.03 ms and
// gv_delete_shift from 1.26 to 0.86-0.92 (H100, R-MAT 22, 1e6 edges; bench-results/2026-11-26-session20).
// The entries' block bases and each row's fields come precomputed (tbase, gv_shift_row: gv_tile_keys).
#define GV_SHIFT_THREADS 256
// entries per tile at most: the largest whose shared arrays let 6 blocks fit an H100's or H200's 228 KiB (36.8 KiB a
// block, 1 KiB more reserved each; the pool slots 32-bit since).  On an H100 (R-MAT 22, 1e6 edges, five rounds in one
// process) the shifts took 0.661 / 0.631 ms with tiles of 2,048 entries, 0.625 / 0.605 of 2,560, 0.621 / 0.600 of
// 2,816, 0.610 / 0.592 of 3,072 (bench-results/2026-11-27-session24/call4)
#define GV_SHIFT_TILE_MAX 3072
// blocks per SM the shifts are compiled for: at most 40 registers a thread, so that 6 blocks fit (a GPU with less
// shared memory runs fewer, correctly: a tile waits only for tiles taken before it).  Left free, the compiler took
// 54-72 registers (4 blocks or 3).  On an H200 (R-MAT 22, 1e6 edges) the 32-bit shifts took 0.758 / 0.739 ms at 4
// blocks (54 / 55 registers), 0.643 / 0.629 at 5 (48) and 0.631 / 0.566 at 6 (40, the insert spilling 16 bytes);
// bench-results/2026-11-26-session21
#define GV_SHIFT_MIN_BLOCKS 6
// the shifts read their tile's moving entries into shared memory by cp.async (sm_80 on; 0: by plain loads), so that
// an entry's column and weight leave its chain of dependent loads (its row's record, its block's base) and a thread's
// copies stay in flight together without holding registers.  On an H200 (R-MAT 22, 1e6 edges) the shifts took 0.559 /
// 0.519 ms against plain loads' 0.589 / 0.546 (bench-results/2026-11-26-session22).  Tried there and not kept: a
// warp's entries as one run (fewer row changes, 0.667 / 0.561), the last block's base kept per thread (0.725 / 0.558:
// spills at 40 registers), the tiles' flags by release / acquire instead of fences (the same times)
#define GV_SHIFT_ASYNC 1

// A row's fields for the one-pass shifts, written once at its first key by gv_tile_keys and read at an entry's
// row change as two 16-byte loads: the row change (57% of the entries on R-MAT 22) loaded ten scattered 8-byte
// fields before, and the shifts were issue-bound (Nsight Compute, session 20).  32-bit: the one pass takes only
// batches whose flat entries and walked blocks fit (SHIFT_ENTRIES) and whose keys do (SHIFT_TABLE_KEYS).
struct alignas(16) gv_shift_row {
    int start;    // the row's first flat entry
    int t0;       // its first walked block (ends - nb: the index of its first entry base in tbase)
    int r0;       // its first changed position; insert: -1 for a re-homed row (every entry moves, out of place)
    int count;    // its entries before the batch
    int osz;      // its old blocks' size, as gv_size_code
    int nsz;      // insert: its new blocks' size, as gv_size_code; delete: its count after the batch
    int keep;     // insert: its old blocks kept (targets past them are popped blocks); delete: 0
    int before;   // the moving keys (new on an insert, found on a delete) of the rows before it
};

// a block size as the shifts use it: -1 - log2 for a power of two (the size classes: a block and its first
// position by shifts), else the size itself (a fixed size such as 3: by 32-bit divisions)
__device__ int gv_size_code(long long size)
{
    return (size & (size - 1)) == 0 ? -__ffsll(size) : (int)size;
}

// the block of position p in blocks of size code `code`
__device__ int gv_block_of(int p, int code)
{
    return code < 0 ? p >> (-1 - code) : p / code;
}

// the first position of block k in blocks of size code `code`
__device__ int gv_block_start(int k, int code)
{
    return code < 0 ? k << (-1 - code) : k * code;
}

// the source of flat entry e of row ri in the shifts: the row's fields r (read at a row change: a thread's rows do not
// decrease), its position p, and whether it is at or past the row's first changed position r0, then its pool slot
__device__ bool gv_shift_source(const int e, const long long ri, long long& i, gv_shift_row& r, int& p,
                                long long& src, const long long* tbase, const gv_shift_row* rows)
{
    if (ri != i) {
        i = ri;
        r = rows[i];
    }
    p = e - r.start;
    if (p < r.r0) return false;
    const int k = gv_block_of(p, r.osz);
    src = tbase[r.t0 + k] + (p - gv_block_start(k, r.osz));
    return true;
}

// pool slot src's column and weight into the tile's shared slots, without waiting (GV_SHIFT_ASYNC: cp.async; the
// tile waits for its copies by gv_shift_loaded before its barrier).  A slot that the thread clears after reading it
// is read by gv_shift_take instead (an asynchronous read may land after a later store of the thread).
__device__ void gv_shift_load(int* s_col, float* s_w, const int* block_cols, const float* block_weights,
                              const long long src)
{
#if GV_SHIFT_ASYNC && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n"
                 :: "r"((unsigned)__cvta_generic_to_shared(s_col)), "l"(block_cols + src) : "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n"
                 :: "r"((unsigned)__cvta_generic_to_shared(s_w)), "l"(block_weights + src) : "memory");
#else
    *s_col = block_cols[src];
    *s_w = block_weights[src];
#endif
}

// ... and read now, then cleared (an entry leaving its slot: its only reader has read it)
__device__ void gv_shift_take(int* s_col, float* s_w, int* block_cols, const float* block_weights,
                              const long long src)
{
    *s_col = block_cols[src];
    *s_w = block_weights[src];
    block_cols[src] = GV_EMPTY;
}

// the thread's gv_shift_load copies landed (before the tile's barrier)
__device__ void gv_shift_loaded()
{
#if GV_SHIFT_ASYNC && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// threads t <= ntiles: tile t's first key (tile_key[ntiles]: the last entry's), and where its first row's
// gallop starts, tile_h[t]: the first key of that row ranked at or above the tile's first position; the tile
// counter and flags zeroed.  Threads t < total: the entry base of walked block t (tbase).  Threads t < n: key
// t's flat position, kpos[t] = its row's first flat entry + its rank (non-decreasing along the keys: the shifts'
// tables), and at a row's first key its gv_shift_row (rows[t]) from the walk (ends, nb), the ranks (rmin), the
// running count of moving keys (cum: newc / foundc) and, on an insert, the plan (aux: re-homed rows' freed
// blocks, bsz: new block sizes, keep: old blocks kept), on a delete the new counts (aux).  On an insert, a new key
// of a row kept in place whose merged position `to` is below the row's old count goes into the slot that the old
// entry at `to` leaves: gv_insert_shift writes it (kslot[t], that slot; kdst[t], that entry's flat position, whose
// tile's read the writing tile waits for); every other key has kslot[t] = kdst[t] = -1 (gv_insert_scatter writes
// the new ones, beside the shift: their slots are past the old count or in popped blocks, which no tile reads).
extern "C" __global__
void gv_tile_keys(const long long* cnt_ends, const long long* cnt, const long long* ukeys, const long long* rank,
                  const long long n, const long long live, const long long tile, const int mode, const int* table,
                  const long long total, GV_CHUNKS, long long* tile_key, long long* tile_h, long long* tbase,
                  unsigned int* flags, int* kpos, const signed char* block_class, const long long* class_size,
                  const long long* rmin, const long long* ends, const long long* nb, const long long* cum,
                  const long long* aux, const long long* bsz, const long long* keep, gv_shift_row* rows,
                  int* kslot, int* kdst)
{
    const long long ntiles = (live + tile - 1) / tile;
    const long long most = ntiles + 1 > total ? ntiles + 1 : total;
    GV_GRID_LOOP(t, (most > n ? most : n)) {
        if (t < n) {
            const long long v = ukeys[t] >> 32;
            const long long s = gv_first_of(ukeys, t, v);
            const long long c = cnt[t];                 // > 0 at a row's first key only
            kpos[t] = (int)(cnt_ends[s] - cnt[s] + rank[t]);
            if (mode == 0) {
                long long slot = -1, to = 0;
                if (cum[t] - (t > 0 ? cum[t - 1] : 0) > 0)     // a new key
                    slot = gv_kept_slot(t, s, rank, cum, aux, cnt, ends, nb, bsz, table, GV_CHUNK_ARGS, &to);
                kslot[t] = (int)slot;
                kdst[t] = slot >= 0 ? (int)(cnt_ends[s] - cnt[s] + to) : -1;
            }
            if (c > 0) {
                gv_shift_row r;
                r.start = (int)(cnt_ends[t] - c);
                r.t0 = (int)(ends[t] - nb[t]);
                r.count = (int)c;
                r.osz = gv_size_code(class_size[block_class[v]]);   // before the batch: the plan changes it later
                r.before = (int)(t > 0 ? cum[t - 1] : 0);
                // rmin: the least rank of the row's moving keys, or a large value where it has none (nothing of
                // the row moves: from its count on)
                const int first = (int)(rmin[t] < c ? rmin[t] : c);
                if (mode == 0) {
                    r.r0 = aux[t] > 0 ? -1 : first;
                    r.nsz = gv_size_code(bsz[t]);
                    r.keep = (int)keep[t];
                } else {
                    r.r0 = first;
                    r.nsz = (int)aux[t];
                    r.keep = 0;
                }
                rows[t] = r;
            }
        }
        if (t < total) tbase[t] = gv_base(table[t], GV_CHUNK_ARGS);
        if (t > ntiles) continue;
        long long e = t * tile < live ? t * tile : live - 1;
        long long i = gv_upper_bound(cnt_ends, n, e);
        tile_key[t] = i;
        flags[t] = 0u;
        if (t < ntiles)
            tile_h[t] = gv_rank_bound(ukeys, rank, i, n, ukeys[i] >> 32, e - (cnt_ends[i] - cnt[i]), false);
    }
}

// the shifts' shared arrays are skewed by one slot every 32 (GV_TPAD), so that a thread's run of entries in the
// table's scan hits 32 banks across a warp
#define GV_TPAD(j) ((j) + ((j) >> 5))

// the end of a shift tile T (after the barrier that follows its reads): thread 0 publishes them
// (flags[1 + T]) and waits for the tiles from..to to have published theirs, then every thread writes the
// tile's moved entries (s_dst[j] >= 0; their values at GV_TPAD(j)) from shared memory; a barrier before the
// tile's arrays are reused
__device__ void gv_shift_publish_and_write(unsigned int* flags, int T, int from, int to, int len,
                                           const int* s_col, const float* s_w,
                                           const int* s_dst, int* block_cols, float* block_weights)
{
    if (threadIdx.x == 0) {
        __threadfence();                           // this tile's reads before its flag
        atomicExch(&flags[1 + T], 1u);
        for (int u = from; u <= to; ++u)
            while (((volatile unsigned int*)flags)[1 + u] == 0u) { }
        __threadfence();                           // their reads before this tile's writes
    }
    __syncthreads();
    for (int j = threadIdx.x; j < len; j += blockDim.x) {
        const int d = s_dst[j];
        if (d >= 0) {
            block_cols[d] = s_col[GV_TPAD(j)];
            block_weights[d] = s_w[GV_TPAD(j)];
        }
    }
    __syncthreads();
}

// A tile's table: every key whose flat position (kpos: its row's first flat entry + its rank) falls in
// the tile marks it - a row's first key marks the row's start with the row, a key that moves entries (new on an
// insert, found on a delete) its own position with the running count of such keys (newc / foundc) - and a
// block-wide max-scan carries each mark to the entries after it, both being non-decreasing along the entries.
// An entry then reads its row and its count in two shared loads; only its own block's loads go to memory.

// the table of tile [e0, e0 + len), in place of the value arrays s_row (its row's first key, less klo; on a
// delete GV_TDEL where a found key sits) and s_cnt (the moving keys ranked at or below it, less base =
// cum[h0 - 1]); the keys from h0 (the tile's first row's gallop start) on are read, up to the first past it.
// Mode 0 (insert): a row start also carries the count before the row (its new keys ranked at the row's end
// move nothing of it, so the count jumps there), and a new key that the tile writes (kdst[i] >= 0: the flat
// position of the entry whose slot it takes) raises s_reach past that entry; mode 1 (delete): found keys are below
// their row's end (kdst, s_reach: null).
#define GV_TDEL 0x40000000
#define GV_TROWS (GV_SHIFT_TILE_MAX + GV_SHIFT_TILE_MAX / 32)
__device__ int gv_imax(int a, int b) { return a > b ? a : b; }
__device__ void gv_tile_table(int* s_row, int* s_cnt, int* s_carry, const int e0, const int len,
                              const long long klo, const long long h0, const int base, const int* kpos,
                              const long long* cnt, const long long* cnt_ends, const signed char* moving,
                              const long long* cum, const long long n, const int mode, const gv_shift_row* rows,
                              const int* kdst, int* s_reach)
{
    const int per = (len + (int)blockDim.x - 1) / (int)blockDim.x;     // the scan's run of entries per thread
    const int a = (int)threadIdx.x * per < len ? (int)threadIdx.x * per : len;
    const int b = a + per < len ? a + per : len;
    for (int j = a; j < b; ++j) {
        s_row[GV_TPAD(j)] = -1;
        s_cnt[GV_TPAD(j)] = -1;
    }
    __syncthreads();
    const int stop = e0 + len;
    for (long long i = h0 + threadIdx.x; i < n; i += blockDim.x) {
        const int c = (int)cnt[i];                  // > 0 at a row's first key only
        const int rs = (int)cnt_ends[i] - c;
        const int kp = kpos[i];
        if ((c > 0 ? rs : kp) >= stop) break;       // non-decreasing along the keys: so are all later ones
        if (c > 0 && rs > e0) {
            s_row[GV_TPAD(rs - e0)] = (int)(i - klo);
#ifdef __CUDA_ARCH__
            // the row's record into L1 for its entries' first read (H100: shifts 0.576 / 0.556 ms against 0.586 /
            // 0.566 without; bench-results/2026-11-26-session22/call7-prefetch-skip)
            asm volatile("prefetch.global.L1 [%0];\n" :: "l"(rows + i));
#endif
            if (mode == 0) atomicMax(&s_cnt[GV_TPAD(rs - e0)], (i > 0 ? (int)cum[i - 1] : 0) - base);
        }
        if (moving[i] == 1 && kp >= e0 && kp < stop && kp < rs + c) {
            atomicMax(&s_cnt[GV_TPAD(kp - e0)], (int)cum[i] - base);
            if (kdst != nullptr && kdst[i] >= 0) atomicMax(s_reach, kdst[i] + 1);    // the tile writes it
        }
    }
    __syncthreads();
    int r = -1, k = -1;                             // the thread's run, then the warp's inclusive max
    for (int j = a; j < b; ++j) {
        r = gv_imax(r, s_row[GV_TPAD(j)]);
        k = gv_imax(k, s_cnt[GV_TPAD(j)]);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int d = 1; d < 32; d <<= 1) {
        const int r2 = (int)__shfl_up_sync(0xffffffffu, r, d), k2 = (int)__shfl_up_sync(0xffffffffu, k, d);
        if (lane >= d) {
            r = gv_imax(r, r2);
            k = gv_imax(k, k2);
        }
    }
    if (lane == 31 || threadIdx.x == blockDim.x - 1) {
        s_carry[2 * warp] = r;
        s_carry[2 * warp + 1] = k;
    }
    int er = (int)__shfl_up_sync(0xffffffffu, r, 1), ek = (int)__shfl_up_sync(0xffffffffu, k, 1);
    if (lane == 0) er = ek = 0;                     // into the tile: its first row, no moving key yet
    __syncthreads();
    for (int w = 0; w < warp; ++w) {
        er = gv_imax(er, s_carry[2 * w]);
        ek = gv_imax(ek, s_carry[2 * w + 1]);
    }
    er = gv_imax(er, 0);
    ek = gv_imax(ek, 0);
    for (int j = a; j < b; ++j) {
        const int rr = s_row[GV_TPAD(j)], kk = s_cnt[GV_TPAD(j)];
        er = gv_imax(er, rr);
        ek = gv_imax(ek, kk);
        s_row[GV_TPAD(j)] = er | (mode == 1 && kk >= 0 ? GV_TDEL : 0);
        s_cnt[GV_TPAD(j)] = ek;
    }
    __syncthreads();
}

// the insert: an entry at p >= r0 (its row's first changed position; every entry of a re-homed row, r0 < 0) of row
// klo + s_row[j] moves right by its row's new keys ranked at or below it, s_cnt[j] + base - (the new keys before
// the row), in the kept old blocks or the popped ones (gv_merged_slot's arithmetic; gv_insert_scatter's values); a
// re-homed row's old entries are cleared as they are read.  An entry's target in a kept block holds the entry at
// that position (a later flat entry of the row) when below the old count: the tile waits for the tile of the
// furthest such entry.  The new keys whose flat position (kpos: the old entry they precede) is in the tile and whose
// slot an old entry leaves (kslot >= 0, gv_tile_keys) are written by the tile after its wait, which covers those
// entries too (kdst); the other new keys go beside the shift (gv_insert_scatter: past the old counts, popped blocks).
// Before (session 23), every new key was written after the shift by gv_insert_scatter: 0.165 ms of scattered
// loads and stores on an H100 (R-MAT 22, 1e6 edges).  s_row / s_cnt become the tile's moved columns / weights as
// they are read (one thread an entry).  Positions, flat entries and counts are 32-bit (gv_shift_row); pool
// addresses 64-bit.
extern "C" __global__ __launch_bounds__(GV_SHIFT_THREADS, GV_SHIFT_MIN_BLOCKS)
void gv_insert_shift(const long long* tbase, const long long live, const long long tile,
                     const long long* tile_key, const long long* tile_h, unsigned int* flags,
                     const long long n, const long long* cnt, const long long* cnt_ends, const gv_shift_row* rows,
                     GV_CHUNKS, const long long* newc, const long long* cexcl, const long long* cls,
                     const int* queue, const long long* qstart, const long long* qsize, const long long* qhead,
                     int* block_cols, float* block_weights, const int* kpos, const signed char* isnew,
                     const long long* ukeys, const float* uw, const int* kslot, const int* kdst)
{
    __shared__ int s_row[GV_TROWS];                 // the table's rows, then the moved columns
    __shared__ int s_cnt[GV_TROWS];                 // the table's counts, then the moved weights
    __shared__ int s_dst[GV_SHIFT_TILE_MAX];         // pool slots, 32-bit (SHIFT_POOL_ENTRIES)
    __shared__ int s_carry[2 * GV_SHIFT_THREADS / 32];
    __shared__ int s_tile;
    __shared__ int s_reach;                         // 1 + the furthest flat entry this tile overwrites
    float* s_w = reinterpret_cast<float*>(s_cnt);
    const int ntiles = (int)((live + tile - 1) / tile);
    while (true) {
        if (threadIdx.x == 0) {
            s_tile = ntiles - 1 - (int)atomicAdd(&flags[0], 1u);
            s_reach = 0;
        }
        __syncthreads();
        const int T = s_tile;
        if (T < 0) break;
        const int e0 = T * (int)tile;
        const int len = (int)(live - e0 < tile ? live - e0 : tile);
        const long long klo = tile_key[T];
        const long long h0 = tile_h[T];
        const int base = h0 > 0 ? (int)newc[h0 - 1] : 0;
        gv_tile_table(s_row, s_cnt, s_carry, e0, len, klo, h0, base, kpos, cnt, cnt_ends, isnew, newc, n, 0, rows,
                      kdst, &s_reach);
        int reach = 0;
        long long i = -1;
        gv_shift_row r = {};                                // the fields of row i
        for (int j = threadIdx.x; j < len; j += blockDim.x) {
            const int q = GV_TPAD(j);
            s_dst[j] = -1;
            int p;
            long long src;
            if (!gv_shift_source(e0 + j, klo + s_row[q], i, r, p, src, tbase, rows)) continue;
            const int to = p + (s_cnt[q] + base) - r.before;
            const int kb = gv_block_of(to, r.nsz);
            s_dst[j] = (int)((kb < r.keep ? tbase[r.t0 + kb]
                              : gv_base(gv_popped(queue, qstart, qsize, qhead, cls[i], cexcl[i], kb - r.keep),
                                        GV_CHUNK_ARGS))
                             + (to - gv_block_start(kb, r.nsz)));
            if (r.r0 >= 0 && to < r.count) reach = e0 + j + (to - p) + 1;    // ascending
            if (r.r0 < 0) gv_shift_take(&s_row[q], &s_w[q], block_cols, block_weights, src);    // re-homed
            else gv_shift_load(&s_row[q], &s_w[q], block_cols, block_weights, src);
        }
        if (reach) atomicMax(&s_reach, reach);
        gv_shift_loaded();
        __syncthreads();
        const int waited = s_reach > 0 ? (s_reach - 1) / (int)tile : T;
        gv_shift_publish_and_write(flags, T, T + 1, waited, len, s_row, s_w, s_dst, block_cols, block_weights);
        // the tile's new keys (the table's keys again: from h0 to the first past the tile), into the slots of old
        // entries that the tiles waited for have read
        const int stop = e0 + len;
        for (long long k = h0 + threadIdx.x; k < n; k += blockDim.x) {
            const int c = (int)cnt[k];
            const int kp = kpos[k];
            if ((c > 0 ? (int)cnt_ends[k] - c : kp) >= stop) break;
            if (kp < e0 || kp >= stop || kslot[k] < 0) continue;
#ifdef GV_EMULATED
            if (kdst[k] / (int)tile > waited) ++gv_unwaited_writes;     // its old entry's tile not waited for
#endif
            block_cols[kslot[k]] = (int)(ukeys[k] & GV_LOW32);
            block_weights[kslot[k]] = uw[k];
        }
    }
}

// the delete's compaction: a survivor at p >= r0 moves left by its row's found keys ranked below it, s_cnt[j] +
// base - (the found keys before the row), within the kept blocks; an entry marked GV_TDEL is a found key's, left
// behind, and entries at or past the new count are cleared as they are read.  A target holds the entry at that
// position (an earlier flat entry of the row): the tile waits for the tiles from the nearest such entry's on.
extern "C" __global__ __launch_bounds__(GV_SHIFT_THREADS, GV_SHIFT_MIN_BLOCKS)
void gv_delete_shift(const long long* tbase, const long long live, const long long tile,
                     const long long* tile_key, const long long* tile_h, unsigned int* flags,
                     const long long n, const long long* cnt, const long long* cnt_ends, const gv_shift_row* rows,
                     const long long* foundc, int* block_cols, float* block_weights, const int* kpos,
                     const signed char* hit)
{
    __shared__ int s_row[GV_TROWS];
    __shared__ int s_cnt[GV_TROWS];
    __shared__ int s_dst[GV_SHIFT_TILE_MAX];         // pool slots, 32-bit (SHIFT_POOL_ENTRIES)
    __shared__ int s_carry[2 * GV_SHIFT_THREADS / 32];
    __shared__ int s_tile;
    __shared__ int s_first;                        // the nearest flat entry this tile overwrites
    float* s_w = reinterpret_cast<float*>(s_cnt);
    const int ntiles = (int)((live + tile - 1) / tile);
    while (true) {
        if (threadIdx.x == 0) {
            s_tile = (int)atomicAdd(&flags[0], 1u);
            s_first = 0x7FFFFFFF;
        }
        __syncthreads();
        const int T = s_tile;
        if (T >= ntiles) break;
        const int e0 = T * (int)tile;
        const int len = (int)(live - e0 < tile ? live - e0 : tile);
        const long long klo = tile_key[T];
        const long long h0 = tile_h[T];
        const int base = h0 > 0 ? (int)foundc[h0 - 1] : 0;
        gv_tile_table(s_row, s_cnt, s_carry, e0, len, klo, h0, base, kpos, cnt, cnt_ends, hit, foundc, n, 1, rows,
                      nullptr, nullptr);
        int first = 0x7FFFFFFF;
        long long i = -1;
        gv_shift_row r = {};                                // the fields of row i (nsz: its count after the batch)
        for (int j = threadIdx.x; j < len; j += blockDim.x) {
            const int q = GV_TPAD(j);
            s_dst[j] = -1;
            const int rr = s_row[q];
            int p;
            long long src;
            if (!gv_shift_source(e0 + j, klo + (rr & ~GV_TDEL), i, r, p, src, tbase, rows)) continue;
            const int to = p - ((s_cnt[q] + base) - r.before);
            const bool leaves = p >= r.nsz;                 // its slot is past the new count: cleared
            if (!(rr & GV_TDEL) && to != p) {               // a survivor that moves
                const int kb = gv_block_of(to, r.osz);
                s_dst[j] = (int)(tbase[r.t0 + kb] + (to - gv_block_start(kb, r.osz)));
                if (e0 + j - (p - to) < first) first = e0 + j - (p - to);
                if (leaves) gv_shift_take(&s_row[q], &s_w[q], block_cols, block_weights, src);
                else gv_shift_load(&s_row[q], &s_w[q], block_cols, block_weights, src);
            } else if (leaves) {
                block_cols[src] = GV_EMPTY;                 // a found key's entry: not read
            }
        }
        if (first < 0x7FFFFFFF) atomicMin(&s_first, first);
        gv_shift_loaded();
        __syncthreads();
        gv_shift_publish_and_write(flags, T, s_first < e0 ? s_first / (int)tile : T, T - 1, len, s_row, s_w, s_dst,
                                   block_cols, block_weights);
    }
}

// edge queries: one thread per (src, dst) pair, a binary search of the source's sorted row -
// first over its blocks by their first column (each probe walks the CBT by the bit string of its
// index), then inside the block.  hit[t]; weight[t] (NaN when absent) when want_weight.
// slot of edge (v, c), -1 when absent
__device__ long long gv_query_slot(long long v, long long c, const long long cap, const long long* edge_count,
                                   const int* num_blocks, const int* root_block, const int* left,
                                   const int* right, const signed char* block_class,
                                   const long long* class_size, GV_CHUNKS, const int* block_cols)
{
    long long cnt = (v >= 0 && v < cap && c >= 0 && c <= 0x7FFFFFFFLL) ? edge_count[v] : 0;
    if (cnt <= 0) return -1;
    long long bs = class_size[block_class[v]];
    int root = root_block[v];
    long long lo = 0, hi = num_blocks[v] - 1;              // the last block whose first column <= c
    while (lo < hi) {
        long long mid = (lo + hi + 1) >> 1;
        int b = gv_walk_to(root, mid, left, right);
        if (block_cols[gv_base(b, GV_CHUNK_ARGS)] <= c) lo = mid; else hi = mid - 1;
    }
    long long base = gv_base(gv_walk_to(root, lo, left, right), GV_CHUNK_ARGS);
    long long m = cnt - lo * bs < bs ? cnt - lo * bs : bs;
    long long a = 0, z = m;
    while (a < z) {
        long long mid = (a + z) >> 1;
        if (block_cols[base + mid] < c) a = mid + 1; else z = mid;
    }
    return (a < m && block_cols[base + a] == c) ? base + a : -1;
}

#define GV_QUERY_ARGS const long long n, const long long cap, const long long* edge_count, \
    const int* num_blocks, const int* root_block, const int* left, const int* right, \
    const signed char* block_class, const long long* class_size, GV_CHUNKS, const int* block_cols, \
    const float* block_weights, bool* hit, const int want_weight, float* weight
#define GV_QUERY_BODY \
    GV_GRID_LOOP(t, n) { \
        long long slot = gv_query_slot((long long)qsrc[t], (long long)qdst[t], cap, edge_count, num_blocks, \
                                       root_block, left, right, block_class, class_size, GV_CHUNK_ARGS, \
                                       block_cols); \
        hit[t] = slot >= 0; \
        if (want_weight) weight[t] = slot >= 0 ? block_weights[slot] : __int_as_float(0x7fc00000); \
    }

extern "C" __global__
void gv_query_i32(const int* qsrc, const int* qdst, GV_QUERY_ARGS) { GV_QUERY_BODY }

extern "C" __global__
void gv_query_i64(const long long* qsrc, const long long* qdst, GV_QUERY_ARGS) { GV_QUERY_BODY }

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
""".replace("@UPPER_BOUND@", upper_bound("gv_upper_bound")).replace("@BLOCK_EXCL@", block_exclusive_scan("gv"))

KERNELS = ("gv_walk", "gv_walk_fill", "gv_fill_rows", "gv_locate", "gv_find", "gv_activate", "gv_new_vertices",
           "gv_prep", "gv_prep_block", "gv_key_blocks", "gv_insert_plan", "gv_plan_scan", "gv_insert_plan_block",
           "gv_insert_write", "gv_insert_finish", "gv_delete_move", "gv_delete_plan", "gv_delete_plan_block",
           "gv_delete_finish", "gv_query_i32", "gv_query_i64", "gv_gather", "gv_walk_keys", "gv_rank", "gv_stage",
           "gv_insert_scatter", "gv_delete_scatter", "gv_tile_keys", "gv_insert_shift", "gv_delete_shift",
           "gv_scan")
#: the one-block kernels (launched on one block of BLOCK_THREADS threads)
BLOCK_KERNELS = frozenset({"gv_prep_block", "gv_insert_plan_block", "gv_delete_plan_block"})

_kernels = RawKernels(SOURCE, "GraphVine")


def _defined(name: str) -> int:
    """The value of ``#define name`` in SOURCE: the constants that the host shares with the kernels are read from
    the source, so that the two cannot drift apart."""
    return int(re.search(rf"^#define {name} (\d+)", SOURCE, re.MULTILINE).group(1))


#: lanes per table row of gv_fill_rows, gv_stage and the scatters
FILL_LANES = _defined("GV_FILL_LANES")
#: lanes per table row of gv_walk_fill
WALK_LANES = _defined("GV_WALK_LANES")
#: keys per chunk of the plans' per-class prefix sums
SCAN_CHUNK = _defined("GV_SCAN_CHUNK")
#: threads of a one-block kernel, the most keys and size classes it takes
BLOCK_THREADS = _defined("GV_BLOCK_THREADS")
BLOCK_KEYS = _defined("GV_BLOCK_KEYS")
MAX_CLASSES = _defined("GV_MAX_CLASSES")
#: the io buffer's slots (GV_IO_* in the source)
IO_BAD, IO_NEG, IO_TOP, IO_BLOCKS, IO_LIVE, IO_NEWV, IO_ACTIVATED, IO_NEWV2, IO_COUNT, IO_STOP, IO_HOLD, IO_TOTALS = \
    range(12)
IO_N = IO_TOTALS + 2 * MAX_CLASSES + 2
IO_SLOTS = IO_N + 1
#: the one-pass shifts (gv_insert_shift, gv_delete_shift): entries per tile (at most GV_SHIFT_TILE_MAX; tests
#: set a few to cross many tiles), threads per block, and the most blocks (each takes tiles from a counter)
SHIFT_TILE_MAX = _defined("GV_SHIFT_TILE_MAX")
SHIFT_TILE = SHIFT_TILE_MAX
#: the one-pass shifts take batches of fewer keys (their tables hold a row as its first key's offset from the tile's
#: first row's, below GV_TDEL); larger ones are staged
SHIFT_TABLE_KEYS = 1 << 30
#: ... and batches whose touched rows' flat entries and walked blocks are fewer (gv_shift_row's 32-bit fields; a tile
#: past the last entry stays below 2^31)
SHIFT_ENTRIES = (1 << 31) - SHIFT_TILE_MAX
#: ... into pools of fewer entries (the tiles keep their entries' pool slots as 32-bit in shared memory)
SHIFT_POOL_ENTRIES = 1 << 31
SHIFT_THREADS = _defined("GV_SHIFT_THREADS")
SHIFT_GRID = 132 * 8
#: kernels launched on SHIFT_GRID blocks of SHIFT_THREADS (``n``: their tiles)
SHIFT_KERNELS = frozenset({"gv_insert_shift", "gv_delete_shift"})
#: the prefix sums (scan_rows, scan_columns): items per tile (a kernel argument: tests set a few), threads per block;
#: launched on at most SHIFT_GRID blocks (``n``: their tiles)
SCAN_TILE = 4096
SCAN_TILE_MAX = _defined("GV_SCAN_TILE_MAX")
SCAN_THREADS = _defined("GV_SCAN_THREADS")
SCAN_KERNELS = frozenset({"gv_scan"})
#: the least launch size of a kernel whose size is on the device: a wave of an H100 (132 SMs x 8 blocks
#: of 256 threads); its grid-stride loop covers the rest
MIN_GRID = 132 * 8 * 256

_block_functions: dict = {}


def _device_launch(xp, name: str, n: int, args: tuple) -> None:
    """A grid-stride kernel over ``n`` items, or a one-block kernel (BLOCK_KERNELS) on one block."""
    if name in SHIFT_KERNELS or name in SCAN_KERNELS:
        threads = SHIFT_THREADS if name in SHIFT_KERNELS else SCAN_THREADS
        _kernels.launch_blocks(xp, name, min(int(n), SHIFT_GRID), threads, args)
        return
    if name not in BLOCK_KERNELS:
        _kernels.launch(xp, name, n, args)
        return
    count_launch(name)
    f = _block_functions.get(name)
    if f is None:                      # compiled with the module on first use; get_function costs ~10 us
        if not hasattr(xp, "RawModule"):
            raise RuntimeError("the fused GraphVine kernels need CuPy (use fused=False on NumPy)")
        if _kernels._module is None:
            _kernels._module = xp.RawModule(code=_kernels.source)
        f = _block_functions[name] = _kernels._module.get_function(name)
    f((1,), (BLOCK_THREADS,), args)


#: the one-sync path's kernels (captured as one CUDA graph with ``graphs``)
ONE_SYNC_KERNELS = ("gv_prep_block", "gv_walk_fill", "gv_find", "gv_insert_plan_block", "gv_insert_write",
                    "gv_insert_finish", "gv_delete_plan_block", "gv_delete_move", "gv_delete_finish", "gv_walk_keys",
                    "gv_rank", "gv_stage", "gv_insert_scatter", "gv_delete_scatter")


def preload(xp, names) -> None:
    """Compile the module and load ``names`` (a CUDA graph's capture must not load them)."""
    for name in names:
        if name in BLOCK_KERNELS:
            if name not in _block_functions:
                if _kernels._module is None:
                    _kernels._module = xp.RawModule(code=_kernels.source)
                _block_functions[name] = _kernels._module.get_function(name)
        else:
            _kernels._function(xp, name)


#: the launcher in use; tests swap in a serial host emulation of the same source
launcher = _device_launch


def launch(xp, name: str, n: int, *args) -> None:
    """Run kernel ``name`` over ``n`` items; does nothing when ``n`` is 0 (arrays may be empty)."""
    if int(n) <= 0:
        return
    launcher(xp, name, int(n), tuple(args))


def _scan(xp, values, kind: int, n: int, rows: int, rs: int, step: int, out, total) -> None:
    """gv_scan: ``rows`` rows of ``n`` items, item ``i`` of row ``r`` at ``r * rs + i * step`` of ``values`` and
    ``out``; row sums into ``total`` (zeros for empty rows)."""
    assert 0 < SCAN_TILE <= SCAN_TILE_MAX
    tiles = rows * ((n + SCAN_TILE - 1) // SCAN_TILE)
    if not tiles:
        total[:rows] = 0
        return
    state = xp.zeros(1 + 3 * tiles, dtype=np.int64)         # the tile counter; each tile's flag, sum and prefix
    launch(xp, "gv_scan", tiles, values, i32(kind), i64(n), i64(rows), i64(rs), i64(step), i64(SCAN_TILE), state,
           out, total)


def scan_rows(xp, values, out, total) -> None:
    """Inclusive prefix sums along the last axis of the contiguous ``values`` (int8 flags or int64; 1-d, or 2-d
    rows) into the int64 ``out`` of the same shape (``values`` itself allowed), each row's sum into ``total[row]`` (an
    int64 device array: a view of an io buffer, so that a later read carries it).  One launch (and the zeroed tile
    states): CuPy's cumsum cost the host 100-140 us a call, which the device spent waiting."""
    kind = {np.dtype(np.int8): 0, np.dtype(np.int64): 1}[np.dtype(values.dtype)]
    rows, n = (1, int(values.shape[0])) if values.ndim == 1 else (int(values.shape[0]), int(values.shape[1]))
    _scan(xp, values, kind, n, rows, n, 1, out, total)


def scan_columns(xp, values, total) -> None:
    """Inclusive prefix sums down the columns of the contiguous 2-d int64 ``values``, in place; column ``c``'s sum
    into ``total[c]`` (one launch, as :func:`scan_rows`)."""
    nrows, width = int(values.shape[0]), int(values.shape[1])
    _scan(xp, values, 1, nrows, width, 1, width, values, total)
