"""The in-adjacency (transpose) of an out-CSR as fused CUDA kernels: a counting sort by destination.

BFS's static run on a GPU needs the in-edges (its bottom-up levels, the parent pass, the in-edge
index an update keeps), and building them was most of the job: cuSPARSE's csr2csc plus the sort
of its rows that cupyx adds (it promises no order) took 2.56 of 4.56 ms on a directed R-MAT 20
(H100, bench-results/2026-11-25-session8/call-static).  A transpose is a counting sort of the
edges by destination (e.g. Gustavson, "Two fast algorithms for sparse matrices: multiplication
and permuted transposition", TOMS 1978), here in passes that each read the edges once:

* ``tp_count`` - the in-degree histogram, one atomic add per edge;
* an exclusive scan of it (CuPy's ``cumsum``) gives the in-CSR's offsets;
* ``tp_scatter`` - edge ``t`` (its source by a binary search of the out-offsets, so a hub's
  row is spread over many threads) takes a slot of its destination's row by an atomic
  decrement of that row's count;
* ``tp_rows`` - the atomics leave each in-row in any order, so every row is sorted by source:
  rows of at most ``small`` entries by their own thread (an insertion sort in registers /
  local memory), longer ones are queued by size class;
* ``tp_sort_block`` - a row of a queue sorted by one thread block in shared memory: a bitonic
  network of ascending comparators only (each merge starts by comparing ``i`` with its mirror
  ``i ^ (k - 1)``), so the padding to a power of two is virtual: a comparator whose upper
  index lies past the row is skipped (the padding would be +inf there, which never moves);
* rows too long for a block's shared memory (a few hubs) are sorted together by one library
  sort of their ``(queue slot << 32) | source`` keys.

The result equals the array program's (:func:`algorithms.edge_index.transpose`: a sort of the
reversed keys): offsets, and every row's sources in ascending order, whatever order the atomics
took (equal sources, from a row that repeats a column, are indistinguishable).

``tp_check_sorted`` tells whether a CSR's rows are already sorted (one pass; a descent is looked
up by a binary search only where it falls between two positions of one row): on graphs of
:data:`algorithms.edge_index.LIBRARY_TRANSPOSE_MIN_EDGES_GPU` edges or more the transpose is
cuSPARSE's csr2csc, whose rows came out sorted on every graph measured, and this check replaces
the sort cupyx would run on them every time.

Measured (H100, directed R-MAT, edge factor 16, bench-results/2026-11-25-bfsjob/call2): these
kernels transpose R-MAT 16 (0.96M edges) in 0.30 ms against 0.51-0.52 ms for the array program's
sort and cupyx; at R-MAT 20 / 22 they take 2.45-2.57 / 9.0 ms (the scatter alone 1.02 / 4.93, the
rows' sort the rest), slower than cuSPARSE's csr2csc plus the check (1.19 + 0.18 / 4.55 + 0.59),
so they serve the graphs below the library's threshold.

The host emulation (``tests/transpose_emulation.py``) compiles this source with g++ and runs a
launch as one thread in a chosen order; ``tests/test_transpose_kernels.py`` compiles it with nvcc.
"""
from __future__ import annotations

import numpy as np

from vinestream.structures.array_ops import LOW32, segmented_arange
from vinestream.structures.backend import multiprocessors, to_numpy
from vinestream.structures.block_primitives import upper_bound
from vinestream.structures.csr_types import CSR, OFFSET_DTYPE, VERTEX_DTYPE
from vinestream.structures.raw_kernels import RawKernels, i32, i64

#: rows of at most this many in-edges are sorted by one thread (its buffer's size in the source)
SMALL = 32
#: rows of at most this many by a block of MEDIUM_THREADS, longer ones (up to LARGE) by LARGE_THREADS
MEDIUM = 1024
MEDIUM_THREADS = 128
#: a block's shared memory holds a row of at most LARGE sources (48 KiB, no opt-in needed)
LARGE = 12288
LARGE_THREADS = 512

