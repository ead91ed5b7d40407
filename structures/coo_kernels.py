"""Fused CUDA kernels for the COO graph's edge phases on the GPU (structures/coo.py).

The array program of :mod:`structures.coo` stays the reference (it runs on NumPy and,
with ``fused=False``, on CuPy); on a GPU a 1,000-edge batch costs it some forty device
operations per phase, each a kernel launch or a copy that the host dispatches, and that
dispatch, not the device work, is the batch's time.  These kernels do the same work in
three (delete) or four (insert) operations per phase, none of them a pass over the index:

* ``coo_find`` - one thread per batch edge: its key (the source found by a binary
  search of the batch's row offsets), the position of its entry in the main index or
  the log (two binary searches; a key has at most one entry), whether that entry is
  live (its slot still holds the edge); in insert mode an existing edge's weight is
  written into its slot at once (the upsert), and a packed flag marks the new edges
  (low half) and, of those, the ones without any entry (high half), so one prefix
  sum ranks both; in delete mode the flag marks the live ones.  A batch of up to
  ``BLOCK_FIND_MAX`` edges runs it as ``coo_find_block``: one block of 1,024 threads that
  also computes the prefix sum (``block_primitives``' scan) and writes the total; a larger
  one takes ``coo_find`` and CuPy's ``cumsum``.  A small delete runs ``coo_delete_block``:
  the find, the prefix sum and ``coo_delete_apply``'s release in one block (one launch);
* ``coo_delete_apply`` - found edge of rank ``r`` frees its slot (``-1`` in row and
  column, which kills its index entry) and pushes it at the queue's tail
  (``deleted[(tail + r) % cap]``, paper Alg. 8);
* ``coo_insert_place`` - new edge of rank ``r`` takes ``deleted[(head + r) % cap]`` while
  the queue lasts and ``high_water + r - queued`` after it (paper Alg. 7), writes its
  row, column and weight there, revives its key's dead entry with the slot, or else
  lists its key and slot for the log's merge by its log rank;
* ``coo_index_merge`` - the log and the batch's new keys merged by rank: an element's
  place is its index plus the number of the other list's keys below it;
* ``coo_rows_count`` / ``coo_rows_count_block`` and ``coo_rows_fill`` - ``adjacency(vertices)``:
  one thread per vertex finds its ranges in the main index and the log and counts, then
  writes, its live entries (the block form also computes the row offsets); the array
  program's gather, stable sort and compaction are some twenty operations;
* ``coo_vertex_insert`` - the new vertices' flags in ``v_d``;
* ``coo_query`` - one thread per queried edge: ``contains`` and ``edge_weights`` in one
  launch (the array program's lookup is some thirty operations).

The vertex deletion (``COOGraph.delete_live_vertices``, paper Alg. 9) compacts the index
first (its scan is O(E) anyway), then takes five operations (three launches, one prefix sum, one read of both sizes):

* ``coo_vertex_mark`` - one thread per dying vertex: its flag in the graph's
  persistent ``dying`` array (all zero between calls), ``v_d`` cleared;
* ``coo_vertex_hits`` - over the ``high_water`` slots, then the ``n`` index keys:
  ``flags[t]`` = 1 for a used slot with a dying end (it is freed), then for a key with
  no dying end (it stays); ``cumsum(flags)`` gives every rank;
* ``coo_vertex_remove`` - a freed slot of rank ``r`` (slot order) writes its ends to
  the result, frees its row and column and is queued at ``deleted[(tail + r) % cap]``;
  a kept key of rank ``r`` goes to the new index's place ``r``; the dying flags are
  cleared again; thread 0 writes the two sizes into a header the host reads at once.

Every location has one writer per launch (batch keys are distinct, so are their
slots and ranks).  All kernels use grid-stride loops and 64-bit indices.  The source is
one string, ``SOURCE``, which ``tests/test_kernels_compile.py`` compiles with nvcc and
``tests/coo_emulation.py`` runs serially on the CPU behind a small host prelude.
"""
from __future__ import annotations

from .block_primitives import block_sort_and_scan, lower_bound
from .raw_kernels import RawKernels, i64  # noqa: F401  (i64 used by callers)

