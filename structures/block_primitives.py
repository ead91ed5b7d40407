"""CUDA source shared by the kernel modules: block-wide sort and scan, and a binary search.

The fused resolve (``stream/batching/resolve_kernels``) and vertex-map
(``vertex_map_kernels``) kernels each run in one thread block and need the same two building blocks: a
bitonic sort of ``(key, val)`` pairs and an exclusive prefix sum; COO's small-batch find
(``structures/coo_kernels``) uses the scan.  They live here
once; each kernel source includes them under its own prefix and with its own
block-stride loop macro (which the host emulations redefine to run the threads
serially in several orders).  The binary search (:func:`lower_bound`) is the one device function
of that kind every module with sorted keys needs (COO's index, the vertex map, GPMA's leaves, the
BFS in-edge log, resolve's map lookups, the triangle kernels' key index), each under its own name.
"""
from __future__ import annotations

_BLOCK_EXCL = r"""
// exclusive prefix sum over the block's threads (threadIdx order) of one value each; *total: the block's
// sum.  Warp shuffles, then the warps' sums in sh (blockDim.x / 32 + 1 entries) summed by thread 0.  Every
// thread of the block calls it.
__device__ long long PREFIX_block_excl(long long v, long long* sh, long long* total)
{
    const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const unsigned int nw = (blockDim.x + 31u) >> 5;
    long long x = v;                                                 // inclusive within the warp
    for (unsigned int d = 1; d < 32u; d <<= 1) {
        long long y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31u || threadIdx.x == blockDim.x - 1) sh[warp] = x;
    __syncthreads();
    if (threadIdx.x == 0) {
        long long run = 0;
        for (unsigned int w = 0; w < nw; ++w) { long long t = sh[w]; sh[w] = run; run += t; }
        sh[nw] = run;
    }
    __syncthreads();
    long long out = sh[warp] + x - v;
    *total = sh[nw];
    __syncthreads();                    // sh is reused by the next call
    return out;
}
"""