SOURCE = r"""
#ifndef TP_GRID_LOOP
#define TP_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif
#ifndef TP_BLOCK_LOOP
#define TP_BLOCK_LOOP(i, n) for (long long i = threadIdx.x; i < (long long)(n); i += blockDim.x)
#endif
#ifndef TP_ROW_LOOP
#define TP_ROW_LOOP(q, n) for (long long q = blockIdx.x; q < (long long)(n); q += gridDim.x)
#endif
#ifndef TP_DYNAMIC_SHARED
#define TP_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#endif
#define TP_SMALL_MAX 32

@UPPER_BOUND@

// in-degrees: deg[v] += 1 for every edge (deg zeroed by the caller)
extern "C" __global__
void tp_count(const int* cols, long long m, int* deg)
{
    TP_GRID_LOOP(t, m) {
        atomicAdd(&deg[cols[t]], 1);
    }
}

// every edge u -> v (u: the out-row holding position t) writes u into a free slot of in-row v; the
// slot is the row's remaining count after an atomic decrement, so deg ends at zero
extern "C" __global__
void tp_scatter(const long long* off, long long rows, const int* cols, long long m,
                const long long* in_off, int* deg, int* in_cols)
{
    TP_GRID_LOOP(t, m) {
        long long u = tp_upper_bound(off + 1, rows, t);
        int v = cols[t];
        int k = atomicAdd(&deg[v], -1) - 1;
        in_cols[in_off[v] + k] = (int)u;
    }
}

// each in-row sorted: up to `small` entries here (insertion sort), longer rows queued by size class
// (counts[0..2]: rows of at most `medium`, of at most `large`, longer)
extern "C" __global__
void tp_rows(const long long* in_off, long long n, int* in_cols, int small, int medium, int large,
             int* medium_rows, int* large_rows, int* huge_rows, unsigned long long* counts)
{
    TP_GRID_LOOP(v, n) {
        long long b = in_off[v];
        long long d = in_off[v + 1] - b;
        if (d <= 1) continue;
        if (d <= small) {
            int buf[TP_SMALL_MAX];
            for (int i = 0; i < (int)d; ++i) {
                int x = in_cols[b + i];
                int j = i;
                while (j > 0 && buf[j - 1] > x) { buf[j] = buf[j - 1]; --j; }
                buf[j] = x;
            }
            for (int i = 0; i < (int)d; ++i) in_cols[b + i] = buf[i];
        } else if (d <= medium) {
            medium_rows[atomicAdd(&counts[0], 1ULL)] = (int)v;
        } else if (d <= large) {
            large_rows[atomicAdd(&counts[1], 1ULL)] = (int)v;
        } else {
            huge_rows[atomicAdd(&counts[2], 1ULL)] = (int)v;
        }
    }
}

// flag[0] = 1 where a row of the in-CSR holds a descending pair (a descent at a row boundary is no
// violation: its row, by a binary search, is looked up only there); the flag's writers all write 1
extern "C" __global__
void tp_check_sorted(const long long* in_off, long long n, const int* in_cols, long long m, int* flag)
{
    TP_GRID_LOOP(t, m) {
        if (t > 0 && in_cols[t - 1] > in_cols[t]) {
            long long r = tp_upper_bound(in_off + 1, n, t - 1);
            if (in_off[r + 1] > t) flag[0] = 1;
        }
    }
}

// one comparator: a[i] <= a[l] after it (i < l); none past the row's end (virtual +inf there)
__device__ void tp_order(int* a, int i, int l, int d)
{
    if (l < d) {
        int x = a[i], y = a[l];
        if (x > y) { a[i] = y; a[l] = x; }
    }
}

// ascending bitonic sort of a[0, d) by the block (every comparator ascending: see the module docstring)
__device__ void tp_bitonic(int* a, int d)
{
    int p = 1;
    while (p < d) p <<= 1;
    for (int k = 2; k <= p; k <<= 1) {
        int h = k >> 1;
        TP_BLOCK_LOOP(t, p >> 1) {                // i in the lower half of its k-block, l its mirror
            int i = (((int)t & ~(h - 1)) << 1) | ((int)t & (h - 1));
            tp_order(a, i, i ^ (k - 1), d);
        }
        __syncthreads();
        for (int j = h >> 1; j > 0; j >>= 1) {
            TP_BLOCK_LOOP(t, p >> 1) {            // half-cleaner: i in the lower half of its 2j-block
                int i = (((int)t & ~(j - 1)) << 1) | ((int)t & (j - 1));
                tp_order(a, i, i + j, d);
            }
            __syncthreads();
        }
    }
}

// the rows of a queue (count[0] of them), one row per block at a time, sorted in shared memory
extern "C" __global__
void tp_sort_block(const long long* in_off, int* in_cols, const int* queue, const unsigned long long* count)
{
    TP_DYNAMIC_SHARED(int, row);
    long long rows = (long long)count[0];
    TP_ROW_LOOP(q, rows) {
        int v = queue[q];
        long long b = in_off[v];
        int d = (int)(in_off[v + 1] - b);
        TP_BLOCK_LOOP(i, d) row[i] = in_cols[b + i];
        __syncthreads();
        tp_bitonic(row, d);
        TP_BLOCK_LOOP(i, d) in_cols[b + i] = row[i];
        __syncthreads();
    }
}
""".replace("@UPPER_BOUND@", upper_bound("tp_upper_bound"))

KERNELS = ("tp_count", "tp_scatter", "tp_rows", "tp_sort_block", "tp_check_sorted")
_kernels = RawKernels(SOURCE, "transpose")

#: the launchers in use (tests swap in the host emulation): grid-stride kernels over n items, and
#: block kernels on a given grid
launcher = _kernels.launch
block_launcher = _kernels.launch_blocks


