"""Fused CUDA kernels for the COO graph's edge phases on the GPU (structures/coo.py).

The array program of :mod:`structures.coo` stays the reference (it runs on NumPy and,
with ``fused=False``, on CuPy); on a GPU a 1,000-edge batch costs it some forty device
operations per phase, each a kernel launch or a copy that the host dispatches, and that
dispatch, not the device work, is the batch's time.  These kernels do the same work in
five operations per phase (two launches, one prefix sum, one size read, one index
rewrite):

* ``coo_find`` - one thread per batch edge: its key (the source found by a binary
  search of the batch's row offsets), its position in the sorted key index, whether it
  is there; in insert mode an existing edge's weight is written into its slot at once
  (the upsert), and the mask marks the new edges; in delete mode the found ones;
* ``coo_delete_apply`` - after an exclusive prefix sum of the mask: found edge of rank
  ``r`` frees its slot (``-1`` in row and column) and pushes it at the queue's tail
  (``deleted[(tail + r) % cap]``, paper Alg. 8), and records its index position;
* ``coo_index_remove`` - the key index without the removed positions: output ``j``
  reads input ``j + r``, ``r`` being the number of removed positions ``p_t`` with
  ``p_t - t <= j`` (a binary search over the batch's removed positions);
* ``coo_insert_place`` - new edge of rank ``r`` takes ``deleted[(head + r) % cap]`` while
  the queue lasts and ``high_water + r - queued`` after it (paper Alg. 7), writes its
  row, column and weight there, and lists its key and slot for the merge;
* ``coo_index_merge`` - the index and the batch's new keys merged by rank: an element's
  place is its index plus the number of the other list's keys below it.

The vertex deletion (``COOGraph.delete_live_vertices``, paper Alg. 9) takes five
operations too (three launches, one prefix sum, one read of both sizes):

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

from .raw_kernels import RawKernels, i64  # noqa: F401  (i64 used by callers)

SOURCE = r"""
#define COO_FREE (-1)
#define COO_LOW32 0xFFFFFFFFLL
#ifndef COO_GRID_LOOP
#define COO_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif

// first i in [0, n) with a[i] >= x (a ascending); n when none
__device__ long long coo_lower_bound(const long long* a, long long n, long long x)
{
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

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

// insert_mode 1: mask = the edge is new, and an existing edge's weight goes to its slot;
// insert_mode 0: mask = the edge is in the index (to be deleted)
extern "C" __global__
void coo_find(const int* rows, const long long* offsets, const long long nrows, const int* cols,
              const long long k, const long long* index_keys, const long long* index_slots, const long long n,
              const float* weights, float* value, const int insert_mode,
              long long* batch_key, long long* pos, bool* mask)
{
    COO_GRID_LOOP(t, k) {
        long long key = coo_batch_key(rows, offsets, nrows, cols, t);
        long long p = coo_lower_bound(index_keys, n, key);
        bool found = p < n && index_keys[p] == key;
        batch_key[t] = key;
        pos[t] = p;
        if (insert_mode) {
            if (found) value[index_slots[p]] = weights[t];      // the one writer of this slot
            mask[t] = !found;
        } else {
            mask[t] = found;
        }
    }
}

// rank[t]: inclusive prefix sum of mask; removed_at[r]: index position of the found edge of rank r
extern "C" __global__
void coo_delete_apply(const long long k, const bool* mask, const long long* rank, const long long* pos,
                      const long long* index_slots, int* row_idx, int* col_idx,
                      long long* deleted, const long long cap, const long long tail, long long* removed_at)
{
    COO_GRID_LOOP(t, k) {
        if (!mask[t]) continue;
        long long r = rank[t] - 1;
        long long slot = index_slots[pos[t]];
        row_idx[slot] = COO_FREE;
        col_idx[slot] = COO_FREE;
        deleted[(tail + r) % cap] = slot;
        removed_at[r] = pos[t];
    }
}

// out[j] = in[j + r], r = #{t : removed_at[t] - t <= j} (removed_at ascending, distinct)
extern "C" __global__
void coo_index_remove(const long long m, const long long* removed_at, const long long removed,
                      const long long* keys, const long long* slots, long long* out_keys, long long* out_slots)
{
    COO_GRID_LOOP(j, m) {
        long long lo = 0, hi = removed;
        while (lo < hi) {
            long long mid = (lo + hi) >> 1;
            if (removed_at[mid] - mid <= j) lo = mid + 1; else hi = mid;
        }
        out_keys[j] = keys[j + lo];
        out_slots[j] = slots[j + lo];
    }
}

// the new edge of rank r takes deleted[(head + r) % cap] while the queue lasts (queued of them),
// then slot high_water + r - queued
extern "C" __global__
void coo_insert_place(const long long k, const bool* mask, const long long* rank, const long long* batch_key,
                      const float* weights, const long long* deleted, const long long cap, const long long head,
                      const long long queued, const long long high_water,
                      int* row_idx, int* col_idx, float* value, long long* new_keys, long long* new_slots)
{
    COO_GRID_LOOP(t, k) {
        if (!mask[t]) continue;
        long long r = rank[t] - 1;
        long long slot = r < queued ? deleted[(head + r) % cap] : high_water + r - queued;
        long long key = batch_key[t];
        row_idx[slot] = (int)(key >> 32);
        col_idx[slot] = (int)(key & COO_LOW32);
        value[slot] = weights[t];
        new_keys[r] = key;
        new_slots[r] = slot;
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

KERNELS = ("coo_find", "coo_delete_apply", "coo_index_remove", "coo_insert_place", "coo_index_merge",
           "coo_vertex_mark", "coo_vertex_hits", "coo_vertex_remove")

_kernels = RawKernels(SOURCE, "COO")

#: the launcher in use; tests swap in a serial host emulation of the same source
launcher = _kernels.launch


def launch(xp, name: str, n: int, *args) -> None:
    """Run kernel ``name`` over ``n`` work items (nothing when ``n`` is 0)."""
    if int(n) <= 0:
        return
    launcher(xp, name, int(n), tuple(args))
