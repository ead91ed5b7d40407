"""Fused CUDA kernels for the contiguous-row structures, Hornet and cuSTINGER (one shared source).

Both structures keep every vertex's edges in one contiguous row of a SoA edge
pool (:mod:`structures.contiguous`), so their hot paths are the same kernels;
only the allocators differ.  The array program stays the reference; these
kernels replace its launch-bound steps on the GPU:

* ``ca_find`` - one thread per batch key scans its source's row for the
  target (the linear row search Hornet and cuSTINGER do per edge), for rows
  up to ``linear_scan_max`` long; keys of longer rows (hubs, where a scan per
  key is quadratic) go to the array program's sort-based lookup;
* ``ca_copy_rows`` - one thread per entry copies rows to new storage (row
  moves on growth/shrink, bulk initialisation, the adjacency gather), clearing
  the source entry when asked;
* ``ca_write`` - one thread per distinct new batch key: the edge written
  after its row's last edge (``start + degree + rank``);
* ``ca_hole_flags`` / ``ca_hole_positions`` / ``ca_fill_holes`` - closing the
  marked slots: in every touched row the i-th hole below the new degree takes
  the i-th live edge at or above it, the tail is cleared;
* ``hn_select_free`` - Hornet's free-block search: request ``r`` descends the
  counting bit-tree of a size class to the ``r``-th free block, O(log) steps.

Grid-stride loops, 64-bit indices, one writer per location in each launch.
``SOURCE`` is compiled by nvcc in ``tests/test_contiguous_kernels_compile.py``
and run serially on the host through the g++ emulation there.
"""
from __future__ import annotations

from .block_primitives import upper_bound
from .raw_kernels import RawKernels, i32, i64  # noqa: F401  (i32/i64 used by callers)