def transpose_fused(xp, csr: CSR, num_rows: int, *, small: int = SMALL, medium: int = MEDIUM, large: int = LARGE,
                    sort_rows: bool = True, launch=None, launch_blocks=None, parts: dict | None = None) -> CSR:
    """The transpose of an unweighted out-CSR over ``num_rows`` rows, each in-row's sources ascending: the
    array program's result (:func:`algorithms.edge_index.transpose`).

    ``small`` / ``medium`` / ``large``: the row sizes sorted by one thread / a block of ``MEDIUM_THREADS`` /
    one of ``LARGE_THREADS`` (tests lower them so that small graphs reach every class; ``small`` at most
    32, ``large`` at most ``LARGE``); ``launch`` / ``launch_blocks`` replace the launchers (the host
    emulation); ``parts``, when given, receives the rows of each size class (``medium_rows``,
    ``large_rows``, ``huge_rows``).  One device-to-host read (the class counts).  ``sort_rows`` False stops
    after the scatter: the same offsets, each row's sources in the atomics' order (no read-back).
    """
    launch = launch or launcher
    launch_blocks = launch_blocks or block_launcher
    if not 0 < int(small) <= SMALL or not int(small) <= int(medium) <= int(large) <= LARGE:
        raise ValueError("need 0 < small <= 32 and small <= medium <= large <= LARGE")
    offsets = csr.offsets
    rows_out = int(offsets.shape[0]) - 1
    n = max(int(num_rows), rows_out)
    m = int(csr.num_edges)
    in_off = xp.zeros(n + 1, dtype=OFFSET_DTYPE)
    in_cols = xp.empty(m, dtype=VERTEX_DTYPE)
    if m == 0:
        if parts is not None:
            parts.update(medium_rows=0, large_rows=0, huge_rows=0)
        return CSR(offsets=in_off, cols=in_cols, weights=None)
    cols = csr.cols.astype(np.int32, copy=False)
    off = offsets.astype(np.int64, copy=False)
    deg = xp.zeros(n, dtype=np.int32)
    launch(xp, "tp_count", m, (cols, i64(m), deg))
    in_off[1:] = xp.cumsum(deg, dtype=np.int64)
    launch(xp, "tp_scatter", m, (off, i64(rows_out), cols, i64(m), in_off, deg, in_cols))
    result = CSR(offsets=in_off, cols=in_cols, weights=None)
    if sort_rows:
        sort_rows_fused(xp, result, small=small, medium=medium, large=large, launch=launch,
                        launch_blocks=launch_blocks, parts=parts)
    return result


def sort_rows_fused(xp, csr: CSR, *, small: int = SMALL, medium: int = MEDIUM, large: int = LARGE, launch=None,
                    launch_blocks=None, parts: dict | None = None) -> None:
    """Sort every row of ``csr`` (int64 offsets, int32 columns) ascending, in place: ``tp_rows``,
    ``tp_sort_block`` per size class and one library sort of the rows past ``large`` (see
    :func:`transpose_fused` for the arguments).  One device-to-host read (the class counts)."""
    launch = launch or launcher
    launch_blocks = launch_blocks or block_launcher
    in_off, in_cols = csr.offsets, csr.cols
    n = int(in_off.shape[0]) - 1
    m = int(in_cols.shape[0])
    # queues: no more rows than edges / (the class's least size)
    q_med = xp.empty(max(1, min(n, m // (int(small) + 1))), dtype=np.int32)
    q_large = xp.empty(max(1, min(n, m // (int(medium) + 1))), dtype=np.int32)
    q_huge = xp.empty(max(1, min(n, m // (int(large) + 1))), dtype=np.int32)
    counts = xp.zeros(3, dtype=np.uint64)
    launch(xp, "tp_rows", n, (in_off, i64(n), in_cols, i32(small), i32(medium), i32(large),
                              q_med, q_large, q_huge, counts))
    sms = multiprocessors(xp)
    # the blocks read their queue's length on the device: no host read before these launches
    launch_blocks(xp, "tp_sort_block", 16 * sms, MEDIUM_THREADS, (in_off, in_cols, q_med, counts[0:1]),
                  4 * int(medium))
    launch_blocks(xp, "tp_sort_block", 4 * sms, LARGE_THREADS, (in_off, in_cols, q_large, counts[1:2]),
                  4 * int(large))
    got = to_numpy(counts).astype(np.int64)               # one transfer, into a host array
    huge = int(got[2])
    if huge:                      # a few hubs: one sort of their keys, (queue slot, source) in order
        rows = q_huge[:huge].astype(np.int64)
        owner, pos = segmented_arange(xp, in_off[rows], in_off[rows + 1] - in_off[rows])
        keys = xp.sort((owner << 32) | in_cols[pos].astype(np.int64))
        in_cols[pos] = (keys & LOW32).astype(VERTEX_DTYPE)
    if parts is not None:
        parts.update(medium_rows=int(got[0]), large_rows=int(got[1]), huge_rows=huge)


def rows_sorted(xp, offsets, cols, launch=None) -> bool:
    """Whether every row of a CSR (int64 ``offsets``, int32 ``cols``) is non-decreasing: one pass over
    the columns (``tp_check_sorted``) and one device-to-host read."""
    launch = launch or launcher
    m = int(cols.shape[0])
    if m < 2:
        return True
    flag = xp.zeros(1, dtype=np.int32)
    launch(xp, "tp_check_sorted", m, (offsets, i64(int(offsets.shape[0]) - 1), cols, i64(m), flag))
    return not int(flag[0])
