"""Block-wide sort and scan, as CUDA source shared by the one-block small-batch kernels.

The fused resolve (:mod:`resolve_kernels`) and vertex-map (:mod:`vertex_map_kernels`)
kernels each run in one thread block and need the same two building blocks: a
bitonic sort of ``(key, val)`` pairs and an exclusive prefix sum.  They live here
once; each kernel source includes them under its own prefix and with its own
block-stride loop macro (which the host emulations redefine to run the threads
serially in several orders).
"""
from __future__ import annotations

_TEMPLATE = r"""
// block-wide bitonic sort of (key, val) pairs, m a power of two, ordered by key then val (with distinct
// vals the order is total, so the result is what a stable argsort gives)
__device__ void PREFIX_sort(long long* key, long long* val, long long m)
{
    for (long long k = 2; k <= m; k <<= 1) {
        for (long long j = k >> 1; j > 0; j >>= 1) {
            LOOP(i, m) {
                long long l = i ^ j;
                if (l > i) {
                    bool up = (i & k) == 0;
                    long long ki = key[i], kl = key[l], vi = val[i], vl = val[l];
                    bool greater = ki > kl || (ki == kl && vi > vl);
                    if (greater == up) { key[i] = kl; key[l] = ki; val[i] = vl; val[l] = vi; }
                }
            }
            __syncthreads();
        }
    }
}

// out[i] = in[0] + ... + in[i-1] over [0, n) (one block; sh holds blockDim.x partial sums); the total
__device__ long long PREFIX_scan(const long long* in, long long* out, long long n, long long* sh)
{
    long long per = (n + blockDim.x - 1) / blockDim.x;
    long long lo = (long long)threadIdx.x * per;
    long long hi = lo + per < n ? lo + per : n;
    long long s = 0;
    for (long long i = lo; i < hi; ++i) s += in[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (unsigned int off = 1; off < blockDim.x; off <<= 1) {      // inclusive Hillis-Steele
        long long v = threadIdx.x >= off ? sh[threadIdx.x - off] : 0;
        __syncthreads();
        sh[threadIdx.x] += v;
        __syncthreads();
    }
    long long total = sh[blockDim.x - 1];
    long long run = sh[threadIdx.x] - s;
    for (long long i = lo; i < hi; ++i) { long long v = in[i]; out[i] = run; run += v; }
    __syncthreads();
    return total;
}
"""


def block_sort_and_scan(prefix: str, loop: str) -> str:
    """CUDA source of ``<prefix>_sort`` and ``<prefix>_scan``, striding with the macro ``loop``."""
    return _TEMPLATE.replace("PREFIX", prefix).replace("LOOP(", f"{loop}(")