SOURCE = r"""
#define CA_EMPTY (-1)
#define CA_TOMBSTONE (-2)
#define CA_LOW32 0xFFFFFFFFLL
#ifndef GV_GRID_LOOP
#define GV_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif

@UPPER_BOUND@

// slot[i] = pool position of edge keys[i] in its source row, -1 when absent; rows longer than
// max_scan are left to the sort-based lookup (slot -2): a linear scan per key is quadratic on hubs
extern "C" __global__
void ca_find(const long long* keys, const long long n, const long long* degree,
             const long long* row_start, const int* cols, const long long max_scan, long long* slot)
{
    GV_GRID_LOOP(i, n) {
        long long s = keys[i] >> 32;
        int d = (int)(keys[i] & CA_LOW32);
        long long start = row_start[s], deg = degree[s], found = -1;
        if (deg > max_scan) { slot[i] = -2; continue; }
        for (long long j = 0; j < deg; ++j)
            if (cols[start + j] == d) { found = start + j; break; }
        slot[i] = found;
    }
}

// entry e of row r (ends = inclusive prefix sum of the counts) copied from src_start[r] + j to
// dst_start[r] + j; the source entry is cleared when clear != 0 (source and target never overlap)
extern "C" __global__
void ca_copy_rows(const long long* ends, const long long nrows, const long long* src_start,
                  const long long* dst_start, const long long total, int* src_cols,
                  const float* src_weights, int* dst_cols, float* dst_weights, const int clear)
{
    GV_GRID_LOOP(e, total) {
        long long r = ca_upper_bound(ends, nrows, e);
        long long j = e - (r > 0 ? ends[r - 1] : 0);
        long long from = src_start[r] + j, to = dst_start[r] + j;
        dst_cols[to] = src_cols[from];
        dst_weights[to] = src_weights[from];
        if (clear) src_cols[from] = CA_EMPTY;
    }
}

// distinct sorted keys: a new one (slot < 0; the new_index[i]-th new key, rank[] counted within its
// source) goes after its row's last edge (existing keys were upserted before the rows moved)
extern "C" __global__
void ca_write(const long long* keys, const long long n, const long long* slot, const float* w,
              const long long* new_index, const long long* rank, const long long* degree,
              const long long* row_start, int* cols, float* weights)
{
    GV_GRID_LOOP(i, n) {
        if (slot[i] >= 0) continue;
        long long s = keys[i] >> 32;
        long long pos = row_start[s] + degree[s] + rank[new_index[i]];
        cols[pos] = (int)(keys[i] & CA_LOW32);
        weights[pos] = w[i];
    }
}

// entry e of the touched rows (ends over the old degrees): hole = marked and below the new degree,
// fill = live and at or above it (the two counts agree per row)
extern "C" __global__
void ca_hole_flags(const long long* ends, const long long nrows, const long long* start,
                   const long long* new_deg, const long long total, const int* cols,
                   long long* hole, long long* fill)
{
    GV_GRID_LOOP(e, total) {
        long long r = ca_upper_bound(ends, nrows, e);
        long long j = e - (r > 0 ? ends[r - 1] : 0);
        int c = cols[start[r] + j];
        int below = j < new_deg[r];
        hole[e] = (c == CA_TOMBSTONE && below) ? 1 : 0;
        fill[e] = (c != CA_TOMBSTONE && !below) ? 1 : 0;
    }
}

// hole_pos[k] = pool position of the k-th hole (hole_incl = inclusive prefix sum of the hole flags)
extern "C" __global__
void ca_hole_positions(const long long* ends, const long long nrows, const long long* start,
                       const long long* new_deg, const long long total, const int* cols,
                       const long long* hole_incl, long long* hole_pos)
{
    GV_GRID_LOOP(e, total) {
        long long r = ca_upper_bound(ends, nrows, e);
        long long j = e - (r > 0 ? ends[r - 1] : 0);
        if (j < new_deg[r] && cols[start[r] + j] == CA_TOMBSTONE)
            hole_pos[hole_incl[e] - 1] = start[r] + j;
    }
}

// the k-th fill moves into the k-th hole; every entry at or above the new degree is cleared by its
// own thread (a fill reads its entry before clearing it; holes lie below the new degree)
extern "C" __global__
void ca_fill_holes(const long long* ends, const long long nrows, const long long* start,
                   const long long* new_deg, const long long total, const long long* fill_incl,
                   const long long* hole_pos, int* cols, float* weights)
{
    GV_GRID_LOOP(e, total) {
        long long r = ca_upper_bound(ends, nrows, e);
        long long j = e - (r > 0 ? ends[r - 1] : 0);
        if (j < new_deg[r]) continue;
        long long p = start[r] + j;
        int c = cols[p];
        if (c != CA_TOMBSTONE) {
            long long h = hole_pos[fill_incl[e] - 1];
            cols[h] = c;
            weights[h] = weights[p];
        }
        cols[p] = CA_EMPTY;
    }
}

// Hornet: leaf of the r-th free block, r = 0 .. k-1, in a counting tree in heap layout
// (node 1 = root, children 2i and 2i+1, leaves at [leaves, 2 leaves), counts of free blocks)
extern "C" __global__
void hn_select_free(const int* tree, const long long leaves, const long long k, long long* leaf)
{
    GV_GRID_LOOP(r, k) {
        long long node = 1, rem = r;
        while (node < leaves) {
            long long left = 2 * node;
            long long c = tree[left];
            if (rem >= c) { rem -= c; node = left + 1; } else { node = left; }
        }
        leaf[r] = node - leaves;
    }
}
""".replace("@UPPER_BOUND@", upper_bound("ca_upper_bound"))

KERNELS = ("ca_find", "ca_copy_rows", "ca_write", "ca_hole_flags", "ca_hole_positions",
           "ca_fill_holes", "hn_select_free")

_kernels = RawKernels(SOURCE, "Hornet/cuSTINGER")

#: the launcher in use; tests swap in a serial host emulation of the same source
launcher = _kernels.launch


def launch(xp, name: str, n: int, *args) -> None:
    """Run kernel ``name`` over ``n`` items; nothing when ``n`` is 0."""
    if int(n) <= 0:
        return
    launcher(xp, name, int(n), tuple(args))