SOURCE = r"""
#define COO_FREE (-1)
#define COO_BLOCK 1024
#ifndef COO_BLOCK_LOOP
#define COO_BLOCK_LOOP(i, n) for (long long i = threadIdx.x; i < (n); i += blockDim.x)
#endif
@BLOCK_PRIMITIVES@
#define COO_LOW32 0xFFFFFFFFLL
#ifndef COO_GRID_LOOP
#define COO_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif

@LOWER_BOUND@

// the key of batch edge t: its row is the first r with offsets[r + 1] > t
__device__ long long coo_batch_key(const int* rows, const long long* offsets, long long nrows,
                                   const int* cols, long long t)
{
    long long lo = 0, hi = nrows;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (offsets[mid + 1] > t) hi = mid; else lo = mid + 1;
    }
    return ((long long)rows[lo] << 32) | (long long)cols[t];
}

// the slot the entry at virtual position p names: the main index's [0, n), the log's n + q
__device__ long long coo_slot_at(const long long* slots, long long n, const long long* log_slots, long long p)
{
    return p < n ? slots[p] : log_slots[p - n];
}

// an entry is live while its slot holds its own edge (a delete frees the slot, which kills the entry)
__device__ bool coo_entry_live(const int* row_idx, const int* col_idx, long long key, long long slot)
{
    return slot >= 0 && row_idx[slot] == (int)(key >> 32) && col_idx[slot] == (int)(key & COO_LOW32);
}

// For each batch edge: its key, the virtual position of its index entry (main [0, n), log n + q; -1 for
// none: each key has at most one entry) and a packed flag.  insert_mode 1: flag = 1 for a new edge (no
// live entry) plus 2^32 when it also has no entry at all (it joins the log; a dead entry is revived
// instead), and an existing edge's weight goes to its slot at once (the upsert); insert_mode 0: flag = 1
// for an edge with a live entry (to be deleted).  One prefix sum of the flags gives both ranks.
#define COO_FIND_PARAMS                                                                                   \
    const int* rows, const long long* offsets, const long long nrows, const int* cols,                  \
    const long long k, const long long* index_keys, const long long* index_slots, const long long n,    \
    const long long* log_keys, const long long* log_slots, const long long nlog,                        \
    const int* row_idx, const int* col_idx,                                                             \
    const float* weights, float* value, const int insert_mode,                                          \
    long long* batch_key, long long* pos, long long* flag, bool* mask

__device__ void coo_find_one(COO_FIND_PARAMS, long long t)
{
    long long key = coo_batch_key(rows, offsets, nrows, cols, t);
    long long p = coo_lower_bound(index_keys, n, key);
    if (!(p < n && index_keys[p] == key)) {
        long long q = coo_lower_bound(log_keys, nlog, key);
        p = (q < nlog && log_keys[q] == key) ? n + q : -1;
    }
    long long slot = p >= 0 ? coo_slot_at(index_slots, n, log_slots, p) : -1;
    bool live = p >= 0 && coo_entry_live(row_idx, col_idx, key, slot);
    batch_key[t] = key;
    pos[t] = p;
    if (insert_mode) {
        if (live) value[slot] = weights[t];            // the one writer of this slot
        flag[t] = live ? 0 : (1 + (p < 0 ? (1LL << 32) : 0));
        mask[t] = !live;
    } else {
        flag[t] = live ? 1 : 0;
        mask[t] = live;
    }
}

#define COO_FIND_ARGS rows, offsets, nrows, cols, k, index_keys, index_slots, n, log_keys, log_slots, nlog, \
    row_idx, col_idx, weights, value, insert_mode, batch_key, pos, flag, mask

extern "C" __global__
void coo_find(COO_FIND_PARAMS)
{
    COO_GRID_LOOP(t, k) coo_find_one(COO_FIND_ARGS, t);
}

// coo_find and the inclusive prefix sum of the flags in one block (a small batch: one launch instead of
// a find and CuPy's multi-kernel scan); the flags' total goes to total[0], the phase's one read
extern "C" __global__ void __launch_bounds__(COO_BLOCK)
coo_find_block(COO_FIND_PARAMS, long long* rank, long long* total)
{
    __shared__ long long sh[COO_BLOCK];
    COO_BLOCK_LOOP(t, k) coo_find_one(COO_FIND_ARGS, t);
    __syncthreads();
    long long sum = coo_scan(flag, rank, k, sh);          // exclusive
    COO_BLOCK_LOOP(t, k) rank[t] += flag[t];              // inclusive, as cumsum gives it
    if (threadIdx.x == 0) total[0] = sum;
}

// coo_find_block in delete mode, then coo_delete_apply over the found edges in the same block (a small
// delete: one launch instead of two, and nothing between them for the host to dispatch).  The release
// writes row_idx / col_idx, which the find only read before the scan's barriers (one block: every find
// is done by then); total[0]: the found count, the phase's one read
extern "C" __global__ void __launch_bounds__(COO_BLOCK)
coo_delete_block(COO_FIND_PARAMS, long long* rank, long long* total, long long* deleted, const long long cap,
                 const long long tail)
{
    __shared__ long long sh[COO_BLOCK];
    COO_BLOCK_LOOP(t, k) coo_find_one(COO_FIND_ARGS, t);
    __syncthreads();
    long long sum = coo_scan(flag, rank, k, sh);          // exclusive
    COO_BLOCK_LOOP(t, k) {
        rank[t] += flag[t];                                // inclusive, as coo_delete_apply reads it
        if (flag[t]) {
            long long slot = coo_slot_at(index_slots, n, log_slots, pos[t]);
            ((int*)row_idx)[slot] = COO_FREE;
            ((int*)col_idx)[slot] = COO_FREE;
            deleted[(tail + rank[t] - 1) % cap] = slot;
        }
    }
    if (threadIdx.x == 0) total[0] = sum;
}

// The live out-edges of k vertices (adjacency(vertices) on a GPU).  A vertex's entries lie in
// [v << 32, (v + 1) << 32) of the main index and of the log; its row is its live main entries, then its
// live log entries (the array program's order).  coo_rows_count: the four bounds and the live count of
// each vertex; coo_rows_count_block: the same for a small k in one block, with the exclusive prefix sum
// (the row offsets, offsets[k] the total); coo_rows_fill: each vertex writes its row.
__device__ void coo_rows_bounds(const long long* v, const long long t, const long long* keys, const long long n,
                                const long long* log_keys, const long long nlog, long long* bounds)
{
    long long lo = v[t] << 32, hi = (v[t] + 1) << 32;
    bounds[4 * t] = coo_lower_bound(keys, n, lo);
    bounds[4 * t + 1] = coo_lower_bound(keys, n, hi);
    bounds[4 * t + 2] = coo_lower_bound(log_keys, nlog, lo);
    bounds[4 * t + 3] = coo_lower_bound(log_keys, nlog, hi);
}

__device__ long long coo_rows_live(const long long t, const long long* keys, const long long* slots,
                                   const long long* log_keys, const long long* log_slots,
                                   const int* row_idx, const int* col_idx, const long long* bounds,
                                   long long* out_pos, int* out_cols, float* out_w, const float* value)
{
    long long c = 0;
    for (long long p = bounds[4 * t]; p < bounds[4 * t + 1]; ++p)
        if (coo_entry_live(row_idx, col_idx, keys[p], slots[p])) {
            if (out_cols) {
                out_cols[*out_pos + c] = (int)(keys[p] & COO_LOW32);
                out_w[*out_pos + c] = value[slots[p]];
            }
            ++c;
        }
    for (long long q = bounds[4 * t + 2]; q < bounds[4 * t + 3]; ++q)
        if (coo_entry_live(row_idx, col_idx, log_keys[q], log_slots[q])) {
            if (out_cols) {
                out_cols[*out_pos + c] = (int)(log_keys[q] & COO_LOW32);
                out_w[*out_pos + c] = value[log_slots[q]];
            }
            ++c;
        }
    return c;
}

#define COO_ROWS_PARAMS const long long* v, const long long k, const long long* keys, const long long* slots,      \
    const long long n, const long long* log_keys, const long long* log_slots, const long long nlog,             \
    const int* row_idx, const int* col_idx, long long* bounds, long long* counts

extern "C" __global__
void coo_rows_count(COO_ROWS_PARAMS)
{
    COO_GRID_LOOP(t, k) {
        coo_rows_bounds(v, t, keys, n, log_keys, nlog, bounds);
        counts[t] = coo_rows_live(t, keys, slots, log_keys, log_slots, row_idx, col_idx, bounds, 0, 0, 0, 0);
    }
}

extern "C" __global__ void __launch_bounds__(COO_BLOCK)
coo_rows_count_block(COO_ROWS_PARAMS, long long* offsets)
{
    __shared__ long long sh[COO_BLOCK];
    COO_BLOCK_LOOP(t, k) {
        coo_rows_bounds(v, t, keys, n, log_keys, nlog, bounds);
        counts[t] = coo_rows_live(t, keys, slots, log_keys, log_slots, row_idx, col_idx, bounds, 0, 0, 0, 0);
    }
    __syncthreads();
    long long total = coo_scan(counts, offsets, k, sh);
    if (threadIdx.x == 0) offsets[k] = total;
}

extern "C" __global__
void coo_rows_fill(const long long k, const long long* keys, const long long* slots, const long long* log_keys,
                   const long long* log_slots, const int* row_idx, const int* col_idx, const float* value,
                   const long long* bounds, const long long* offsets, int* cols, float* weights)
{
    COO_GRID_LOOP(t, k) {
        long long at = offsets[t];
        coo_rows_live(t, keys, slots, log_keys, log_slots, row_idx, col_idx, bounds, &at, cols, weights, value);
    }
}

// v_d[ids[t]] = 1 for k distinct new vertex ids (CuPy's fancy-index assignment costs ~0.1 ms of host time)
extern "C" __global__
void coo_vertex_insert(const int* ids, const long long k, bool* v_d)
{
    COO_GRID_LOOP(t, k) v_d[ids[t]] = true;
}

// A query of k edges (src[t], dst[t]): whether each is live and its weight (NaN where absent), by the
// same two binary searches and liveness check as coo_find; nothing is written to the graph
extern "C" __global__
void coo_query(const long long* src, const long long* dst, const long long k,
               const long long* index_keys, const long long* index_slots, const long long n,
               const long long* log_keys, const long long* log_slots, const long long nlog,
               const int* row_idx, const int* col_idx, const float* value, bool* found, float* weight)
{
    COO_GRID_LOOP(t, k) {
        long long key = (src[t] << 32) | (dst[t] & COO_LOW32);
        long long p = coo_lower_bound(index_keys, n, key);
        long long slot = -1;
        if (p < n && index_keys[p] == key) {
            slot = index_slots[p];
        } else {
            long long q = coo_lower_bound(log_keys, nlog, key);
            if (q < nlog && log_keys[q] == key) slot = log_slots[q];
        }
        bool live = coo_entry_live(row_idx, col_idx, key, slot);
        found[t] = live;
        weight[t] = live ? value[slot] : __int_as_float(0x7fc00000);
    }
}

// rank[t]: inclusive prefix sum of flag; the live edge of rank r frees its slot (-1 in row and column,
// which kills its index entry) and pushes it at the queue's tail
extern "C" __global__
void coo_delete_apply(const long long k, const long long* flag, const long long* rank, const long long* pos,
                      const long long* index_slots, const long long n, const long long* log_slots,
                      int* row_idx, int* col_idx, long long* deleted, const long long cap, const long long tail)
{
    COO_GRID_LOOP(t, k) {
        if (!flag[t]) continue;
        long long r = rank[t] - 1;
        long long slot = coo_slot_at(index_slots, n, log_slots, pos[t]);
        row_idx[slot] = COO_FREE;
        col_idx[slot] = COO_FREE;
        deleted[(tail + r) % cap] = slot;
    }
}

// the new edge of rank r (low half of rank) takes deleted[(head + r) % cap] while the queue lasts
// (queued of them), then slot high_water + r - queued; a dead index entry of its key takes the slot
// (revived), otherwise the edge of log rank q (high half) lists its key and slot for the log's merge
extern "C" __global__
void coo_insert_place(const long long k, const long long* flag, const long long* rank,
                      const long long* batch_key, const long long* pos, const float* weights,
                      const long long* deleted, const long long cap, const long long head,
                      const long long queued, const long long high_water,
                      int* row_idx, int* col_idx, float* value, long long* index_slots, const long long n,
                      long long* log_slots, long long* new_keys, long long* new_slots)
{
    COO_GRID_LOOP(t, k) {
        if (!flag[t]) continue;
        long long r = (rank[t] & COO_LOW32) - 1;
        long long slot = r < queued ? deleted[(head + r) % cap] : high_water + r - queued;
        long long key = batch_key[t];
        row_idx[slot] = (int)(key >> 32);
        col_idx[slot] = (int)(key & COO_LOW32);
        value[slot] = weights[t];
        long long p = pos[t];
        if (p >= 0) {
            if (p < n) index_slots[p] = slot; else log_slots[p - n] = slot;
        } else {
            long long q = (rank[t] >> 32) - 1;
            new_keys[q] = key;
            new_slots[q] = slot;
        }
    }
}

// the index (n keys) and the new keys (m, distinct from the index) merged by rank
extern "C" __global__
void coo_index_merge(const long long n, const long long* keys, const long long* slots,
                     const long long m, const long long* new_keys, const long long* new_slots,
                     long long* out_keys, long long* out_slots)
{
    COO_GRID_LOOP(t, n + m) {
        if (t < n) {
            long long at = t + coo_lower_bound(new_keys, m, keys[t]);
            out_keys[at] = keys[t];
            out_slots[at] = slots[t];
        } else {
            long long r = t - n;
            long long at = r + coo_lower_bound(keys, n, new_keys[r]);
            out_keys[at] = new_keys[r];
            out_slots[at] = new_slots[r];
        }
    }
}
extern "C" __global__
void coo_vertex_mark(const int* ids, const long long k, unsigned char* dying, bool* v_d)
{
    COO_GRID_LOOP(t, k) { dying[ids[t]] = 1; v_d[ids[t]] = false; }
}

// flags[0, hw): slot t is used and has a dying end; flags[hw, hw + n): key t - hw has no dying end
extern "C" __global__
void coo_vertex_hits(const int* row, const int* col, const long long hw, const long long* keys,
                     const long long n, const unsigned char* dying, long long* flags)
{
    COO_GRID_LOOP(t, hw + n) {
        long long f;
        if (t < hw) {
            int r = row[t], c = col[t];
            f = (r != COO_FREE && (dying[r] || dying[c])) ? 1 : 0;
        } else {
            long long key = keys[t - hw];
            f = (dying[key >> 32] || dying[key & COO_LOW32]) ? 0 : 1;
        }
        flags[t] = f;
    }
}

// cs: the inclusive prefix sums of flags; removed ends [hw each at most], the queue ring (cap slots,
// tail), the kept keys and slots [n at most]; header: freed slots, kept keys
extern "C" __global__
void coo_vertex_remove(int* row, int* col, const long long hw, const long long* keys, const long long* slots,
                       const long long n, const long long* flags, const long long* cs,
                       const int* ids, const long long k, unsigned char* dying,
                       long long* deleted, const long long cap, const long long tail,
                       int* removed_src, int* removed_dst, long long* new_keys, long long* new_slots,
                       long long* header)
{
    const long long n_hit = hw > 0 ? cs[hw - 1] : 0;
    const long long total = hw + n;
    COO_GRID_LOOP(t, total > k ? total : k) {
        if (t < total && flags[t]) {
            if (t < hw) {
                long long r = cs[t] - 1;
                removed_src[r] = row[t];
                removed_dst[r] = col[t];
                row[t] = COO_FREE;
                col[t] = COO_FREE;
                deleted[(tail + r) % cap] = t;
            } else {
                long long r = cs[t] - n_hit - 1;
                new_keys[r] = keys[t - hw];
                new_slots[r] = slots[t - hw];
            }
        }
        if (t < k) dying[ids[t]] = 0;
        if (t == 0) { header[0] = n_hit; header[1] = (total > 0 ? cs[total - 1] : 0) - n_hit; }
    }
}
"""

