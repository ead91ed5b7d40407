"""PageRank's dense sweep as one fused CUDA kernel (the GPU path of static PageRank).

A sweep of :mod:`algorithms.pagerank` is ``z += r; r = d A^T D^-1 r`` followed by
the residual's L1 norm and sum (the stopping test and the running total ``S``).
As an array program that is a cuSPARSE SpMV plus four element-wise kernels and
two reductions; here it is one kernel over the scaled transpose (rows are
targets, values ``d / k[source]``: the damping and the out-degree are folded in,
and dangling sources contribute nothing, so no dangling sum is needed in the
unnormalised form):

* ``pr_sweep_f64`` / ``pr_sweep_f32`` - ``tpr`` threads per row (a power of two
  up to a warp, picked from the mean in-degree) read the row's in-edges, gather
  ``r_in`` and sum by shuffles; the row's first lane adds ``r_in[v]`` into
  ``z[v]``, writes ``r_out[v]``, and keeps ``|r_out|`` and ``r_out`` in
  per-thread sums, reduced over the warp at the end and added to ``sums[0..1]``
  by one atomic per warp.  So a sweep reads every in-edge once (column and
  value) plus ``r_in``, ``z`` and writes ``z``, ``r_out``: an SpMV's traffic
  plus two vertex-sized writes, and the host reads the two sums (one transfer).
  ``f32`` keeps ranks, residuals and values in float32 (half the gather
  traffic) with float64 sums; its added error is stated in
  :func:`float32_error_allowance`.

The array program (``sweep_operator`` and the element-wise passes) stays the
reference: ``tests/test_pagerank_kernels.py`` compiles this source with nvcc for
sm_90 and runs it through a serial host emulation (one-lane warps), and
``tests/test_pagerank_fused_gpu.py`` compares the fused and array paths on a GPU.
"""
from __future__ import annotations

import numpy as np

from vinestream.structures.raw_kernels import RawKernels, i32, i64

KERNELS = ("pr_sweep_f64", "pr_sweep_f32")

SOURCE = r"""
#ifndef PR_GRID_LOOP
#define PR_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif
#ifndef PR_WARP
#define PR_WARP 32
#endif
#ifndef PR_SHFL_DOWN
#define PR_SHFL_DOWN(v, o, w) __shfl_down_sync(0xffffffffu, (v), (o), (w))
#endif

// one sweep: z[v] += r_in[v]; r_out[v] = sum over in-edges (u -> v) of val[e] * r_in[u];
// sums[0] += |r_out|, sums[1] += r_out.  ``items`` = rows * tpr rounded up to a warp multiple,
// so that every lane of a warp runs the same iterations (the shuffles need the whole warp).
#define PR_SWEEP(NAME, REAL)                                                                      \
extern "C" __global__                                                                             \
void NAME(const long long* indptr, const int* indices, const REAL* val, const REAL* r_in,         \
          REAL* z, REAL* r_out, double* sums, long long rows, int tpr, long long items)           \
{                                                                                                 \
    double abs_sum = 0.0, sum = 0.0;                                                              \
    PR_GRID_LOOP(t, items) {                                                                      \
        long long v = t / tpr;                                                                    \
        int lane = (int)(t % tpr);                                                                \
        REAL acc = (REAL)0;                                                                       \
        if (v < rows) {                                                                           \
            long long end = indptr[v + 1];                                                        \
            for (long long e = indptr[v] + lane; e < end; e += tpr)                               \
                acc += val[e] * r_in[indices[e]];                                                 \
        }                                                                                         \
        for (int o = tpr >> 1; o > 0; o >>= 1)                                                    \
            acc += PR_SHFL_DOWN(acc, o, tpr);                                                     \
        if (v < rows && lane == 0) {                                                              \
            z[v] += r_in[v];                                                                      \
            r_out[v] = acc;                                                                       \
            abs_sum += fabs((double)acc);                                                         \
            sum += (double)acc;                                                                   \
        }                                                                                         \
    }                                                                                             \
    for (int o = PR_WARP >> 1; o > 0; o >>= 1) {                                                  \
        abs_sum += PR_SHFL_DOWN(abs_sum, o, PR_WARP);                                             \
        sum += PR_SHFL_DOWN(sum, o, PR_WARP);                                                     \
    }                                                                                             \
    if ((threadIdx.x & (PR_WARP - 1)) == 0 && (abs_sum != 0.0 || sum != 0.0)) {                   \
        atomicAdd(&sums[0], abs_sum);                                                             \
        atomicAdd(&sums[1], sum);                                                                 \
    }                                                                                             \
}

PR_SWEEP(pr_sweep_f64, double)
PR_SWEEP(pr_sweep_f32, float)
"""