_TEMPLATE = _BLOCK_EXCL + r"""
#ifndef PREFIX_TILE
#define PREFIX_TILE 2048          // pairs of a shared-memory tile: 32 KiB of the block's 48
#endif

// one compare-exchange of a bitonic stage: i and l = i ^ j, ascending where (index & k) == 0; ordered by
// key then val (with distinct vals the order is total, so the result is what a stable argsort gives)
#define PREFIX_EXCHANGE(K, V, i, l, at, k)                                                         \
    {                                                                                               \
        bool up = ((at) & (k)) == 0;                                                                \
        long long ki = K[i], kl = K[l], vi = V[i], vl = V[l];                                       \
        bool greater = ki > kl || (ki == kl && vi > vl);                                            \
        if (greater == up) { K[i] = kl; K[l] = ki; V[i] = vl; V[l] = vi; }                          \
    }

// block-wide bitonic sort of (key, val) pairs, m a power of two.  The stages whose partners lie in one
// aligned tile of PREFIX_TILE pairs run in shared memory, a tile at a time (for m <= PREFIX_TILE: the
// whole sort); only the stages with a larger stride touch global memory.  In global memory every
// stage is a round trip to L2 behind a barrier, which made the sorts most of a small batch's kernel.
__device__ void PREFIX_sort(long long* key, long long* val, long long m)
{
    __shared__ long long tile_key[PREFIX_TILE], tile_val[PREFIX_TILE];
    const long long tile = m < PREFIX_TILE ? m : PREFIX_TILE;
    for (long long k = 2; k <= m; k <<= 1) {
        if (k > tile) {
            for (long long j = k >> 1; j >= tile; j >>= 1) {          // strides past a tile
                LOOP(i, m) {
                    long long l = i ^ j;
                    if (l > i) PREFIX_EXCHANGE(key, val, i, l, i, k)
                }
                __syncthreads();
            }
        }
        // the strides within a tile; for k <= tile every level up to the tile's size at once
        const long long top = k > tile ? k : tile;
        for (long long base = 0; base < m; base += tile) {
            LOOP(i, tile) { tile_key[i] = key[base + i]; tile_val[i] = val[base + i]; }
            __syncthreads();
            for (long long kk = (k > tile ? k : 2); kk <= top; kk <<= 1) {
                for (long long j = (kk > tile ? tile : kk) >> 1; j > 0; j >>= 1) {
                    LOOP(i, tile) {
                        long long l = i ^ j;
                        if (l > i) PREFIX_EXCHANGE(tile_key, tile_val, i, l, base + i, kk)
                    }
                    // a stage of stride < 32 exchanges within aligned groups of 32 pairs, and every pair
                    // of a group belongs to one warp (blockDim.x a multiple of 32): between two such
                    // stages the warp's own barrier is enough.  Most stages are of that kind, and the
                    // block barriers were most of a one-block kernel's time.
                    const long long next = j > 1 ? (j >> 1) : ((kk << 1) <= top ? kk : PREFIX_TILE);
                    if (j >= 32 || next >= 32) __syncthreads(); else __syncwarp();
                }
            }
            LOOP(i, tile) { key[base + i] = tile_key[i]; val[base + i] = tile_val[i]; }
            __syncthreads();
        }
        if (k <= tile) k = tile;                                       // levels up to the tile: done
    }
}

// out[i] = in[0] + ... + in[i-1] over [0, n) (one block; sh holds blockDim.x / 32 + 1 partial sums); the
// total.  Each thread sums a run of in, the block scans the threads' sums (PREFIX_block_excl): four
// block barriers (a Hillis-Steele scan over the threads took twenty).
__device__ long long PREFIX_scan(const long long* in, long long* out, long long n, long long* sh)
{
    long long per = (n + blockDim.x - 1) / blockDim.x;
    long long lo = (long long)threadIdx.x * per;
    long long hi = lo + per < n ? lo + per : n;
    long long s = 0;
    for (long long i = lo; i < hi; ++i) s += in[i];
    long long total;
    long long run = PREFIX_block_excl(s, sh, &total);
    for (long long i = lo; i < hi; ++i) { long long v = in[i]; out[i] = run; run += v; }
    __syncthreads();                    // callers read other threads' out[] right after the scan
    return total;
}
"""


def block_exclusive_scan(prefix: str) -> str:
    """CUDA source of ``<prefix>_block_excl(v, sh, total)``: the exclusive prefix sum of one value per thread
    over the block (also part of :func:`block_sort_and_scan`)."""
    return _BLOCK_EXCL.replace("PREFIX", prefix)


def block_sort_and_scan(prefix: str, loop: str) -> str:
    """CUDA source of ``<prefix>_sort`` and ``<prefix>_scan``, striding with the macro ``loop``."""
    return _TEMPLATE.replace("PREFIX", prefix).replace("LOOP(", f"{loop}(")


_LOWER_BOUND = r"""
// first i in [0, n) with a[i] >= x (a ascending); n when none
__device__ long long NAME(const long long* a, long long n, long long x)
{
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}
"""


_UPPER_BOUND = r"""
// smallest i in [0, n) with ends[i] > t (ends non-decreasing); n when none
__device__ long long NAME(const long long* ends, long long n, long long t)
{
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (ends[mid] > t) hi = mid; else lo = mid + 1;
    }
    return lo;
}
"""


def upper_bound(name: str) -> str:
    """CUDA source of ``__device__ long long <name>(ends, n, t)``: the first ``i`` in ``[0, n)`` with
    ``ends[i] > t`` over a non-decreasing ``ends`` (``n`` when none): the row of item ``t`` given the
    rows' exclusive ends."""
    return _UPPER_BOUND.replace("NAME", name)


def lower_bound(name: str) -> str:
    """CUDA source of ``__device__ long long <name>(a, n, x)``: the first ``i`` in ``[0, n)`` with
    ``a[i] >= x`` over an ascending ``a`` (``n`` when none)."""
    return _LOWER_BOUND.replace("NAME", name)