SOURCE = (SOURCE.replace("@BLOCK_PRIMITIVES@", block_sort_and_scan("coo", "COO_BLOCK_LOOP"))    # coo_scan
          .replace("@LOWER_BOUND@", lower_bound("coo_lower_bound")))

KERNELS = ("coo_find", "coo_find_block", "coo_delete_block", "coo_delete_apply", "coo_insert_place", "coo_index_merge",
           "coo_query", "coo_vertex_insert", "coo_rows_count", "coo_rows_count_block", "coo_rows_fill",
           "coo_vertex_mark", "coo_vertex_hits", "coo_vertex_remove")

_kernels = RawKernels(SOURCE, "COO")

#: the launchers in use (grid-stride kernels; one-block kernels); tests swap in a serial host emulation
launcher = _kernels.launch
block_launcher = _kernels.launch_blocks

#: batches up to this size take ``coo_find_block`` (one block of COO_BLOCK threads, eight keys each)
BLOCK_FIND_MAX = 8192


def launch(xp, name: str, n: int, *args) -> None:
    """Run kernel ``name`` over ``n`` work items (nothing when ``n`` is 0)."""
    if int(n) <= 0:
        return
    launcher(xp, name, int(n), tuple(args))


def launch_block(xp, name: str, *args) -> None:
    """Run the one-block kernel ``name`` (``COO_BLOCK`` threads)."""
    block_launcher(xp, name, 1, 1024, tuple(args))