_kernels = RawKernels(SOURCE, "PageRank")


def _launch(xp, name, n, args):
    _kernels.launch(xp, name, n, args)


#: kernel launcher (tests replace it with a serial host emulation)
launcher = _launch

WARP = 32


def threads_per_row(mean_degree: float) -> int:
    """The power of two (1..32) nearest above the mean in-degree: lanes per row."""
    tpr = 1
    while tpr < 32 and tpr < mean_degree:
        tpr *= 2
    return tpr


def float32_error_allowance(iterations: int) -> float:
    """What float32 sweeps may add to the L1 error of the normalised ranks, beyond the float64 bound.

    Each sweep rounds every ``z[v]`` and ``r[v]`` once more relative to float64 (unit
    roundoff ``u = 2^-24``; the in-edge sums add ``u`` per term at most, and their terms sum to
    the vertex's share), so ``z + r`` carries a relative error of at most ``(2 + deg) u`` per sweep
    in the worst case; summed over the ranks (which add up to 1) and the sweeps that is
    ``iterations * (2 + max in-degree) * u`` in the worst case.  Rounding errors of random sign
    grow like the square root instead; the device test checks the observed gap against
    ``iterations * 8 * u``, about ``2e-5`` for 45 sweeps.
    """
    return float(iterations) * 8.0 * 2.0 ** -24


class FusedSweep:
    """The fused sweep over the scaled transpose of ``csr``'s first ``rows`` rows, in ``dtype``."""

    def __init__(self, xp, csr, rows: int, damping: float, dtype=np.float64):
        if xp is np:                              # the host emulation's case (tests)
            import scipy.sparse as sp
        else:
            import cupyx.scipy.sparse as sp  # the transpose: cuSPARSE's csr2csc
        self.xp = xp
        self.rows = int(rows)
        self.dtype = np.dtype(dtype)
        offsets = csr.offsets[: self.rows + 1]
        num_edges = int(offsets[-1]) if self.rows else 0
        deg = xp.diff(offsets)
        scale = xp.where(deg > 0, damping / xp.maximum(deg, 1), 0.0)
        a = sp.csr_matrix((xp.repeat(scale, deg), csr.cols[:num_edges].astype(np.int32),
                           offsets.astype(np.int32)), shape=(self.rows, self.rows))
        at = a.T.tocsr()
        self.indptr = at.indptr.astype(np.int64)
        self.indices = at.indices.astype(np.int32)
        self.val = at.data.astype(self.dtype)
        self.tpr = threads_per_row(num_edges / max(self.rows, 1))
        self.sums = xp.zeros(2, dtype=np.float64)
        self.name = "pr_sweep_f32" if self.dtype == np.float32 else "pr_sweep_f64"

    def __call__(self, z, r_in, r_out) -> tuple[float, float]:
        """``z += r_in; r_out = d A^T D^-1 r_in``; returns ``(sum |r_out|, sum r_out)`` (one transfer)."""
        self.sums.fill(0)
        items = -(-self.rows * self.tpr // WARP) * WARP
        launcher(self.xp, self.name, items, (self.indptr, self.indices, self.val, r_in, z, r_out, self.sums,
                                             i64(self.rows), i32(self.tpr), i64(items)))
        a, b = self.sums.tolist()
        return float(a), float(b)
