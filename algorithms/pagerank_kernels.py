"""PageRank's dense sweeps and incremental pushes as fused CUDA kernels (the GPU path of algorithms.pagerank).

**The Google form** (:class:`GoogleSweep`, the GPU default for static runs and dense finishes):
``pr_google`` / ``pr_google_heavy`` do one power iteration ``x' = d A^T D^-1 x + spread`` over the
transpose (:func:`in_edges`) with the per-row change ``|x' - x|``, the sum of ``x'`` and its dangling
mass summed per thread, warp and block (one atomic per block), and ``pr_google_finish`` turns them into
the next spread and the stop ``||x' - x||_1 < tol`` on the device.  The rest of this docstring is the
Jacobi form (``sweeps="jacobi"``):

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
  per-thread sums, reduced over the warp and then the block at the end and
  added to the control block's two sums by one atomic per block (a capped grid,
  grid-stride).  So a sweep reads every in-edge once (column and value) plus
  ``r_in``, ``z`` and writes ``z``, ``r_out``: an SpMV's traffic plus two
  vertex-sized writes.
* ``pr_sweep_heavy_f64`` / ``_f32`` - the rows of more than ``HEAVY_LANES * tpr``
  in-edges (R-MAT's hubs), which the first kernel skips: a block per row,
  summed in a shared-memory tree (a CSR-adaptive split: without it one warp
  summed a hub of 1e5 in-edges while the rest of the GPU idled).
  ``f32`` keeps ranks, residuals and values in float32 (half the gather
  traffic) with float64 sums; its added error is stated in
  :func:`float32_error_allowance`.
* ``pr_sweep_finish`` - one thread: the sweep's sums become ``R`` and add to
  ``S``, and the stopping test ``R < tol * S`` (or the round limit) sets the
  control block's *done* flag, on which every sweep kernel queued after it
  returns at once.  So the host queues sweeps in chunks and reads the control
  block once per chunk (:meth:`FusedSweep.sweeps`) instead of once per sweep:
  on a small graph the transfer and its host round trip, not the sweep, were
  the cost (about 0.13 ms a sweep on 228k edges on an H100).

An incremental update's kernels: ``pr_corr_*`` (the exact residual corrections of a batch, one edge pass,
:func:`fused_corrections`), then the pruned pushes ``pr_push_init``, ``pr_push_select`` (its last block runs the
check) / ``pr_push``, in the Google form between ``pr_gpush_sums`` and ``pr_gpush_finish``
(:class:`FusedPush`: a pass over the rows per round that sums ``R`` and queues the vertices above the
threshold, a block reserving its queue entries by one atomic, then the pushes by atomics, over-relaxed by
``omega``) or, as an option, ``fp_take`` / ``fp_push`` / ``fp_check`` (:class:`FrontierPush`, threshold levels
on compact queues).  The queue counters are single addresses that every warp of a pass hits: with an atomic
per warp on them (131k warps a pass on R-MAT 22) the same updates took 16.7 instead of 14.4 ms on a 0.01 %
batch of R-MAT 22 (21 rounds, about 0.1 ms a round; H100), so the selects reserve per block and the
frontier's enqueues per warp (ballots).

The array program (``sweep_operator`` and the element-wise passes) stays the
reference: ``tests/test_pagerank_kernels.py`` compiles this source with nvcc for
sm_90 and runs it through a serial host emulation (one-lane warps), and
``tests/test_pagerank_fused_gpu.py`` compares the fused and array paths on a GPU.
"""
from __future__ import annotations

import math

import numpy as np

from vinestream.structures.array_ops import bincount, offsets_of, pow2_at_least, repeat_index
from vinestream.structures.backend import count_launch
from vinestream.structures.raw_kernels import THREADS, RawKernels, i32, i64

KERNELS = ("pr_sweep_f64", "pr_sweep_f32", "pr_sweep_heavy_f64", "pr_sweep_heavy_f32", "pr_sweep_finish",
           "pr_google", "pr_google_heavy", "pr_google_finish", "pr_transpose_fill",
           "pr_push_select", "pr_push_check", "pr_push_start", "pr_push", "pr_push_init", "pr_gpush_sums",
           "pr_gpush_finish",
           "fp_take", "fp_push", "fp_check", "fp_rsum",
           "pr_corr_owner", "pr_corr_count", "pr_corr_sources", "pr_corr_apply", "pr_corr_reset")

SOURCE = r"""
#ifndef PR_GRID_LOOP
#define PR_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif
#ifndef PR_WARP
#define PR_WARP 32
#endif
#ifndef PR_BLOCK
#define PR_BLOCK 256
#endif
#ifndef PR_MAX_WARPS
#define PR_MAX_WARPS 32
#endif
#ifndef PR_SHFL_DOWN
#define PR_SHFL_DOWN(v, o, w) __shfl_down_sync(0xffffffffu, (v), (o), (w))
#endif

// The control block ``ctl`` (doubles) that lets the host queue many sweeps without reading anything
// back: ctl[PR_DONE] != 0 makes every later kernel of the queue return at once.
#define PR_DONE 0       // 1 once converged (R < tol * S) or out of rounds
#define PR_ROUNDS 1     // sweeps done
#define PR_TOTAL 2      // S = sum(z + r)
#define PR_RESIDUAL 3   // R = sum |r| after the last sweep
#define PR_TOL 4
#define PR_LIMIT 5      // most sweeps
#define PR_SUM_ABS 6    // this sweep's sum |r_out| (the sweep kernels add into it)
#define PR_SUM 7        // this sweep's sum r_out
#define PR_CTL 8

// one sweep: z[v] += r_in[v]; r_out[v] = sum over in-edges (u -> v) of val[e] * r_in[u];
// ctl[PR_SUM_ABS] += |r_out|, ctl[PR_SUM] += r_out.  ``items`` = rows * tpr rounded up to a warp multiple,
// so that every lane of a warp runs the same iterations (the shuffles need the whole warp).
#define PR_SWEEP(NAME, REAL)                                                                      \
extern "C" __global__                                                                             \
void NAME(const long long* indptr, const int* indices, const REAL* val, const REAL* r_in,         \
          REAL* z, REAL* r_out, double* ctl, long long rows, int tpr, long long items,            \
          long long heavy_min)                                                                    \
{                                                                                                 \
    if (ctl[PR_DONE] != 0.0) return;           /* a queued sweep after convergence */              \
    double abs_sum = 0.0, sum = 0.0;                                                              \
    PR_GRID_LOOP(t, items) {                                                                      \
        long long v = t / tpr;                                                                    \
        int lane = (int)(t % tpr);                                                                \
        REAL acc = (REAL)0;                                                                       \
        /* a row of more than heavy_min in-edges is the heavy kernel's (a block per row) */       \
        bool mine = v < rows && indptr[v + 1] - indptr[v] <= heavy_min;                         \
        if (mine) {                                                                               \
            long long end = indptr[v + 1];                                                        \
            for (long long e = indptr[v] + lane; e < end; e += tpr)                               \
                acc += val[e] * r_in[indices[e]];                                                 \
        }                                                                                         \
        for (int o = tpr >> 1; o > 0; o >>= 1)                                                    \
            acc += PR_SHFL_DOWN(acc, o, tpr);                                                     \
        if (mine && lane == 0) {                                                                  \
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
    /* the block's warps meet in shared memory: one atomic per block, not per warp */             \
    __shared__ double block_abs[PR_MAX_WARPS], block_sum[PR_MAX_WARPS];                           \
    const int warp = threadIdx.x / PR_WARP, warps = (blockDim.x + PR_WARP - 1) / PR_WARP;         \
    if ((threadIdx.x & (PR_WARP - 1)) == 0) { block_abs[warp] = abs_sum; block_sum[warp] = sum; } \
    __syncthreads();                                                                              \
    if (threadIdx.x == 0) {                                                                       \
        double a = 0.0, s = 0.0;                                                                  \
        for (int w = 0; w < warps; ++w) { a += block_abs[w]; s += block_sum[w]; }                 \
        if (a != 0.0 || s != 0.0) { atomicAdd(&ctl[PR_SUM_ABS], a); atomicAdd(&ctl[PR_SUM], s); } \
    }                                                                                             \
}

// the heavy rows heavy[0, nheavy) of the same sweep, a block per row: the block's threads stride over
// the row's in-edges and meet in a shared-memory tree (blockDim a power of two, at most PR_BLOCK)
#define PR_SWEEP_HEAVY(NAME, REAL)                                                                \
extern "C" __global__                                                                             \
void NAME(const long long* indptr, const int* indices, const REAL* val, const REAL* r_in,         \
          REAL* z, REAL* r_out, double* ctl, const long long* heavy, long long nheavy)            \
{                                                                                                 \
    if (ctl[PR_DONE] != 0.0) return;                                                              \
    __shared__ REAL part[PR_BLOCK];                                                               \
    double abs_sum = 0.0, sum = 0.0;                                                              \
    for (long long i = blockIdx.x; i < nheavy; i += gridDim.x) {                                  \
        long long v = heavy[i];                                                                   \
        REAL acc = (REAL)0;                                                                       \
        for (long long e = indptr[v] + threadIdx.x; e < indptr[v + 1]; e += blockDim.x)           \
            acc += val[e] * r_in[indices[e]];                                                     \
        part[threadIdx.x] = acc;                                                                  \
        __syncthreads();                                                                          \
        for (unsigned int s = blockDim.x >> 1; s > 0; s >>= 1) {                                  \
            if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];                      \
            __syncthreads();                                                                      \
        }                                                                                         \
        if (threadIdx.x == 0) {                                                                   \
            z[v] += r_in[v];                                                                      \
            r_out[v] = part[0];                                                                   \
            abs_sum += fabs((double)part[0]);                                                     \
            sum += (double)part[0];                                                               \
        }                                                                                         \
        __syncthreads();                                                                          \
    }                                                                                             \
    if (threadIdx.x == 0 && (abs_sum != 0.0 || sum != 0.0)) {                                     \
        atomicAdd(&ctl[PR_SUM_ABS], abs_sum);                                                     \
        atomicAdd(&ctl[PR_SUM], sum);                                                             \
    }                                                                                             \
}

// after a sweep (one thread): R = its sum |r_out|, S += its sum r_out, one more round; done once
// R < tol * S or the rounds reach the limit (the host loop's test, in the same double arithmetic)
extern "C" __global__ void pr_sweep_finish(double* ctl)
{
    if (threadIdx.x != 0 || blockIdx.x != 0 || ctl[PR_DONE] != 0.0) return;
    ctl[PR_RESIDUAL] = ctl[PR_SUM_ABS];
    ctl[PR_TOTAL] += ctl[PR_SUM];
    ctl[PR_ROUNDS] += 1.0;
    ctl[PR_SUM_ABS] = 0.0;
    ctl[PR_SUM] = 0.0;
    if (!(ctl[PR_RESIDUAL] >= ctl[PR_TOL] * ctl[PR_TOTAL]) || ctl[PR_ROUNDS] >= ctl[PR_LIMIT])
        ctl[PR_DONE] = 1.0;
}

PR_SWEEP(pr_sweep_f64, double)
PR_SWEEP(pr_sweep_f32, float)
PR_SWEEP_HEAVY(pr_sweep_heavy_f64, double)
PR_SWEEP_HEAVY(pr_sweep_heavy_f32, float)

// ---- the pruned push of an incremental update (FusedPush): rounds of select -> check -> push ----------
#ifndef PR_BALLOT
#define PR_BALLOT(p) __ballot_sync(0xffffffffu, (p))
#endif
#ifndef PR_SHFL
#define PR_SHFL(v, src, w) __shfl_sync(0xffffffffu, (v), (src), (w))
#endif
#ifndef PR_SHFL_UP
#define PR_SHFL_UP(v, o, w) __shfl_up_sync(0xffffffffu, (v), (o), (w))
#endif
#ifndef PR_LANES_BELOW
#define PR_LANES_BELOW(l) ((1u << (l)) - 1u)
#endif
// the push's control block (doubles)
#define PP_DONE 0       // 1 once R <= goal * S or out of rounds
#define PP_ROUNDS 1     // push rounds done
#define PP_TOTAL 2      // S = sum(z + r)
#define PP_RESIDUAL 3   // R = sum |r|, exact, as the last select summed it
#define PP_GOAL 4       // stop once R <= goal * S
#define PP_LIMIT 5      // most push rounds
#define PP_SUM_ABS 6    // the select's sum |r| (its blocks add into it)
#define PP_SPREAD 7     // the push's d * (pushed residual of vertices with out-edges): its change of S
#define PP_THETA 8      // this round's threshold per unit of max(k, 1)
#define PP_SCALE 9      // theta = scale * R
#define PP_EDGES 10     // out-edges pushed along, all rounds
#define PP_PUSHES 11    // vertices pushed, all rounds
#define PP_SELECTS 12   // selects (passes over the rows), all rounds
#define PP_DAMPING 13   // d
#define PP_OMEGA 14     // a selected vertex pushes omega * r[v] (over-relaxation when > 1; r[v] keeps the rest)
#define PP_RMIN 15      // the least R seen: R above twice it sets omega back to 1 (over-relaxation diverging)
#define PP_FIRST 16     // R when the rounds start (the host's estimate of the rounds left)
#define PP_CORR_EDGES 17  // the corrections' edges read (their acc[2], for the work counters)
// the Google form (PP_FORM 1; FusedPush's docstring): the select takes r + c, c = spread(z) - 1 the uniform shift
// that makes r + c the Google matrix's residual G x - x of x = z (in z's units); T and D follow the pushes
#define PP_FORM 18      // 0: the residual form (select on |r|); 1: the Google form (select on |r + c| at live rows)
#define PP_SHIFT 19     // c as the last select used it: (d D + (1 - d) T) / n - 1
#define PP_ZSUM 20      // T = sum of z over the live rows
#define PP_ZDANG 21     // D = sum of z over the live rows without out-edges
#define PP_DZSUM 22     // the pushed values of this round, summed (pr_push adds into it; the check folds it into T)
#define PP_DZDANG 23    // ... of the pushed vertices without out-edges (into D)
#define PP_SIGNED 24    // the select's sum of (r + c) over the live rows
#define PP_LIVE 25      // n, the live rows (pr_gpush_sums counts them)
#define PP_ZTOTAL 26    // S of the push state the rounds start from (z's units, the corrections in)
#define PP_KAPPA 27     // > 0: the threshold is theta * (k + kappa), a push's own cost counted as kappa edges
#define PP_BLOCKS 28    // the select's blocks done (its last one runs the check)
#define PP_CTL 29

// the push rounds' *binding* (a FusedPush's ``bind``, int64): the out-CSR's offsets and columns (device addresses)
// and the rows, which pr_push_init writes each run.  pr_push_select and pr_push read them from here, not from
// their arguments, so a CUDA graph of rounds captured once stays valid across updates whose CSR is a new array
// and whose rows grew (FusedPush._rounds: the captured arguments are buffers kept between updates)
#define PB_OFFSETS 0
#define PB_COLS 1
#define PB_ROWS 2
#define PB_SIZE 4

// the uniform shift c of the Google form for the z of this moment (the check's T and D plus the last push's sums)
__device__ double pr_gpush_shift(const double* ctl)
{
    const double d = ctl[PP_DAMPING];
    return (d * (ctl[PP_ZDANG] + ctl[PP_DZDANG]) + (1.0 - d) * (ctl[PP_ZSUM] + ctl[PP_DZSUM])) / ctl[PP_LIVE] - 1.0;
}

// a block's three per-thread sums added to ctl[ia], ctl[ib], ctl[ic]: over the warp by shuffles, then one
// atomic per sum and block
__device__ void pr_block_add3(double a, double b, double c, double* ctl, int ia, int ib, int ic)
{
    for (int o = PR_WARP >> 1; o > 0; o >>= 1) {
        a += PR_SHFL_DOWN(a, o, PR_WARP);
        b += PR_SHFL_DOWN(b, o, PR_WARP);
        c += PR_SHFL_DOWN(c, o, PR_WARP);
    }
    __shared__ double part_a[PR_MAX_WARPS], part_b[PR_MAX_WARPS], part_c[PR_MAX_WARPS];
    const int warp = threadIdx.x / PR_WARP, warps = (blockDim.x + PR_WARP - 1) / PR_WARP;
    if ((threadIdx.x & (PR_WARP - 1)) == 0) { part_a[warp] = a; part_b[warp] = b; part_c[warp] = c; }
    __syncthreads();
    if (threadIdx.x == 0) {
        double sa = 0.0, sb = 0.0, sc = 0.0;
        for (int w = 0; w < warps; ++w) { sa += part_a[w]; sb += part_b[w]; sc += part_c[w]; }
        if (sa != 0.0) atomicAdd(&ctl[ia], sa);
        if (sb != 0.0) atomicAdd(&ctl[ib], sb);
        if (sc != 0.0) atomicAdd(&ctl[ic], sc);
    }
    // the partial sums are the block's until thread 0 has read them: a second call in the same kernel (pr_push's
    // two, pr_corr_apply's and its pr_live_sums) must not overwrite them before (a race that corrupted R's change)
    __syncthreads();
}

// a block's warps reserve ``warp_total`` slots each from ``counter`` by ONE atomic for the block (the counter is one
// address that every warp of the grid hits: an atomic per warp serialised the selects - 131k warps a pass on
// R-MAT 22); returns this warp's first slot.  Every thread of the block must call it the same number of times
// (a loop whose trip count is uniform over the block).
__device__ int pr_block_reserve(int warp_total, int* counter)
{
    __shared__ int warp_base[PR_MAX_WARPS];
    __shared__ int block_base;
    const int warp = threadIdx.x / PR_WARP, warps = (blockDim.x + PR_WARP - 1) / PR_WARP;
    if ((threadIdx.x & (PR_WARP - 1)) == 0) warp_base[warp] = warp_total;
    __syncthreads();
    if (threadIdx.x == 0) {
        int sum = 0;
        for (int w = 0; w < warps; ++w) { const int c = warp_base[w]; warp_base[w] = sum; sum += c; }
        block_base = sum ? atomicAdd(counter, sum) : 0;
    }
    __syncthreads();
    const int base = block_base + warp_base[warp];
    __syncthreads();                             // the slots are reused by the block's next call
    return base;
}

// the same for two counts packed in one 64-bit word (low 32 bits: big entries, high: small entries; neither sum
// reaches 2**32, so no carry crosses) from the two adjacent int counters at ``counter`` (8-byte aligned): one atomic
__device__ unsigned long long pr_block_reserve2(unsigned long long warp_total, unsigned long long* counter)
{
    __shared__ unsigned long long warp_base2[PR_MAX_WARPS];
    __shared__ unsigned long long block_base2;
    const int warp = threadIdx.x / PR_WARP, warps = (blockDim.x + PR_WARP - 1) / PR_WARP;
    if ((threadIdx.x & (PR_WARP - 1)) == 0) warp_base2[warp] = warp_total;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long sum = 0;
        for (int w = 0; w < warps; ++w) { const unsigned long long c = warp_base2[w]; warp_base2[w] = sum; sum += c; }
        block_base2 = sum ? atomicAdd(counter, sum) : 0ull;
    }
    __syncthreads();
    const unsigned long long base = block_base2 + warp_base2[warp];
    __syncthreads();
    return base;
}

// PR_PUSH_SMALL: a queued vertex of at most this many out-edges (dangling ones too) gets one *small* entry, pushed by
// one thread (pr_push's first loop), not a chunk entry of tpr lanes (of which a vertex of 3 out-edges kept 3 busy
// and 13 idle: R-MAT 22 pushed 20.4M vertices and 79.5M edges at 0.01 %, 16 lanes an entry).  Small entries fill
// the entry buffers from the top (index cap - 1 - i); their counter is the chunk entries' neighbour (qn[2p + 1]).
// < 0: every entry a chunk entry (the previous queue).
#ifndef PR_PUSH_SMALL
#define PR_PUSH_SMALL 8
#endif

// select: R = sum |r| over the rows (exact: no push runs meanwhile) and the queue of the rows with
// |r[v]| > theta * max(k[v], 1).  A queued vertex gets one *entry* per ``chunk`` of its out-edges (one for
// a dangling vertex), so a hub's edges are pushed by many lanes at once; an entry is (v, first edge of
// its chunk, r[v] as read here).  A block takes tiles of PR_SELECT_ROWS rows per thread (coalesced: row
// tile * blockDim * PR_SELECT_ROWS + j * blockDim + thread) and reserves the tile's entries by one atomic
// (prefix sums over its lanes and warps): the queue counter is one address that every block hits, and an
// atomic per block and 256 rows made it the select's cost on R-MAT 22 (16k of them a pass).  PR_SELECT_EAGER: a
// row's loads (live byte, r, offsets) issue together, none waits on the live byte (H200: 93.7 -> 67.7 us a select
// on R-MAT 22; bench-results/2026-11-26-princ2, call 1).
// ``items`` = the tiles times the block size (the shuffles need the whole warp, the reservation the block).
__device__ void pr_push_check_at(double* ctl, int* qn, int parity);
__device__ bool pr_push_small(long long k) { return PR_PUSH_SMALL >= 0 && k <= PR_PUSH_SMALL; }

#ifndef PR_SELECT_ROWS
#define PR_SELECT_ROWS 2
#endif
#ifndef PR_SELECT_EAGER
#define PR_SELECT_EAGER 1
#endif
// PR_SELECT_PIPE: a thread issues its next tile's loads (live byte, r, offsets) before this tile's reservation and
// writes, so the loads' latency overlaps the block's barriers and its queue atomic (a tile's reservation waits on
// one atomic of thread 0: without the overlap every tile paid a load latency and an atomic's round trip in turn).
// The select writes nothing it reads (no push runs meanwhile), so loading early reads the same values.
#ifndef PR_SELECT_PIPE
#define PR_SELECT_PIPE 1
#endif
// a tile's loads for the thread of grid index t (nothing past ``items`` or ``rows``): the live flag (the Google
// form's), r and the out-degree of each of its PR_SELECT_ROWS rows
__device__ void pr_select_load(long long t, long long items, long long rows, bool google,
                               const unsigned char* live, const double* r, const long long* offsets,
                               bool* lv, double* rr, int* k)
{
    const long long tile = t / blockDim.x;
    const long long row0 = tile * blockDim.x * PR_SELECT_ROWS + t % blockDim.x;
#pragma unroll
    for (int j = 0; j < PR_SELECT_ROWS; ++j) {
        const long long v = row0 + (long long)j * blockDim.x;
        const bool in = t < items && v < rows;
        lv[j] = in && (!google || live[v]);
        rr[j] = in ? r[v] : 0.0;
        k[j] = in ? (int)(offsets[v + 1] - offsets[v]) : 0;    // an out-degree fits an int (entries are ints)
    }
}

// > 0: blocks of PR_BLOCK an SM the select's registers must leave room for (launch bounds; 0: the compiler's choice).
// nvcc for sm_90: 54 registers unpiped, 66 piped (3 blocks an SM: the grid's 2**18 threads in 3 waves on 132 SMs),
// 60 piped with 4 (as unpiped: 4 blocks), 48 with 5 but spilling
#ifndef PR_SELECT_MIN_BLOCKS
#define PR_SELECT_MIN_BLOCKS 4
#endif
#if defined(__CUDACC__) && PR_SELECT_MIN_BLOCKS > 0
#define PR_SELECT_BOUNDS __launch_bounds__(PR_BLOCK, PR_SELECT_MIN_BLOCKS)
#else
#define PR_SELECT_BOUNDS
#endif
extern "C" __global__ PR_SELECT_BOUNDS
void pr_push_select(const double* r, const long long* bind, double* ctl, int* ent_v, int* ent_start,
                    double* ent_val, int* qn, int chunk, const unsigned char* live, int* qn_base, int parity,
                    long long cap)
{
    if (ctl[PP_DONE] != 0.0) return;
    // the offsets and the rows from the binding (PB_*); the tiles of PR_SELECT_ROWS rows a thread, times the block
    const long long* offsets = (const long long*)(unsigned long long)bind[PB_OFFSETS];
    const long long rows = bind[PB_ROWS];
    const long long per_tile = (long long)blockDim.x * PR_SELECT_ROWS;
    const long long items = (rows + per_tile - 1) / per_tile * (long long)blockDim.x;
    const double theta = ctl[PP_THETA], omega = ctl[PP_OMEGA];
    const bool google = ctl[PP_FORM] != 0.0;
    const double c = google ? pr_gpush_shift(ctl) : 0.0;      // every thread computes the same shift
    const double kappa = ctl[PP_KAPPA];                        // a push's cost in edges beyond its own (0: max(k, 1))
    const int lane = (int)(threadIdx.x & (PR_WARP - 1));
    double abs_sum = 0.0, signed_sum = 0.0;
#if PR_SELECT_PIPE
    long long pre_t = -1;                        // the tile index whose loads p_* hold
    bool p_lv[PR_SELECT_ROWS];
    double p_rr[PR_SELECT_ROWS];
    int p_k[PR_SELECT_ROWS];
#endif
    PR_GRID_LOOP(t, items) {
        const long long tile = t / blockDim.x;
        const long long row0 = tile * blockDim.x * PR_SELECT_ROWS + t % blockDim.x;
        double rv[PR_SELECT_ROWS];
        int n_ent[PR_SELECT_ROWS];
        bool small[PR_SELECT_ROWS];
        int mine = 0, mine_small = 0;
#if PR_SELECT_PIPE
        bool c_lv[PR_SELECT_ROWS];
        double c_rr[PR_SELECT_ROWS];
        int c_k[PR_SELECT_ROWS];
        if (pre_t == t) {                        // always past a thread's first tile on the GPU (the grid stride)
#pragma unroll
            for (int j = 0; j < PR_SELECT_ROWS; ++j) { c_lv[j] = p_lv[j]; c_rr[j] = p_rr[j]; c_k[j] = p_k[j]; }
        } else {
            pr_select_load(t, items, rows, google, live, r, offsets, c_lv, c_rr, c_k);
        }
        pre_t = t + (long long)blockDim.x * gridDim.x;
        pr_select_load(pre_t, items, rows, google, live, r, offsets, p_lv, p_rr, p_k);
#endif
#pragma unroll
        for (int j = 0; j < PR_SELECT_ROWS; ++j) {
            const long long v = row0 + (long long)j * blockDim.x;
            rv[j] = 0.0;
            n_ent[j] = 0;
            small[j] = false;
#if PR_SELECT_PIPE
            (void)v;
            const bool lv = c_lv[j];
            const long long k = c_k[j];
            if (lv) {
                rv[j] = c_rr[j] + c;
                const double a = fabs(rv[j]);
#elif PR_SELECT_EAGER
            // every load issued at once (no load waits on the live byte): a tile's rows are independent
            const bool in = v < rows;
            const bool lv = in && (!google || live[v]);
            const double rr = in ? r[v] : 0.0;
            const long long k = in ? offsets[v + 1] - offsets[v] : 0;
            if (lv) {
                rv[j] = rr + c;
                const double a = fabs(rv[j]);
#else
            if (v < rows && (!google || live[v])) {
                rv[j] = r[v] + c;
                const double a = fabs(rv[j]);
                const long long k = offsets[v + 1] - offsets[v];
#endif
                abs_sum += a;
                signed_sum += rv[j];
                const double cost = kappa > 0.0 ? (double)k + kappa : (double)(k > 0 ? k : 1);
                if (a > theta * cost) {
                    if (pr_push_small(k)) small[j] = true;
                    else n_ent[j] = k > 0 ? (int)((k + chunk - 1) / chunk) : 1;
                }
            }
            mine += n_ent[j];
            mine_small += small[j] ? 1 : 0;
        }
        // inclusive prefix sums of the warp's chunk and small entry counts, packed (small << 32 | chunk)
        const unsigned long long mine2 = ((unsigned long long)mine_small << 32) | (unsigned long long)mine;
        unsigned long long incl = mine2;
        for (int o = 1; o < PR_WARP; o <<= 1) {
            const unsigned long long y = PR_SHFL_UP(incl, o, PR_WARP);
            if (lane >= o) incl += y;
        }
        const unsigned long long warp_total = PR_SHFL(incl, PR_WARP - 1, PR_WARP);
        const unsigned long long base2 = pr_block_reserve2(warp_total, (unsigned long long*)qn) + incl - mine2;
        int base = (int)(base2 & 0xffffffffull);
        long long sbase = cap - 1 - (long long)(base2 >> 32);    // small entries from the top, downwards
        for (int j = 0; j < PR_SELECT_ROWS; ++j) {
            const int v = (int)(row0 + (long long)j * blockDim.x);
            for (int c = 0; c < n_ent[j]; ++c) {
                ent_v[base + c] = v;
                ent_start[base + c] = c * chunk;
                ent_val[base + c] = omega * rv[j];
            }
            base += n_ent[j];
            if (small[j]) {
                ent_v[sbase] = v;
                ent_val[sbase] = omega * rv[j];
                --sbase;
            }
        }
    }
    pr_block_add3(abs_sum, signed_sum, 0.0, ctl, PP_SUM_ABS, PP_SIGNED, PP_EDGES);
    // the last block to finish runs the check (one launch a round fewer): its sums are in once every block's are
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&ctl[PP_BLOCKS], 1.0) == (double)(gridDim.x - 1)) {
            ctl[PP_BLOCKS] = 0.0;
            pr_push_check_at(ctl, qn_base, parity);
        }
    }
}

// check (one thread), after a select: R from the select, S plus the last push's spread; done once
// R <= goal * S or out of rounds; else the next threshold (scale * R; the scale quartered when the
// queue came out empty, so the rounds cannot stall).  The other queue counter is zeroed for the next select.
// The select's last block runs it (pr_push_check_at; the slots other blocks add into this kernel are read by
// atomics, which bypass a stale L1 line); pr_push_check is the same as a kernel of its own.
__device__ void pr_push_check_at(double* ctl, int* qn, int parity)
{
    if (ctl[PP_DONE] != 0.0) return;
    const double R = atomicAdd(&ctl[PP_SUM_ABS], 0.0);
    const double signed_sum = atomicAdd(&ctl[PP_SIGNED], 0.0);
    const int queued = atomicAdd(&qn[2 * parity], 0) + atomicAdd(&qn[2 * parity + 1], 0);
    ctl[PP_SUM_ABS] = 0.0;
    ctl[PP_RESIDUAL] = R;
    if (ctl[PP_FORM] != 0.0) {
        // the Google form: the shift the select used, T and D of this z, S = T + sum(r + c) (in z's units,
        // before the final rescale by 1 / (1 + c): R / S is the same either side of it)
        ctl[PP_SHIFT] = pr_gpush_shift(ctl);
        ctl[PP_ZSUM] += ctl[PP_DZSUM];
        ctl[PP_ZDANG] += ctl[PP_DZDANG];
        ctl[PP_DZSUM] = 0.0;
        ctl[PP_DZDANG] = 0.0;
        ctl[PP_TOTAL] = ctl[PP_ZSUM] + signed_sum;
        // the Google form conserves sum(r + c), not z's scale T: where its pushes shrink T (the shift tends to -1:
        // R and S fall together, and R <= goal * S may never come) the rounds go on in the residual form, whose
        // S is the push state's T + sum r = T + signed_sum - n c (c the shift this select used).  This round's
        // queue (values r + c) is pushed as it is: any value pushed is an exact push, S followed by the spread.
        // pr_push_start's test (a shift above -0.5 to start in the Google form) is the same.
        if (pr_gpush_shift(ctl) < -0.5) {
            ctl[PP_TOTAL] = ctl[PP_ZSUM] + signed_sum - ctl[PP_LIVE] * ctl[PP_SHIFT];
            ctl[PP_FORM] = 0.0;
            ctl[PP_SPREAD] = 0.0;
            ctl[PP_SIGNED] = 0.0;
            ctl[PP_SELECTS] += 1.0;
            qn[2 * (1 - parity)] = 0;
            qn[2 * (1 - parity) + 1] = 0;
            // no stop here: R is the Google form's; the next select sums the residual form's
            if (queued == 0) ctl[PP_SCALE] *= 0.25;
            else ctl[PP_ROUNDS] += 1.0;
            ctl[PP_THETA] = ctl[PP_SCALE] * R;
            return;
        }
    } else {
        ctl[PP_TOTAL] += ctl[PP_SPREAD];
    }
    ctl[PP_SPREAD] = 0.0;
    ctl[PP_SIGNED] = 0.0;
    ctl[PP_SELECTS] += 1.0;
    qn[2 * (1 - parity)] = 0;
    qn[2 * (1 - parity) + 1] = 0;
    // plain pushes (omega = 1) never raise R: each takes |r[v]| away and spreads at most d |r[v]|; an
    // over-relaxed push may, so R rising to twice its least value turns the over-relaxation off
    if (R < ctl[PP_RMIN]) ctl[PP_RMIN] = R;
    else if (R > 2.0 * ctl[PP_RMIN]) ctl[PP_OMEGA] = 1.0;
    if (!(R > ctl[PP_GOAL] * ctl[PP_TOTAL]) || ctl[PP_ROUNDS] >= ctl[PP_LIMIT]) {
        ctl[PP_DONE] = 1.0;
        return;
    }
    if (queued == 0) ctl[PP_SCALE] *= 0.25;
    else ctl[PP_ROUNDS] += 1.0;
    ctl[PP_THETA] = ctl[PP_SCALE] * R;
}

extern "C" __global__ void pr_push_check(double* ctl, int* qn, int parity)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    pr_push_check_at(ctl, qn, parity);
}

// before the first round (one thread): R and S take the corrections' changes (``acc``, still on the device, so
// no host read stands between the corrections and the pushes), then the first threshold and the least R; done
// at once when R <= goal * S already
extern "C" __global__ void pr_push_start(double* ctl, const double* acc)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    ctl[PP_RESIDUAL] += acc[0];
    ctl[PP_TOTAL] += acc[1];
    ctl[PP_CORR_EDGES] = acc[2];
    const double R = ctl[PP_RESIDUAL];
    ctl[PP_FIRST] = R;
    ctl[PP_ZTOTAL] = ctl[PP_TOTAL];
    ctl[PP_RMIN] = R;
    ctl[PP_THETA] = ctl[PP_SCALE] * R;
    // the Google form needs z's scale: with no mass in z yet (every live slot new, z = 0) the residual form runs
    if (ctl[PP_FORM] != 0.0 && !(ctl[PP_LIVE] > 0.0 && pr_gpush_shift(ctl) > -0.5)) ctl[PP_FORM] = 0.0;
    // the Google form's first select sums its own R and S (the shift changes both): only the limit stops here
    if ((ctl[PP_FORM] == 0.0 && !(R > ctl[PP_GOAL] * ctl[PP_TOTAL])) || !(ctl[PP_LIMIT] > 0.0)) ctl[PP_DONE] = 1.0;
}

// a push run's control block and queue counters set on the device (one launch instead of a host array, its copy
// and two fills): every slot 0 but these; and the run's binding (PB_*: the out-CSR's addresses and the rows)
extern "C" __global__
void pr_push_init(double* ctl, int* qn, double total, double residual, double goal, double limit, double scale,
                  double damping, double omega, double form, double kappa, long long* bind, long long offsets,
                  long long cols, long long rows)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    bind[PB_OFFSETS] = offsets;
    bind[PB_COLS] = cols;
    bind[PB_ROWS] = rows;
    for (int i = 0; i < PP_CTL; ++i) ctl[i] = 0.0;
    ctl[PP_TOTAL] = total;
    ctl[PP_RESIDUAL] = residual;
    ctl[PP_GOAL] = goal;
    ctl[PP_LIMIT] = limit;
    ctl[PP_THETA] = scale * residual;
    ctl[PP_SCALE] = scale;
    ctl[PP_DAMPING] = damping;
    ctl[PP_OMEGA] = omega;
    ctl[PP_RMIN] = residual;
    ctl[PP_FIRST] = residual;
    ctl[PP_FORM] = form;
    ctl[PP_KAPPA] = kappa;
    qn[0] = 0;
    qn[1] = 0;
    qn[2] = 0;
    qn[3] = 0;
}

// the Google form's start sums over the live rows: T (z's total), D (z on the dangling rows) and n, added into
// the control block ``ctl`` (one grid loop; pr_gpush_sums alone, or in the corrections' edge pass)
__device__ void pr_live_sums(const double* z, const long long* offsets, const unsigned char* live, long long rows,
                             double* ctl)
{
    double t = 0.0, dang = 0.0, n = 0.0;
    PR_GRID_LOOP(v, rows) {
        if (live[v]) {
            t += z[v];
            n += 1.0;
            if (offsets[v + 1] == offsets[v]) dang += z[v];
        }
    }
    pr_block_add3(t, dang, n, ctl, PP_ZSUM, PP_ZDANG, PP_LIVE);
}

// the Google form's start (before pr_push_start): T, D and n summed over the live rows
extern "C" __global__
void pr_gpush_sums(const double* z, const long long* offsets, const unsigned char* live, long long rows, double* ctl)
{
    pr_live_sums(z, offsets, live, rows, ctl);
}

// the Google form's end: z' = z / (1 + c), r' = (r + c) / (1 + c) at the live rows, the exact push state of z'
// (r' = 1 + d P^T z' - z'), with c the shift of the z of this moment
extern "C" __global__
void pr_gpush_finish(double* z, double* r, const unsigned char* live, long long rows, const double* ctl)
{
    if (ctl[PP_FORM] == 0.0) return;                 // pr_push_start fell back to the residual form
    const double c = pr_gpush_shift(ctl), inv = 1.0 / (1.0 + c);
    PR_GRID_LOOP(v, rows) {
        if (live[v]) {
            z[v] *= inv;
            r[v] = (r[v] + c) * inv;
        }
    }
}

// push the queue's entries, ``tpr`` lanes per entry: the first chunk's lane 0 takes the selected value
// out of r[v] (an atomic subtraction: pushes of other vertices may be adding to r[v] meanwhile, and what
// they add stays) into z[v]; every lane adds d * value / k[v] to the residual of the out-neighbours of its
// chunk (atomics: the round's pushes run at once and in place).
//
// A lane's work is a chain of dependent loads (the entry, its row's offsets, the columns) ending in atomics, and
// the compiler keeps loads behind earlier atomics: so a lane loads its further columns PR_PUSH_UNROLL at a time
// before their atomics.  PR_PUSH_ITEMS > 1 takes that many entries a thread at once (items t2, t2 + H, ...: the
// same lane of entries H / tpr apart), their entries, offsets and first columns loaded together.
// H200, bench-results/2026-11-26-princ2 call 2, update ms at 0.01 % on R-MAT 20 / 22 (previous code 1.44 / 4.58):
// unroll 1, one entry 1.455 / 4.367; unroll 4, one entry (the default) 1.426 / 4.232; unroll 4, two entries
// 1.511 / 4.821 (70 registers), the same held to 64 registers by PR_PUSH_MIN_BLOCKS 4: 1.463 / 4.893.
#ifndef PR_PUSH_UNROLL
#define PR_PUSH_UNROLL 4
#endif
#ifndef PR_PUSH_ITEMS
#define PR_PUSH_ITEMS 1
#endif
// > 0: blocks of 256 an SM the push's registers must leave room for (launch bounds; 0: the compiler's choice)
#ifndef PR_PUSH_MIN_BLOCKS
#define PR_PUSH_MIN_BLOCKS 0
#endif
#if defined(__CUDACC__) && PR_PUSH_MIN_BLOCKS > 0
#define PR_PUSH_BOUNDS __launch_bounds__(PR_BLOCK, PR_PUSH_MIN_BLOCKS)
#else
#define PR_PUSH_BOUNDS
#endif
extern "C" __global__ PR_PUSH_BOUNDS
void pr_push(const long long* bind, double* z, double* r, double* ctl,
             const int* ent_v, const int* ent_start, const double* ent_val, const int* qn, int tpr, int chunk,
             long long cap)
{
    if (ctl[PP_DONE] != 0.0) return;
    const long long* offsets = (const long long*)(unsigned long long)bind[PB_OFFSETS];     // the binding (PB_*)
    const int* cols = (const int*)(unsigned long long)bind[PB_COLS];
    const double d = ctl[PP_DAMPING];
    const long long n = (long long)qn[0];
    const long long items = (n * tpr + PR_WARP - 1) / PR_WARP * PR_WARP;
    // H: a multiple of the warp and of tpr (both powers of two), so item t2 + u H has t2's lane
    const long long m = tpr > PR_WARP ? tpr : PR_WARP;
    const long long H = ((items + PR_PUSH_ITEMS - 1) / PR_PUSH_ITEMS + m - 1) / m * m;
    double spread = 0.0, edges = 0.0, pushes = 0.0, dz = 0.0, dz_dang = 0.0;
#if PR_PUSH_SMALL >= 0
    // the small entries (qn[1], from the top of the buffers), a thread each: its vertex's value out of r[v] into
    // z[v], and its at most PR_PUSH_SMALL out-edges' shares, their column loads issued together
    PR_GRID_LOOP(t, (long long)qn[1]) {
        const long long i = cap - 1 - t;
        const int v = ent_v[i];
        const double val = ent_val[i];
        const long long b = offsets[v];
        const int k = (int)(offsets[v + 1] - b);
        int c[PR_PUSH_SMALL > 0 ? PR_PUSH_SMALL : 1];
#pragma unroll
        for (int w = 0; w < PR_PUSH_SMALL; ++w) c[w] = w < k ? cols[b + w] : -1;
        atomicAdd(&r[v], -val);
        z[v] += val;
        pushes += 1.0;
        dz += val;
        if (k > 0) {
            spread += d * val;
            edges += (double)k;
            const double share = d * val / (double)k;
#pragma unroll
            for (int w = 0; w < PR_PUSH_SMALL; ++w)
                if (c[w] >= 0) atomicAdd(&r[c[w]], share);
        } else {
            dz_dang += val;
        }
    }
#endif
    PR_GRID_LOOP(t2, H) {
        const int lane = (int)(t2 % tpr);
        int v[PR_PUSH_ITEMS];
        long long s[PR_PUSH_ITEMS], b[PR_PUSH_ITEMS], k[PR_PUSH_ITEMS], end[PR_PUSH_ITEMS];
        double val[PR_PUSH_ITEMS];
        int c0[PR_PUSH_ITEMS];
#pragma unroll
        for (int u = 0; u < PR_PUSH_ITEMS; ++u) {
            const long long i = (t2 + u * H) / tpr;
            v[u] = -1;
            s[u] = 0;
            val[u] = 0.0;
            if (i < n) { v[u] = ent_v[i]; s[u] = ent_start[i]; val[u] = ent_val[i]; }
        }
#pragma unroll
        for (int u = 0; u < PR_PUSH_ITEMS; ++u) {
            b[u] = 0;
            k[u] = 0;
            if (v[u] >= 0) { b[u] = offsets[v[u]]; k[u] = offsets[v[u] + 1] - b[u]; }
            end[u] = b[u] + (s[u] + chunk < k[u] ? s[u] + chunk : k[u]);
        }
#pragma unroll
        for (int u = 0; u < PR_PUSH_ITEMS; ++u) {
            const long long j = b[u] + s[u] + lane;
            c0[u] = v[u] >= 0 && j < end[u] ? cols[j] : -1;
        }
#pragma unroll
        for (int u = 0; u < PR_PUSH_ITEMS; ++u) {
            if (v[u] < 0) continue;
            if (s[u] == 0 && lane == 0) {
                atomicAdd(&r[v[u]], -val[u]);
                z[v[u]] += val[u];
                pushes += 1.0;
                dz += val[u];
                if (k[u] > 0) { spread += d * val[u]; edges += (double)k[u]; }
                else dz_dang += val[u];
            }
            if (c0[u] < 0) continue;
            const double share = d * val[u] / (double)k[u];
            atomicAdd(&r[c0[u]], share);
            long long j = b[u] + s[u] + lane + tpr;
#if PR_PUSH_UNROLL > 1
            // PR_PUSH_UNROLL column loads in flight before their atomics
            for (; j + (PR_PUSH_UNROLL - 1) * (long long)tpr < end[u]; j += PR_PUSH_UNROLL * (long long)tpr) {
                int c[PR_PUSH_UNROLL];
#pragma unroll
                for (int w = 0; w < PR_PUSH_UNROLL; ++w) c[w] = cols[j + w * (long long)tpr];
#pragma unroll
                for (int w = 0; w < PR_PUSH_UNROLL; ++w) atomicAdd(&r[c[w]], share);
            }
#endif
            for (; j < end[u]; j += tpr)
                atomicAdd(&r[cols[j]], share);
        }
    }
    pr_block_add3(spread, edges, pushes, ctl, PP_SPREAD, PP_EDGES, PP_PUSHES);
    pr_block_add3(dz, dz_dang, 0.0, ctl, PP_DZSUM, PP_DZDANG, PP_SIGNED);
}

// ---- power iterations of the Google matrix (GoogleSweep): x' = d A^T D^-1 x + spread at the live rows ----------
// The same control block with more slots.  A sweep reads w = x * scale (scale[v] = d / k[v], 0 where v has no
// out-edge), so an in-edge costs its 4-byte source id and one gather, not an SpMV's 12 bytes (index and value),
// and writes the next w for the next sweep; it sums |x' - x| (PR_SUM_ABS), x' (PR_SUM) and x' over the live
// dangling rows (PG_DANG), from which the finish computes the next sweep's teleport share (PG_SPREAD).
#define PG_DANG 8       // this sweep's sum of x' over the live rows without out-edges
#define PG_SPREAD 9     // the next sweep's (d * sum of x over the live dangling rows + 1 - d) / n
#define PG_USED 10      // the spread of the last sweep done (the push state's scale is its inverse)
#define PG_DAMPING 11   // d
#define PG_LIVE 12      // n, the live rows
#define PG_FIRST 13     // the first sweep's change (the host's estimate of the sweeps left)
#define PG_START 14   // GoogleSweep.first_iterate: -tol arms its finish, which sets 1 where the start's own change
                      // ||u - live||_1 < tol * sum u (the array program's check before its first sweep: run's sweeps
                      // then do nothing) and 0 otherwise; run leaves the slot as it is
#define PG_CTL 15

// a row's x' from its in-edge sum: the teleport share at a live row only (a dead slot gets nothing)
__device__ void pr_google_row(long long v, double acc, double spread, const double* x_in, double* x_out,
                              double* w_out, const double* scale, const unsigned char* live, double& change,
                              double& sum, double& dang)
{
    const bool is_live = live[v] != 0;
    const double y = acc + (is_live ? spread : 0.0);
    const double s = scale[v];
    x_out[v] = y;
    w_out[v] = s * y;
    change += fabs(y - x_in[v]);
    sum += y;
    if (is_live && s == 0.0) dang += y;
}

// one sweep over the rows of at most heavy_min in-edges, ``tpr`` lanes per row (shuffle sums), a capped grid;
// per-thread sums, then the warp's, then the block's: one atomic per sum and block (pr_block_add3)
extern "C" __global__
void pr_google(const long long* indptr, const int* indices, const double* w_in, const double* x_in,
               double* x_out, double* w_out, const double* scale, const unsigned char* live, double* ctl,
               long long rows, int tpr, long long items, long long heavy_min)
{
    if (ctl[PR_DONE] != 0.0 || ctl[PG_START] > 0.0) return;
    const double spread = ctl[PG_SPREAD];
    double change = 0.0, sum = 0.0, dang = 0.0;
    PR_GRID_LOOP(t, items) {
        const long long v = t / tpr;
        const int lane = (int)(t % tpr);
        double acc = 0.0;
        const bool mine = v < rows && indptr[v + 1] - indptr[v] <= heavy_min;
        if (mine) {
            const long long end = indptr[v + 1];
            for (long long e = indptr[v] + lane; e < end; e += tpr)
                acc += w_in[indices[e]];
        }
        for (int o = tpr >> 1; o > 0; o >>= 1)
            acc += PR_SHFL_DOWN(acc, o, tpr);
        if (mine && lane == 0) pr_google_row(v, acc, spread, x_in, x_out, w_out, scale, live, change, sum, dang);
    }
    pr_block_add3(change, sum, dang, ctl, PR_SUM_ABS, PR_SUM, PG_DANG);
}

// the heavy rows heavy[0, nheavy) of the same sweep, a block per row (as pr_sweep_heavy_f64)
extern "C" __global__
void pr_google_heavy(const long long* indptr, const int* indices, const double* w_in, const double* x_in,
                     double* x_out, double* w_out, const double* scale, const unsigned char* live, double* ctl,
                     const long long* heavy, long long nheavy)
{
    if (ctl[PR_DONE] != 0.0 || ctl[PG_START] > 0.0) return;
    __shared__ double gpart[PR_BLOCK];
    const double spread = ctl[PG_SPREAD];
    double change = 0.0, sum = 0.0, dang = 0.0;
    for (long long i = blockIdx.x; i < nheavy; i += gridDim.x) {
        const long long v = heavy[i];
        double acc = 0.0;
        for (long long e = indptr[v] + threadIdx.x; e < indptr[v + 1]; e += blockDim.x)
            acc += w_in[indices[e]];
        gpart[threadIdx.x] = acc;
        __syncthreads();
        for (unsigned int s = blockDim.x >> 1; s > 0; s >>= 1) {
            if (threadIdx.x < s) gpart[threadIdx.x] += gpart[threadIdx.x + s];
            __syncthreads();
        }
        if (threadIdx.x == 0) pr_google_row(v, gpart[0], spread, x_in, x_out, w_out, scale, live, change, sum, dang);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (change != 0.0) atomicAdd(&ctl[PR_SUM_ABS], change);
        if (sum != 0.0) atomicAdd(&ctl[PR_SUM], sum);
        if (dang != 0.0) atomicAdd(&ctl[PG_DANG], dang);
    }
}

// after a sweep (one thread): its change ||x' - x||_1 and sum x'; the next sweep's spread from the dangling sum
// of x' (the array program's formula); done once change < tol (the array program's test) or out of rounds
extern "C" __global__ void pr_google_finish(double* ctl)
{
    if (threadIdx.x != 0 || blockIdx.x != 0 || ctl[PR_DONE] != 0.0) return;
    if (ctl[PG_START] > 0.0) {                  // the start was within tol already: no sweep
        ctl[PR_DONE] = 1.0;
        return;
    }
    const double d = ctl[PG_DAMPING];
    if (ctl[PG_START] < 0.0)                     // first_iterate's sweep: live -> u
        ctl[PG_START] = ctl[PR_SUM_ABS] < -ctl[PG_START] * ctl[PR_SUM] ? 1.0 : 0.0;
    ctl[PR_RESIDUAL] = ctl[PR_SUM_ABS];
    ctl[PR_TOTAL] = ctl[PR_SUM];
    ctl[PG_USED] = ctl[PG_SPREAD];
    ctl[PG_SPREAD] = (d * ctl[PG_DANG] + (1.0 - d)) / ctl[PG_LIVE];
    ctl[PR_SUM_ABS] = 0.0;
    ctl[PR_SUM] = 0.0;
    ctl[PG_DANG] = 0.0;
    ctl[PR_ROUNDS] += 1.0;
    if (ctl[PR_ROUNDS] == 1.0) ctl[PG_FIRST] = ctl[PR_RESIDUAL];
    if (!(ctl[PR_RESIDUAL] >= ctl[PR_TOL]) || ctl[PR_ROUNDS] >= ctl[PR_LIMIT])
        ctl[PR_DONE] = 1.0;
}

// the transpose's fill without a sort: out-edge e (src[e] -> cols[e]) takes the next free slot of its target's
// in-list (cursor: the in-lists' starts, advanced by atomics), so each in-list comes out in no fixed order
extern "C" __global__
void pr_transpose_fill(const long long* src, const int* cols, long long edges, unsigned long long* cursor,
                       int* indices)
{
    PR_GRID_LOOP(e, edges) {
        const unsigned long long at = atomicAdd(&cursor[cols[e]], 1ull);
        indices[at] = (int)src[e];
    }
}

// ---- frontier pushes of an incremental update (FrontierPush): rounds of take -> push -> check ---------------
// Thresholds in levels: at a level's threshold theta (per unit of max(k, 1)) the rounds push the vertices above
// it, found as a compact queue (the targets whose residual crossed theta in the last push), not by a pass over
// the rows; when the queue comes out empty no vertex is above theta and the next level divides it by ``step``
// and scans the rows once.  A pushed vertex gives away its residual as read when it is taken, so what reached it
// since it was queued goes along (Gauss-Seidel-like).  R follows from the atomics' returned old values
// (|old + delta| - |old|, which telescope to the exact change of sum |r|); the host sums R exactly at the end.
#define FP_DONE 0       // 1 once R <= goal * S or out of rounds
#define FP_ROUNDS 1     // rounds done (empty scans included)
#define FP_TOTAL 2      // S = sum(z + r)
#define FP_RESIDUAL 3   // R = sum |r|, followed by the atomics
#define FP_GOAL 4       // stop once R <= goal * S
#define FP_LIMIT 5      // most rounds
#define FP_DABS 6       // this round's change of R (take and push add into it)
#define FP_SPREAD 7     // this round's change of S: d * (pushed residual of vertices with out-edges)
#define FP_THETA 8      // the level's threshold per unit of max(k, 1)
#define FP_SCALE 9      // a new level's threshold is at most scale * R
#define FP_EDGES 10     // out-edges pushed along, all rounds
#define FP_PUSHES 11    // vertices pushed, all rounds
#define FP_SCANS 12     // passes over the rows (levels started), all rounds
#define FP_DAMPING 13   // d
#define FP_SCAN 14      // 1: the next take scans the rows (a new level); 0: it takes the queue
#define FP_STEP 15      // theta is divided by it when a level's queue dies out
#define FP_PARITY 16    // the queue the next take reads (0 or 1)
#define FP_TRACE 17     // 1: fp_check writes a row of ``trace`` per round
#define FP_TAIL 18      // a queue of at most tail * (the level's largest) ends the level (its vertices wait
                        // for the next level's scan, instead of a tail of small rounds)
#define FP_LEVEL_MAX 19 // the largest queue of this level
#define FP_CTL 20
#define FP_TRACE_COLS 8

// take: the queue ``parity`` (or, on a new level, every row) - each vertex still above theta moves its residual
// into z and gets one push entry per ``chunk`` of out-edges (none when dangling: its residual just goes into z).
// ``qn``: [0], [1] the two queues' lengths, [2] the entries.  ``items``: the launch's thread count (the loop runs
// over the queue's length rounded up to a warp, so every lane of a warp joins the shuffles).
extern "C" __global__
void fp_take(double* r, double* z, const long long* k, double* ctl, int* flag, const int* q, int* qn,
             int* ent_v, int* ent_start, double* ent_val, long long rows, int chunk)
{
    if (ctl[FP_DONE] != 0.0) return;
    const int p = (int)ctl[FP_PARITY];
    const bool scan = ctl[FP_SCAN] != 0.0;
    const long long n = scan ? rows : (long long)qn[p];
    const long long lim = (n + blockDim.x - 1) / blockDim.x * blockDim.x;   // block-uniform trip counts
    const int* queue = q + (long long)p * rows;
    if (scan) {                                  // a level cut short left its queue to this scan
        PR_GRID_LOOP(t, (long long)qn[p]) flag[queue[t]] = 0;
    }
    const double theta = ctl[FP_THETA], d = ctl[FP_DAMPING];
    const int lane = (int)(threadIdx.x & (PR_WARP - 1));
    double dabs = 0.0, spread = 0.0, edges = 0.0;
    PR_GRID_LOOP(t, lim) {
        int n_ent = 0;
        long long v = 0;
        double rv = 0.0;
        if (t < n) {
            v = scan ? t : (long long)queue[t];
            if (!scan) flag[v] = 0;
            rv = r[v];
            const long long kv = k[v];
            if (fabs(rv) > theta * (double)(kv > 0 ? kv : 1)) {
                r[v] = 0.0;
                z[v] += rv;
                dabs -= fabs(rv);
                if (kv > 0) {
                    spread += d * rv;
                    edges += (double)kv;
                    n_ent = (int)((kv + chunk - 1) / chunk);
                }
            }
        }
        int incl = n_ent;                        // inclusive prefix sum of the warp's entry counts
        for (int o = 1; o < PR_WARP; o <<= 1) {
            const int y = PR_SHFL_UP(incl, o, PR_WARP);
            if (lane >= o) incl += y;
        }
        const int warp_total = PR_SHFL(incl, PR_WARP - 1, PR_WARP);
        const int base = pr_block_reserve(warp_total, &qn[2]) + incl - n_ent;
        for (int c = 0; c < n_ent; ++c) {
            ent_v[base + c] = (int)v;
            ent_start[base + c] = c * chunk;
            ent_val[base + c] = rv;
        }
    }
    pr_block_add3(dabs, spread, edges, ctl, FP_DABS, FP_SPREAD, FP_EDGES);
}

// push the entries, ``tpr`` lanes per entry: d * value / k[v] to each out-neighbour w of the entry's chunk by an
// atomic; a w whose residual is now above theta joins the other queue unless it is in it already (``flag``).
extern "C" __global__
void fp_push(const long long* offsets, const int* cols, const long long* k, double* r, double* ctl, int* flag,
             int* q, int* qn, const int* ent_v, const int* ent_start, const double* ent_val, long long rows,
             int tpr, int chunk)
{
    if (ctl[FP_DONE] != 0.0) return;
    const int nxt = 1 - (int)ctl[FP_PARITY];
    int* queue = q + (long long)nxt * rows;
    const double theta = ctl[FP_THETA], d = ctl[FP_DAMPING];
    const long long n = (long long)qn[2];
    const long long items = (n * tpr + PR_WARP - 1) / PR_WARP * PR_WARP;
    const int wl = (int)(threadIdx.x & (PR_WARP - 1));
    double dabs = 0.0, pushes = 0.0;
    // every lane of a warp runs the same iterations (items and chunk / tpr are warp-uniform), so the vertices
    // that join the queue are counted by a ballot and reserved by one atomic per warp: an atomic per vertex on
    // the one counter serialised the rounds
    PR_GRID_LOOP(t, items) {
        const long long i = t / tpr;
        const int lane = (int)(t % tpr);
        long long b = 0, s = 0, end = 0;
        double share = 0.0;
        if (i < n) {
            const int v = ent_v[i];
            s = ent_start[i];
            b = offsets[v];
            const long long kv = offsets[v + 1] - b;
            if (s == 0 && lane == 0) pushes += 1.0;
            share = d * ent_val[i] / (double)kv;
            end = s + chunk < kv ? s + chunk : kv;
        }
        for (int it = 0; it < chunk; it += tpr) {
            const long long j = s + it + lane;
            bool join = false;
            int w = 0;
            if (j < end) {
                w = cols[b + j];
                const double old = atomicAdd(&r[w], share);
                const double now = old + share;
                dabs += fabs(now) - fabs(old);
                if (fabs(now) > theta) {         // only then is the degree read (theta * max(k, 1) >= theta)
                    const long long kw = k[w];
                    join = fabs(now) > theta * (double)(kw > 0 ? kw : 1) && flag[w] == 0
                           && atomicCAS(&flag[w], 0, 1) == 0;
                }
            }
            const unsigned int mask = PR_BALLOT(join);
            if (mask) {
                const int leader = __ffs(mask) - 1;
                int base = 0;
                if (wl == leader) base = atomicAdd(&qn[nxt], __popc(mask));
                base = PR_SHFL(base, leader, PR_WARP);
                if (join) queue[base + __popc(mask & PR_LANES_BELOW(wl))] = w;
            }
        }
    }
    pr_block_add3(dabs, pushes, 0.0, ctl, FP_DABS, FP_PUSHES, FP_SCANS);
}

// check (one thread), after a push: R and S take the round's changes; done once R <= goal * S or out of rounds;
// else the next take reads the queue just filled, or, when it is empty (nothing is above theta), a new level:
// theta = min(theta / step, scale * R) and a scan of the rows.
extern "C" __global__ void fp_check(double* ctl, int* qn, double* trace)
{
    if (threadIdx.x != 0 || blockIdx.x != 0 || ctl[FP_DONE] != 0.0) return;
    const int p = (int)ctl[FP_PARITY], nxt = 1 - p;
    ctl[FP_RESIDUAL] += ctl[FP_DABS];
    ctl[FP_DABS] = 0.0;
    ctl[FP_TOTAL] += ctl[FP_SPREAD];
    ctl[FP_SPREAD] = 0.0;
    if (ctl[FP_SCAN] != 0.0) ctl[FP_SCANS] += 1.0;
    if (ctl[FP_TRACE] != 0.0) {
        double* row = trace + (long long)ctl[FP_ROUNDS] * FP_TRACE_COLS;
        row[0] = ctl[FP_SCAN];
        row[1] = (double)qn[p];            // the queue taken (rows when scanning)
        row[2] = (double)qn[2];            // its push entries
        row[3] = (double)qn[nxt];          // the next queue
        row[4] = ctl[FP_EDGES];
        row[5] = ctl[FP_PUSHES];
        row[6] = ctl[FP_THETA];
        row[7] = ctl[FP_RESIDUAL];
    }
    ctl[FP_ROUNDS] += 1.0;
    qn[p] = 0;
    qn[2] = 0;
    if (!(ctl[FP_RESIDUAL] > ctl[FP_GOAL] * ctl[FP_TOTAL]) || ctl[FP_ROUNDS] >= ctl[FP_LIMIT]) {
        ctl[FP_DONE] = 1.0;
        return;
    }
    const double queued = (double)qn[nxt];
    if (queued > ctl[FP_LEVEL_MAX]) ctl[FP_LEVEL_MAX] = queued;
    if (queued == 0.0 || queued <= ctl[FP_TAIL] * ctl[FP_LEVEL_MAX]) {
        const double lower = ctl[FP_THETA] / ctl[FP_STEP], fresh = ctl[FP_SCALE] * ctl[FP_RESIDUAL];
        ctl[FP_THETA] = lower < fresh ? lower : fresh;
        ctl[FP_SCAN] = 1.0;
        ctl[FP_LEVEL_MAX] = 0.0;         // a queue cut short is left to the scan (fp_take clears its flags)
    } else {
        ctl[FP_SCAN] = 0.0;
    }
    ctl[FP_PARITY] = (double)nxt;
}

// out[0] += sum |r| over the rows (the exact R at the end of the pushes)
extern "C" __global__ void fp_rsum(const double* r, long long rows, double* out)
{
    double a = 0.0;
    PR_GRID_LOOP(t, rows) a += fabs(r[t]);
    pr_block_add3(a, 0.0, 0.0, out, 0, 1, 2);
}

// ---- an update's exact residual corrections (fused_corrections): counts -> sources -> resets -> one edge pass ----
// acc[0] += the change of R = sum |r|, acc[1] += the change of S = sum(z + r), acc[2] += the edges read: every
// change of r is one atomic whose returned old value gives |old + delta| - |old| (these telescope to the exact
// change of R).  ``flags``: bit 0 = a slot removed by the batch, bit 1 = a slot added (a reset target).

// the first index i in [0, n) with a[i] > x (a sorted ascending)
__device__ long long pr_upper_bound(const long long* a, long long n, long long x)
{
    long long lo = 0, hi = n;
    while (lo < hi) { const long long mid = (lo + hi) >> 1; if (a[mid] <= x) lo = mid + 1; else hi = mid; }
    return lo;
}

// The batch's sources are its entries in order (``pr_src``: entry i < n_ins is ins_s[i], the rest del_s; n_src =
// n_ins + n_del, a source repeated as often as it has changed edges), not sorted nor made distinct (a sort cost the
// host a thrust call and a stream sync per update).  A source's *owner* entry is its last one: ``pr_corr_owner``
// stamps ``owner[u]`` (a scratch over the slots, kept by the job) with ``epoch << 32 | i`` by atomicMax, so the
// largest i of this epoch wins and stamps of earlier updates (smaller epochs) need no clearing.
__device__ long long pr_src(const int* ins_s, long long n_ins, const int* del_s, long long i)
{
    return i < n_ins ? (long long)ins_s[i] : (long long)del_s[i - n_ins];
}

__device__ long long pr_owner(const unsigned long long* owner, long long u)
{
    return (long long)(owner[u] & 0xffffffffull);
}

extern "C" __global__
void pr_corr_owner(const int* ins_s, long long n_ins, const int* del_s, long long n_del, unsigned long long* owner,
                   long long epoch)
{
    const unsigned long long stamp = (unsigned long long)epoch << 32;
    PR_GRID_LOOP(t, n_ins + n_del) {
        atomicMax(&owner[pr_src(ins_s, n_ins, del_s, t)], stamp | (unsigned long long)t);
    }
}

// per inserted (items [0, n_ins)) and deleted (the rest) edge: one more for its source's count, at its owner entry
extern "C" __global__
void pr_corr_count(const unsigned long long* owner, const int* ins_s, long long n_ins,
                   const int* del_s, long long n_del, unsigned long long* n_in, unsigned long long* n_out)
{
    PR_GRID_LOOP(t, n_ins + n_del) {
        if (t < n_ins) atomicAdd(&n_in[pr_owner(owner, ins_s[t])], 1ull);
        else atomicAdd(&n_out[pr_owner(owner, del_s[t - n_ins])], 1ull);
    }
}

// per batch entry i, source u = pr_src(i), at its owner entry only (the others get empty chunks and are never
// read): k_new = its new row's length, k_old = k_new minus its inserted plus its deleted edges; old share
// d z[u] / k_old, new share d z[u] / k_new (0 for a removed slot: its new row, if any, is the slot's new owner's);
// its new row's chunks of ``chunk`` edges to correct (none for a removed slot) go into ``chunk_list`` (``n_chunks``
// counts them).  ``par[0]`` = d.
extern "C" __global__
void pr_corr_sources(const int* ins_s, long long n_ins, const int* del_s, long long n_src,
                     const unsigned long long* owner, const long long* offsets, const double* z,
                     const unsigned long long* n_in, const unsigned long long* n_out, const unsigned char* flags,
                     const double* par, double* old_share, double* new_share, long long* k_new,
                     unsigned long long* n_chunks, unsigned long long* chunk_list, long long chunk, long long* k)
{
    const double d = par[0];
    PR_GRID_LOOP(i, n_src) {
        const long long u = pr_src(ins_s, n_ins, del_s, i);
        const long long kn = offsets[u + 1] - offsets[u];
        k_new[i] = kn;
        if (pr_owner(owner, u) != i) continue;
        const long long ko = kn - (long long)n_in[i] + (long long)n_out[i];
        const bool survives = (flags[u] & 1) == 0;
        old_share[i] = ko > 0 ? d * z[u] / (double)ko : 0.0;
        new_share[i] = (survives && kn > 0) ? d * z[u] / (double)kn : 0.0;
        k[u] = kn;                               // the job's out-degrees follow the batch (one write per source)
        // its chunks reserved in the chunk list (any order: no prefix sum, which cost the host a CuPy cumsum),
        // each entry (owner entry << 32 | chunk number)
        const unsigned long long nc = survives ? (unsigned long long)((kn + chunk - 1) / chunk) : 0ull;
        if (nc) {
            const unsigned long long base = atomicAdd(n_chunks, nc);
            for (unsigned long long j = 0; j < nc; ++j) chunk_list[base + j] = ((unsigned long long)i << 32) | j;
        }
    }
}

// the corrections along edges, after the resets, in one pass (the array program's "old shares out, resets, new
// shares in" folded per target): items [0, n_chunks * lanes) are the surviving sources' new-row edges,
// ``lanes`` per chunk of ``chunk_list`` (owner entry << 32 | chunk number): target w gets
// new - old share (new only for a reset target); then the deleted edges: -old share (nothing for a reset
// target); then the inserted edges of surviving sources: +old share back (they are not old edges; nothing for a
// reset target).
extern "C" __global__
void pr_corr_apply(const unsigned long long* owner, long long n_src, const unsigned long long* n_chunks,
                   const unsigned long long* chunk_list, const long long* offsets,
                   const int* cols, const int* ins_s, const int* ins_d, long long n_ins,
                   const int* del_s, const int* del_d, long long n_del, const double* old_share,
                   const double* new_share, const unsigned char* flags, double* r, double* acc, int lanes,
                   long long chunk, const double* z, const unsigned char* live, long long rows, double* gctl,
                   int gsums)
{
    double d_abs = 0.0, d_sum = 0.0, edges = 0.0;
    const long long row_items = (long long)n_chunks[0] * lanes;
    const long long items = row_items + n_del + n_ins;
    PR_GRID_LOOP(t, items) {
        if (t < row_items) {
            const long long c = t / lanes;
            const int lane = (int)(t % lanes);
            const unsigned long long item = chunk_list[c];
            const long long own = (long long)(item >> 32);
            const long long u = pr_src(ins_s, n_ins, del_s, own);
            const long long b = offsets[u], kn = offsets[u + 1] - b;
            const long long s = (long long)(item & 0xffffffffull) * chunk;
            const long long end = s + chunk < kn ? s + chunk : kn;
            const double fresh = new_share[own], both = new_share[own] - old_share[own];
            for (long long j = s + lane; j < end; j += lanes) {
                const int w = cols[b + j];
                const double delta = flags[w] ? fresh : both;
                edges += 1.0;
                if (delta != 0.0) {
                    const double before = atomicAdd(&r[w], delta);
                    d_abs += fabs(before + delta) - fabs(before);
                    d_sum += delta;
                }
            }
            continue;
        }
        long long w, u;
        double sign;
        if (t < row_items + n_del) { w = del_d[t - row_items]; u = del_s[t - row_items]; sign = -1.0; }
        else { w = ins_d[t - row_items - n_del]; u = ins_s[t - row_items - n_del]; sign = 1.0; }
        edges += 1.0;
        if (flags[w] || (sign > 0.0 && (flags[u] & 1))) continue;
        const double delta = sign * old_share[pr_owner(owner, u)];
        if (delta != 0.0) {
            const double before = atomicAdd(&r[w], delta);
            d_abs += fabs(before + delta) - fabs(before);
            d_sum += delta;
        }
    }
    pr_block_add3(d_abs, d_sum, edges, acc, 0, 1, 2);
    // the Google-form pushes' T, D and n (pr_gpush_sums' pass) where ``gsums``, into their control block: the edge
    // pass above leaves most of this one wave of threads idle at small batches, and z is final here (the
    // resets ran before; the corrections change r only)
    if (gsums) pr_live_sums(z, offsets, live, rows, gctl);
}

// slots removed by the batch lose their values (``added`` = 0); slots (re)used start from z = 0, r = 1
// (``added`` = 1).  ``vs`` distinct.
extern "C" __global__
void pr_corr_reset(const long long* vs, long long n, double* z, double* r, double* acc, int added)
{
    double d_abs = 0.0, d_sum = 0.0;
    PR_GRID_LOOP(i, n) {
        const long long v = vs[i];
        const double nr = added ? 1.0 : 0.0;
        d_abs += fabs(nr) - fabs(r[v]);
        d_sum += nr - (z[v] + r[v]);
        z[v] = 0.0;
        r[v] = nr;
    }
    pr_block_add3(d_abs, d_sum, 0.0, acc, 0, 1, 2);
}
"""

_kernels = RawKernels(SOURCE, "PageRank")


def _launch(xp, name, n, args):
    _kernels.launch(xp, name, n, args)


#: kernel launcher (tests replace it with a serial host emulation)
launcher = _launch

WARP = 32
BLOCK = THREADS        # threads per block of a launch (pr_block_reserve needs block-uniform loops)
# Blocks of one sweep: a grid-stride loop over the rows, so each block's one atomic per sum covers many rows
# (one atomic per warp on the two sums serialised the 2**20-row sweep: 2.98 ms against 0.41 for cuSPARSE)
SWEEP_THREADS = 256 * 2048
# ``PageRank(fused=None)`` sweeps through these kernels on graphs up to this many edges (H100, R-MAT 15 / 18 /
# 20: 0.32x / 1.12x / 1.75x the library sweep's time per sweep; the library's load-balanced SpMV wins above)
FUSED_MAX_EDGES = 1 << 21
# A row of more than HEAVY_LANES * tpr in-edges goes to the heavy kernel, a block per row: with R-MAT's
# hubs (in-degrees of 1e5 on 2**20 rows) a few lanes per row left one warp summing a hub while the
# rest of the GPU idled
HEAVY_LANES = 32
# how the fused sweeps build their transpose (in_edges): "atomic", "sort", "cusparse" or None (by size)
TRANSPOSE = None
TRANSPOSE_LIBRARY_MIN_EDGES = 1 << 21
# lanes per row of the Google sweep (at most; fewer where the mean in-degree is lower): an H100, one sweep on
# R-MAT 20 / 22 took 0.269 / 0.945 ms at 2 lanes, 0.277 / 1.07 at 4 and 0.449 / 2.27 at the mean in-degree's 16
# (whose rows of a few in-edges left most lanes idle; rows of more than HEAVY_LANES * 2 go to the block kernel)
GOOGLE_LANES = 2


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


def in_edges(xp, offsets, cols, rows: int, num_edges: int, method: str | None = None):
    """The transpose of an out-CSR's first ``rows`` rows (rows = targets): ``(indptr, sources)``, int64 offsets
    and int32 source ids, with the in-edges counted once (``bincount``) and placed by ``method``:

    - ``"sort"``: one stable sort of the targets, so each in-list is in source order (as a CSC conversion
      gives it; cuSPARSE's csr2csc cost a replay batch about 1.5 ms of host time, a buffer-size query of
      0.8 ms, on a 228k-edge graph);
    - ``"atomic"``: each edge takes the next free slot of its target's in-list by an atomic
      (``pr_transpose_fill``): no sort, the in-lists in no fixed order (so sums over them are in no fixed
      order either: the fused sweeps' per-block atomics already are).

    - ``"cusparse"``: cuSPARSE's csr2csc through ``cupyx.scipy.sparse`` (in source order; CuPy only).

    ``None``: :data:`TRANSPOSE`, or where that is ``None`` cuSPARSE's on graphs of more than
    ``TRANSPOSE_LIBRARY_MIN_EDGES`` edges (where cupyx imports) and the atomic fill below (an H100: 1.13 ms
    against 1.61 ms for the atomic fill and 2.18 ms for the sort on R-MAT 20, 4.60 / 7.36 / 8.41 ms on R-MAT 22;
    on small graphs its first call in a process costs a buffer query of about 1 ms)."""
    method = TRANSPOSE if method is None else method
    if method is None:
        method = "atomic"
        if num_edges > TRANSPOSE_LIBRARY_MIN_EDGES and rows < 2**31 and num_edges < 2**31 and xp is not np:
            try:
                import cupyx.scipy.sparse  # noqa: F401
                method = "cusparse"
            except ImportError:
                pass
    cols = cols[:num_edges].astype(np.int32, copy=False)
    if method == "cusparse":
        import cupyx.scipy.sparse as sp
        a = sp.csr_matrix((xp.ones(num_edges, dtype=np.float32), cols, offsets[: rows + 1].astype(np.int32)),
                          shape=(rows, rows))
        t = a.T.tocsr()
        return t.indptr.astype(np.int64), t.indices.astype(np.int32, copy=False)
    deg = xp.diff(offsets[: rows + 1])
    source = repeat_index(xp, deg, total=num_edges)
    indptr = offsets_of(xp, bincount(xp, cols, rows))
    if method == "sort":
        return indptr, source[xp.argsort(cols, kind="stable")].astype(np.int32)
    if method != "atomic":
        raise ValueError(f"transpose {method!r}: 'sort', 'atomic' or 'cusparse'")
    cursor = indptr[:-1].astype(np.uint64)
    indices = xp.empty(num_edges, dtype=np.int32)
    if num_edges:
        launcher(xp, "pr_transpose_fill", num_edges, (source, cols, i64(num_edges), cursor, indices))
    return indptr, indices


class FusedSweep:
    """The fused sweep over the scaled transpose of ``csr``'s first ``rows`` rows, in ``dtype``.

    ``values=False`` builds no per-edge values (:class:`GoogleSweep` scales per vertex); ``tpr``: lanes per
    row (None: the mean in-degree's power of two); ``transpose``: :func:`in_edges`' method."""

    def __init__(self, xp, csr, rows: int, damping: float, dtype=np.float64, values: bool = True,
                 tpr: int | None = None, transpose: str | None = None):
        self.xp = xp
        self.rows = int(rows)
        self.dtype = np.dtype(dtype)
        self.damping = float(damping)
        offsets = csr.offsets[: self.rows + 1]
        num_edges = int(offsets[-1]) if self.rows else 0
        self.num_edges = num_edges
        deg = xp.diff(offsets)
        self.scale = xp.where(deg > 0, damping / xp.maximum(deg, 1), 0.0)     # d / k, 0 without out-edges
        self.indptr, self.indices = in_edges(xp, offsets, csr.cols, self.rows, num_edges, transpose)
        self.val = self.scale[self.indices].astype(self.dtype) if values else None
        self.tpr = int(tpr) if tpr else threads_per_row(num_edges / max(self.rows, 1))
        self.heavy_min = HEAVY_LANES * self.tpr
        self.heavy = xp.flatnonzero(xp.diff(self.indptr) > self.heavy_min).astype(np.int64)   # once per graph
        self.ctl = xp.zeros(CTL, dtype=np.float64)
        self.reads = 0                                        # control-block reads (host transfers)
        suffix = "f32" if self.dtype == np.float32 else "f64"
        self.name, self.heavy_name = f"pr_sweep_{suffix}", f"pr_sweep_heavy_{suffix}"

    def product(self, x, out):
        """``out = d A^T D^-1 x`` over the rows, queued (no transfer; a scratch ``z``): the static run's first
        residual through the transpose built here, instead of a cuSPARSE product whose library import, handle
        and buffer query a fresh process pays on its first batch.  Leaves sums in ``ctl``, which
        :meth:`sweeps` resets."""
        self._enqueue(self.xp.zeros_like(x), x, out, finish=False)
        return out

    def _enqueue(self, z, r_in, r_out, finish: bool = True) -> None:
        """Queue one sweep and its finish (no transfer): they do nothing once ``ctl`` says done."""
        items = -(-self.rows * self.tpr // WARP) * WARP
        launcher(self.xp, self.name, min(items, SWEEP_THREADS),
                 (self.indptr, self.indices, self.val, r_in, z, r_out, self.ctl,
                  i64(self.rows), i32(self.tpr), i64(items), i64(self.heavy_min)))
        nheavy = int(self.heavy.shape[0])
        if nheavy:
            launcher(self.xp, self.heavy_name, min(nheavy, 4096) * 256,
                     (self.indptr, self.indices, self.val, r_in, z, r_out, self.ctl, self.heavy, i64(nheavy)))
        if finish:
            launcher(self.xp, "pr_sweep_finish", 1, (self.ctl,))

    def _set_ctl(self, total: float, residual: float, tol: float, limit: int) -> None:
        host = np.zeros(CTL, dtype=np.float64)
        host[[TOTAL, RESIDUAL, TOL, LIMIT]] = total, residual, tol, limit
        self.ctl[:] = self.xp.asarray(host)

    def __call__(self, z, r_in, r_out) -> tuple[float, float]:
        """``z += r_in; r_out = d A^T D^-1 r_in``; returns ``(sum |r_out|, sum r_out)`` (one transfer)."""
        self._set_ctl(0.0, 0.0, 0.0, 1)
        self._enqueue(z, r_in, r_out)
        ctl = self.ctl.tolist()
        self.reads += 1
        return float(ctl[RESIDUAL]), float(ctl[TOTAL])

    def sweeps(self, z, r, spare, residual: float, total: float, tol: float, limit: int):
        """Sweeps while ``R >= tol * S`` and fewer than ``limit`` rounds, as the one-sweep-per-transfer
        loop would: ``(rounds, R, S, r)`` with ``r`` the buffer (``r`` or ``spare``) holding the residual.

        The convergence test runs on the device (``pr_sweep_finish``), so the host queues a *chunk*
        of sweeps and reads the control block once per chunk; sweeps queued past convergence return
        at once.  The chunk is the number of sweeps the residual's decay so far predicts are left
        (plus one), so a run of ``k`` sweeps costs a few transfers instead of ``k``.
        """
        if limit <= 0 or not residual >= tol * total:
            return 0, residual, total, r
        self._set_ctl(total, residual, tol, limit)
        buffers = [r, spare]
        first = residual
        ctl = self._queued(lambda i: self._enqueue(z, buffers[i % 2], buffers[(i + 1) % 2]), limit,
                           lambda ctl: (first, ctl[RESIDUAL], int(ctl[ROUNDS]), tol * ctl[TOTAL]))
        rounds = int(ctl[ROUNDS])
        return rounds, float(ctl[RESIDUAL]), float(ctl[TOTAL]), buffers[rounds % 2]

    def _queued(self, queue, limit: int, decay, many=None, step: int = 1):
        """Queue sweeps (``queue(i)`` queues sweep ``i`` and its finish) in chunks until the control block says
        done or ``limit`` are queued, one read per chunk; the next chunk is :func:`_sweeps_left` of
        ``decay(ctl)`` = (first residual, residual now, sweeps between them, target).  Returns the last read.
        ``many(first, count)``: queues a chunk at once instead (chunks then whole multiples of ``step``: sweeps
        past the limit return at once, the finish stops at it on the device)."""
        queued, chunk = 0, 4
        while True:
            if many is not None:
                count = -(-chunk // step) * step
                many(queued, count)
                queued += count
            else:
                for _ in range(min(chunk, limit - queued)):
                    queue(queued)
                    queued += 1
            ctl = self.ctl.tolist()                            # the one transfer of the chunk
            self.reads += 1
            if ctl[DONE] or queued >= limit:
                return ctl
            chunk = _sweeps_left(*decay(ctl))


class GoogleSweep(FusedSweep):
    """Power iterations of the Google matrix as fused kernels (PageRank's ``_dense_sweeps`` on a GPU).

    A sweep is ``x'[v] = sum over in-edges (u -> v) of w[u] + spread`` at each live row (nothing at a dead
    slot), ``w = x * d / k`` (0 where ``k = 0``), ``spread = (d * sum of x over the live dangling rows + 1 - d) / n``:
    ``pr_google`` (``tpr`` lanes per row) and ``pr_google_heavy`` (a block per hub row) write ``x'`` and the next
    ``w`` and sum ``||x' - x||_1``, ``sum x'`` and the dangling sum of ``x'`` (per thread, warp, block: one atomic
    per block); ``pr_google_finish`` (one thread) turns them into the next spread and stops once
    ``||x' - x||_1 < tol`` (the array program's test) or at the limit.  Sweeps are queued in chunks with one
    host read per chunk (:meth:`FusedSweep._queued`).  An edge costs a 4-byte source id and a gather of ``w``
    (the damping and ``1 / k`` are per vertex), an SpMV's index, value and gather."""

    def __init__(self, xp, csr, rows: int, damping: float, live, tpr: int | None = None,
                 transpose: str | None = None):
        if not tpr:
            offsets = csr.offsets
            edges = int(offsets[min(int(rows), offsets.shape[0] - 1)]) if rows else 0
            tpr = min(threads_per_row(edges / max(int(rows), 1)), GOOGLE_LANES)
        super().__init__(xp, csr, rows, damping, np.float64, values=False, tpr=tpr, transpose=transpose)
        live = live[: self.rows]
        self.live = live.astype(np.uint8)
        self.dangling = (live & (self.scale == 0)).astype(np.float64)
        self.ctl = xp.zeros(G_CTL, dtype=np.float64)
        # sweeps replayed from a CUDA graph of SWEEP_GRAPH_ROUNDS sweeps, captured once per run, on graphs of at most
        # SWEEP_GRAPH_MAX_EDGES edges (where a sweep is launch-bound: its two or three launches cost the host
        # ~35 us, more than the device's sweep of a 228k-edge graph)
        self.use_graph = (self.num_edges <= SWEEP_GRAPH_MAX_EDGES and launcher is _launch
                          and hasattr(xp, "cuda"))
        self.graph_launches = 0
        self._graph = self._graph_for = None

    def _enqueue(self, x_in, w_in, x_out, w_out) -> None:
        """Queue one sweep ``x_in -> x_out`` and its finish (no transfer)."""
        items = -(-self.rows * self.tpr // WARP) * WARP
        args = (self.indptr, self.indices, w_in, x_in, x_out, w_out, self.scale, self.live, self.ctl)
        launcher(self.xp, "pr_google", min(items, SWEEP_THREADS),
                 (*args, i64(self.rows), i32(self.tpr), i64(items), i64(self.heavy_min)))
        nheavy = int(self.heavy.shape[0])
        if nheavy:
            launcher(self.xp, "pr_google_heavy", min(nheavy, 4096) * 256, (*args, self.heavy, i64(nheavy)))
        launcher(self.xp, "pr_google_finish", 1, (self.ctl,))

    def first_iterate(self, tol: float = 0.0):
        """``(1 - d) live + d A^T D^-1 live``, normalised: the array program's static start (the uniform vector's
        ``z + r`` after its exact first residual), one sweep of the kernel with the spread ``1 - d`` (no transfer).
        Three Google iterations fewer than from the uniform vector on R-MAT 20 (H100: 16 against 13 with it).
        ``tol`` > 0: where the uniform vector's own relative residual is below it (``||u - live||_1 < tol sum u``,
        the array program's check before its first sweep: a regular graph such as a cycle), the next :meth:`run`
        sweeps nothing and returns 0 rounds (decided on the device, no transfer)."""
        xp = self.xp
        x = self.live.astype(np.float64)
        out, w_out = xp.empty_like(x), xp.empty_like(x)
        host = np.zeros(G_CTL, dtype=np.float64)
        host[[TOL, LIMIT, G_DAMPING, G_LIVE, G_SPREAD, G_START]] = (0.0, 1.0, self.damping, 1.0, 1.0 - self.damping,
                                                                     -float(tol))
        self.ctl[:] = xp.asarray(host)
        self._enqueue(x, x * self.scale, out, w_out)
        out /= out.sum()                                      # a device scalar: no transfer
        return out

    def run(self, x, n: int, tol: float, limit: int):
        """Sweeps from ``x`` (over the rows; 0 at dead slots, summing to 1; overwritten) until
        ``||x' - x||_1 < tol`` or ``limit`` sweeps: ``(rounds, x, x', ctl)`` with ``x`` the last sweep's input,
        ``x'`` its output and ``ctl`` the control block as read last (``ctl[G_USED]``: that sweep's spread)."""
        xp, d = self.xp, self.damping
        if limit <= 0 or self.rows == 0 or n <= 0:
            return 0, x, x, None
        host = np.zeros(G_START, dtype=np.float64)
        host[[TOL, LIMIT, G_DAMPING, G_LIVE]] = tol, limit, d, n
        self.ctl[:G_START] = xp.asarray(host)                # G_START as first_iterate left it (0 on a new sweep)
        self.ctl[G_SPREAD] = (d * xp.dot(x, self.dangling) + (1.0 - d)) / n         # on the device
        xs, ws = [x, xp.empty_like(x)], [x * self.scale, xp.empty_like(x)]
        one = lambda i: self._enqueue(xs[i % 2], ws[i % 2], xs[(i + 1) % 2], ws[(i + 1) % 2])
        many = None
        if self.use_graph:
            many = lambda first, count: self._graph_sweeps(xs, ws, one, first, count)
        ctl = self._queued(one, limit, lambda ctl: (ctl[G_FIRST], ctl[RESIDUAL], int(ctl[ROUNDS]) - 1, tol),
                           many, SWEEP_GRAPH_ROUNDS)
        rounds = int(ctl[ROUNDS])
        if rounds == 0:                                      # the start was within tol (first_iterate): no sweep
            self.ctl[G_START] = 0.0
            return 0, x, x, ctl
        return rounds, xs[(rounds - 1) % 2], xs[rounds % 2], ctl

    def _graph_sweeps(self, xs, ws, one, first: int, count: int) -> None:
        """Queue sweeps ``first .. first + count - 1`` (sweep ``i`` reads ``xs[i % 2]``): whole graphs of
        SWEEP_GRAPH_ROUNDS sweeps (from an even sweep), captured at the first call, the rest one by one.  Each
        replay counts its kernels as launches."""
        done = 0
        if first % 2:
            one(first)
            done = 1
        key = tuple(a.data.ptr for a in (*xs, *ws))       # the buffers the graph's sweeps were captured with
        graph = self._graph if self._graph_for == key else None
        if graph is None and self.use_graph and count - done >= SWEEP_GRAPH_ROUNDS:
            graph, self._graph_for = self._capture(one), key
            self._graph = graph
        if graph is not None:
            stream = self.xp.cuda.get_current_stream()
            names = ("pr_google", "pr_google_heavy", "pr_google_finish") if self.heavy.shape[0] else (
                "pr_google", "pr_google_finish")
            while count - done >= SWEEP_GRAPH_ROUNDS:
                graph.launch(stream)
                for _ in range(SWEEP_GRAPH_ROUNDS):
                    for name in names:
                        count_launch(name)
                self.graph_launches += 1
                done += SWEEP_GRAPH_ROUNDS
        for i in range(done, count):
            one(first + i)

    def _capture(self, one):
        """SWEEP_GRAPH_ROUNDS sweeps (``one(0)``, ``one(1)``, ...) captured as a CUDA graph (None where CuPy or the
        driver cannot: the sweeps are then launched one by one)."""
        graph = capture_graph(self.xp, ("pr_google", "pr_google_heavy", "pr_google_finish"), SWEEP_GRAPH_ROUNDS, one)
        if graph is None:
            self.use_graph = False
        return graph


def capture_graph(xp, kernels, rounds: int, enqueue):
    """``enqueue(0)``, ..., ``enqueue(rounds - 1)`` captured as one CUDA graph on a stream of its own, the
    ``kernels`` (names) compiled and loaded first (a module load cannot be captured); None where CuPy or the
    driver cannot capture (the caller then launches the rounds one by one)."""
    try:
        for name in kernels:
            _kernels._function(xp, name)
        stream = xp.cuda.Stream(non_blocking=True)
        stream.begin_capture()
        try:
            with stream:
                for i in range(rounds):
                    enqueue(i)
        finally:
            graph = stream.end_capture()
        return graph
    except Exception:
        return None


# GoogleSweep's sweeps per CUDA graph (even: the sweeps alternate two buffers) and the largest graph (edges) whose
# sweeps are replayed from one (launch-bound there; R-MAT 20 and above sweep as before)
SWEEP_GRAPH_ROUNDS = 4
SWEEP_GRAPH_MAX_EDGES = 1 << 21

# the control block's slots (PR_* in SOURCE)
DONE, ROUNDS, TOTAL, RESIDUAL, TOL, LIMIT, SUM_ABS, SUM, CTL = range(9)
# the Google sweep's further slots (PG_* in SOURCE)
G_DANG, G_SPREAD, G_USED, G_DAMPING, G_LIVE, G_FIRST, G_START, G_CTL = range(8, 16)


def _sweeps_left(first: float, now: float, rounds: int, target: float) -> int:
    """Sweeps still needed if the residual keeps decaying at its mean rate so far (plus one), in [2, 64]."""
    if not (0 < now < first) or rounds <= 0 or target <= 0:
        return 4
    rate = (now / first) ** (1.0 / rounds)
    return int(min(max(math.ceil(math.log(target / now) / math.log(rate)) + 1, 2), 64))


# out-edges per push entry, in lanes: a chunk is PUSH_CHUNK_LANES * tpr edges
PUSH_CHUNK_LANES = 8
# lanes per push entry, at most (the mean out-degree's power of two decides below it): on an H100, R-MAT 20
# and 22, 16 lanes (the mean's) pushed 1.17-1.22x faster than 4 at every batch size (bench-results/
# 2026-11-25-prgpu, call 2: 0.01 % batches 3.1 against 3.7 ms of pushes on R-MAT 20)
PUSH_LANES = 32
# rows per thread of a select tile (PR_SELECT_ROWS in SOURCE): one queue reservation per block and tile.  The
# select alone (bench-results/2026-11-26-princ2 call 1, H200, a third of the rows queued, R-MAT 20 / 22 degrees):
# 4 rows 36.0 / 93.7 us, 4 rows with eager loads (PR_SELECT_EAGER) 30.3 / 67.7, 2 rows eager 28.9 / 67.2,
# 1 row eager 31.7 / 73.4; a grid cap of 2**20 threads instead of FRONTIER_THREADS was slower at every width
SELECT_ROWS = 2
# push rounds queued between two reads of the control block, at most
PUSH_CHUNK_ROUNDS = 12
# threads of a FusedPush round's push kernel, at most (as FRONTIER_THREADS; 2**19 with two entries a thread:
# 1.507 / 4.459 ms at 0.01 % on R-MAT 20 / 22, call 2, against 1.463 / 4.893 at 2**18 in a run of its own)
PUSH_THREADS = 1 << 18
# FusedPush's rounds per CUDA graph (even: the rounds alternate the two queue counters), and the largest graph
# (edges) on which they are replayed from one by default (where a round is launch-bound)
PUSH_GRAPH_ROUNDS = 8
PUSH_GRAPH_MAX_EDGES = 1 << 21
# the first chunk of rounds from a kept graph, at most (rounded up to whole graphs): the last update's selects.  The
# replay's updates took 32-53 rounds (the kernels' host emulation); a round queued past the stop costs two kernels that
# return at once, a second chunk a host read and the device idle meanwhile
PUSH_GRAPH_FIRST_MAX = 64
# the binding's size (PB_SIZE in SOURCE)
PB_SIZE = 4


def _address(a) -> int:
    """A contiguous array's data address (a device pointer for CuPy, a host one for NumPy: the emulation)."""
    return int(a.data.ptr) if hasattr(a.data, "ptr") else int(a.ctypes.data)

# the push's control block's slots (PP_* in SOURCE)
(P_DONE, P_ROUNDS, P_TOTAL, P_RESIDUAL, P_GOAL, P_LIMIT, P_SUM_ABS, P_SPREAD, P_THETA, P_SCALE, P_EDGES,
 P_PUSHES, P_SELECTS, P_DAMPING, P_OMEGA, P_RMIN, P_FIRST, P_CORR_EDGES, P_FORM, P_SHIFT, P_ZSUM, P_ZDANG, P_DZSUM,
 P_DZDANG, P_SIGNED, P_LIVE, P_ZTOTAL, P_KAPPA, P_BLOCKS, P_CTL) = range(30)


def _push_entries(push, xp, offsets, cols, rows: int, damping: float, num_edges: int, lanes, reuse=None,
                  double: bool = False) -> None:
    """What both push forms (:class:`FusedPush`, :class:`FrontierPush`) keep: the out-CSR's first ``rows``
    rows, the lanes per entry (the mean out-degree's power of two, at most PUSH_LANES or ``lanes``), the
    chunk of out-edges per entry, a round's entries (at most ``rows + num_edges / chunk``), the reads.
    ``double``: new entry buffers get twice the room needed (FusedPush with a kept CUDA graph, which a new
    buffer invalidates: a growing graph then reallocates them O(log E) times, not every few batches)."""
    push.xp = xp
    push.rows = int(rows)
    push.damping = float(damping)
    push.offsets = offsets[: push.rows + 1].astype(np.int64, copy=False)
    push.cols = cols.astype(np.int32, copy=False)
    push.num_edges = int(num_edges)
    push.tpr = max(1, min(int(lanes or PUSH_LANES), threads_per_row(push.num_edges / max(push.rows, 1))))
    push.chunk = PUSH_CHUNK_LANES * push.tpr
    cap = push.rows + push.num_edges // push.chunk + 1
    if reuse is not None and getattr(reuse, "xp", None) is xp and reuse.ent_v.shape[0] >= cap:
        # a previous push's entry buffers (an update's three allocations fewer; they hold nothing between runs)
        push.ent_v, push.ent_start, push.ent_val = reuse.ent_v, reuse.ent_start, reuse.ent_val
    else:
        cap += cap if double else cap // 16          # room for the next batches' growth
        push.ent_v = xp.empty(cap, dtype=np.int32)
        push.ent_start = xp.empty(cap, dtype=np.int32)
        push.ent_val = xp.empty(cap, dtype=np.float64)
    push.reads = 0


class FusedPush:
    """Pruned pushes of an incremental update on the out-CSR ``csr`` (rows ``[0, rows)``), in place.

    A *round* is two kernels (``pr_push_select``, whose last block runs the check ``pr_push_check_at``, then
    ``pr_push``; ``pr_push_init`` sets the control block once per run): the select sums ``R = sum |r|`` over the
    rows and queues the
    vertices with ``|r[v]| > theta * max(k[v], 1)`` with the value ``omega * r[v]`` to push (``run``'s
    ``omega``: over-relaxation above 1; ``pr_push_check`` sets it back to 1 once ``R`` exceeds twice its
    least value), a vertex of at most PR_PUSH_SMALL out-edges as one *small* entry that one thread pushes (from
    the top of the entry buffers; ``qn[2 p + 1]``), any other one entry per ``chunk`` of out-edges (a hub's edges
    spread over many lanes: with a warp per vertex, a hub of 66k out-edges on R-MAT 20 took one warp
    thousands of dependent steps and held each round for about 0.7 ms on an H100); ``pr_push_check``
    stops once ``R <= goal * S`` and otherwise sets the next threshold ``theta = scale * R``;
    ``pr_push`` pushes the entries (the selected residual out of ``r[v]`` into ``z[v]``, ``d r / k`` to
    each out-neighbour by atomics).  Nothing is read back
    per round: rounds are queued in chunks and the control block is read once per chunk, as
    :meth:`FusedSweep.sweeps` does; past the first chunk, on graphs of at most
    ``PUSH_GRAPH_MAX_EDGES`` edges (``graph``), the chunks are replays of a CUDA graph of
    ``PUSH_GRAPH_ROUNDS`` rounds captured once per update (the same kernels and arguments: an
    update of a 228k-edge graph ran about 86 rounds, 258 launches, that the host issued one by one).
    ``R`` is exact at every check (a fresh sum); ``S`` follows from
    the pushes (``+ d r[v]`` per pushed vertex with out-edges).  The pushes of a round run at once and
    in place (a vertex pushed late in a round passes on what reached it earlier in the same round), so
    the result depends on the threads' order within the tolerance, not beyond: the tests compare it with
    the array program (:meth:`algorithms.pagerank.PageRank._push_rounds` and dense sweeps) through the
    error bound, which holds for any order because ``R`` is summed afresh at every check.

    ``form="google"`` (PageRank's GPU default; :mod:`algorithms.pagerank`, "The Google form of the pushes"): the
    select takes ``r + c`` at the live rows (``live``), ``c`` the uniform shift that makes it the Google matrix's
    residual of ``z``, followed on the device from ``T = sum z`` and its dangling part (``pr_gpush_sums`` at the
    start, the pushed values after); the stop is ``sum |r + c| <= goal * (T + sum(r + c))``, and
    ``pr_gpush_finish`` leaves the exact push state of ``z / (1 + c)``.  ``kappa`` > 0 (``run``): the threshold is
    ``theta * (k + kappa)``.
    """

    def __init__(self, xp, offsets, cols, rows: int, damping: float, num_edges: int, lanes: int | None = None,
                 graph: bool | None = None, live=None, form: str = "residual", reuse=None):
        graph_ok = (int(num_edges) <= PUSH_GRAPH_MAX_EDGES) if graph is None else bool(graph)
        _push_entries(self, xp, offsets, cols, rows, damping, num_edges, lanes, reuse, double=graph_ok)
        if form not in ("residual", "google"):
            raise ValueError(f"push form {form!r}: 'residual' or 'google'")
        if form == "google" and live is None:
            raise ValueError("the Google form needs the live mask")
        self.form = form
        # the live rows as bytes (the Google form's shift applies at live rows only; the residual form reads none)
        self.live = (live[: self.rows].view(np.uint8) if live is not None and live.dtype == np.bool_
                     else live[: self.rows] if live is not None else xp.ones(max(self.rows, 1), dtype=np.uint8))
        # both set by pr_push_init (``reuse``: a previous FusedPush whose buffers this one takes; its run is over)
        reuse = reuse if isinstance(reuse, FusedPush) and reuse.xp is xp else None
        # the queue counters: [2 p] chunk entries and [2 p + 1] small entries (PR_PUSH_SMALL) of parity p
        self.qn = reuse.qn if reuse is not None else xp.empty(4, dtype=np.int32)
        self.ctl = reuse.ctl if reuse is not None else xp.empty(P_CTL, dtype=np.float64)
        # the binding (PB_* in SOURCE: the offsets' and columns' addresses and the rows, set by pr_push_init), which
        # the select and the push read instead of arguments
        self.bind = reuse.bind if reuse is not None else xp.zeros(PB_SIZE, dtype=np.int64)
        self.first_chunk = 0
        # rounds replayed from a CUDA graph of PUSH_GRAPH_ROUNDS rounds: on small graphs a round's launches cost the
        # host ~25 us against a few us of device time (None: on graphs of at most PUSH_GRAPH_MAX_EDGES edges)
        self.use_graph = graph_ok and not (reuse is not None and reuse.graph_failed)
        self.graph_failed = False
        # the graph is kept from update to update (``reuse``): its rounds read the CSR and the rows through the
        # binding, and its other arguments are buffers kept between updates, so it stays valid while they do
        self._graph = reuse._graph if reuse is not None else None
        self._graph_for = reuse._graph_for if reuse is not None else None   # what it was captured with (_graph_key)
        # the launches' threads from the rows and edges rounded up to powers of two (grid-stride loops: any grid
        # covers the work), so that a growing graph keeps its captured rounds
        self.select_threads = min(-(-pow2_at_least(self.rows) // (BLOCK * SELECT_ROWS)) * BLOCK, FRONTIER_THREADS)
        self.push_threads = min(-(-pow2_at_least(self.rows + self.num_edges // self.chunk) * self.tpr // WARP) * WARP,
                                PUSH_THREADS)
        self.graph_used = False
        self.graph_launches = 0
        self.captures = 0                       # graphs captured by this run (0 where the kept one replayed)
        self.prepared = False                   # pr_push_init already launched (prepare)
        self.sums_done = False                  # T, D and n already summed (by the corrections' edge pass)

    def prepare(self, total: float, residual: float, goal: float, scale: float, limit: int, omega: float = 1.0,
                kappa: float = 0.0) -> None:
        """Launch ``pr_push_init`` ahead of the corrections (``run``'s arguments of the same names), so that
        :func:`fused_corrections` can sum the Google form's ``T``, ``D`` and ``n`` into the control block."""
        f64 = np.float64
        launcher(self.xp, "pr_push_init", 1, (self.ctl, self.qn, f64(total), f64(residual), f64(goal), f64(limit),
                                              f64(scale), f64(self.damping), f64(omega),
                                              f64(1.0 if self.form == "google" else 0.0), f64(max(float(kappa), 0.0)),
                                              self.bind, i64(_address(self.offsets)), i64(_address(self.cols)),
                                              i64(self.rows)))
        self.prepared = True

    def _no_acc(self):
        """Zero corrections for pr_push_start (the Google form starts through it even without any)."""
        return self.xp.zeros(3, dtype=np.float64)

    def _enqueue(self, z, r, parity: int) -> None:
        """Queue one round (parity ``parity``): the select (its last block checks), then the push; the offsets,
        the columns and the rows come from the binding (``pr_push_init``)."""
        xp = self.xp
        qn = self.qn[2 * parity:]
        cap = i64(self.ent_v.shape[0])            # small entries fill the buffers from the top
        launcher(xp, "pr_push_select", self.select_threads,
                 (r, self.bind, self.ctl, self.ent_v, self.ent_start, self.ent_val, qn, i32(self.chunk), self.live,
                  self.qn, i32(parity), cap))
        launcher(xp, "pr_push", self.push_threads,
                 (self.bind, z, r, self.ctl, self.ent_v, self.ent_start, self.ent_val, qn, i32(self.tpr),
                  i32(self.chunk), cap))

    def _graph_key(self, z, r) -> tuple:
        """What a captured graph of rounds holds (:meth:`_enqueue`'s arguments): it replays while these stay."""
        return (z.data.ptr, r.data.ptr, self.live.data.ptr, self.ent_v.data.ptr, self.ent_start.data.ptr,
                self.ent_val.data.ptr, self.ctl.data.ptr, self.qn.data.ptr, self.bind.data.ptr, self.chunk, self.tpr,
                int(self.ent_v.shape[0]), self.select_threads, self.push_threads)

    def _rounds(self, z, r, first: int, count: int, graph: bool = True) -> None:
        """Queue rounds ``first .. first + count - 1`` (round ``i`` uses queue parity ``i % 2``): with ``graph``,
        from the captured graph where it is on and a whole graph fits (it starts at parity 0), the rest one
        launch at a time.  Each graph replay counts its kernels as launches."""
        done = 0
        if graph and self.use_graph and count >= PUSH_GRAPH_ROUNDS and launcher is _launch and hasattr(self.xp, "cuda"):
            if first % 2:
                self._enqueue(z, r, 1)
                done = 1
            key = self._graph_key(z, r)
            if self._graph is None or self._graph_for != key:
                self._graph, self._graph_for = self._capture(z, r), key
                self.captures += 1
            if self._graph is not None:
                stream = self.xp.cuda.get_current_stream()      # ordered with the corrections and the reads
                while count - done >= PUSH_GRAPH_ROUNDS:
                    try:
                        self._graph.launch(stream)
                    except TypeError:                   # an old CuPy: graphs replay on their capture stream only
                        self._graph = None
                        self.use_graph = False
                        self.graph_failed = True
                        break
                    for _ in range(PUSH_GRAPH_ROUNDS):
                        for name in ("pr_push_select", "pr_push"):
                            count_launch(name)
                    self.graph_launches += 1
                    self.graph_used = True
                    done += PUSH_GRAPH_ROUNDS
        for i in range(done, count):
            self._enqueue(z, r, (first + i) % 2)

    def _capture(self, z, r):
        """PUSH_GRAPH_ROUNDS rounds (parities 0, 1, 0, ...) captured as a CUDA graph (None where CuPy or the
        driver cannot capture: the rounds are then launched one by one)."""
        graph = capture_graph(self.xp, ("pr_push_select", "pr_push"), PUSH_GRAPH_ROUNDS,
                              lambda i: self._enqueue(z, r, i % 2))
        if graph is None:
            self.use_graph = False
            self.graph_failed = True
        return graph

    def run(self, z, r, residual: float, total: float, goal: float, scale: float, limit: int, omega: float = 1.0,
            acc=None, kappa: float = 0.0, first_chunk: int = 8):
        """Rounds until ``R <= goal * S`` (or ``limit`` rounds); ``(rounds, R, S, edges, pushes, selects)``.

        ``acc``: the corrections' device sums (:func:`fused_corrections`), not yet in ``residual`` and ``total``:
        ``pr_push_start`` adds them on the device, so the host reads nothing between the corrections and the
        first chunk of rounds (their edges land in :attr:`corr_edges`)."""
        self.corr_edges = 0
        self.exact = True                      # R and S as returned are those of the arrays (see the Google form)
        google = self.form == "google"
        if self.rows == 0 or limit <= 0 or (acc is None and not google and not residual > goal * total):
            if acc is not None:
                d_abs, d_sum, edges = acc.tolist()
                residual, total, self.corr_edges = residual + d_abs, total + d_sum, int(edges)
            return 0, residual, total, 0, 0, 0
        if not self.prepared:                    # else launched before the corrections, the same arguments
            self.prepare(total, residual, goal, scale, limit, omega, kappa)
        if google and not self.sums_done:        # T, D and n of the z the pushes start from
            launcher(self.xp, "pr_gpush_sums", min(-(-self.rows // BLOCK) * BLOCK, SWEEP_THREADS),
                     (z, self.offsets, self.live, i64(self.rows), self.ctl))
        if acc is not None or google:
            launcher(self.xp, "pr_push_start", 1, (self.ctl, acc if acc is not None else self._no_acc()))
        # the first chunk: the caller's guess of the rounds (its last update's selects): one read where it holds
        queued, chunk, first = 0, max(2, min(int(first_chunk), 2 * PUSH_CHUNK_ROUNDS)), None
        graphs = self.use_graph and launcher is _launch and hasattr(self.xp, "cuda")
        if graphs:
            # whole graphs from the first round on: the graph is kept from update to update, so a replay costs the
            # host one launch, and a round queued past the stop a few us of device time (it returns at once)
            chunk = -(-min(int(first_chunk), PUSH_GRAPH_FIRST_MAX) // PUSH_GRAPH_ROUNDS) * PUSH_GRAPH_ROUNDS
        elif self.use_graph:
            chunk += chunk % 2                   # even: the next chunk starts a captured graph (parity 0 first)
        self.first_chunk = chunk
        most = 4 * limit + 64                    # selects, stalls (an empty queue) included
        while True:
            self._rounds(z, r, queued, chunk, graph=queued > 0 or graphs)
            queued += chunk
            ctl = self.ctl.tolist()               # the one transfer of the chunk
            self.reads += 1
            rounds, residual, first = int(ctl[P_ROUNDS]), float(ctl[P_RESIDUAL]), float(ctl[P_FIRST])
            self.corr_edges = int(ctl[P_CORR_EDGES])
            if ctl[P_DONE] or queued >= most:
                total = float(ctl[P_TOTAL])
                if google and ctl[P_FORM] and not ctl[P_PUSHES] and ctl[P_FIRST] <= goal * ctl[P_ZTOTAL]:
                    # nothing pushed and the push state already within the goal: z stays as it is
                    residual, total = float(ctl[P_FIRST]), float(ctl[P_ZTOTAL])
                elif google and ctl[P_FORM]:
                    # the exact push state of z / (1 + c) (queued, no read): R / S unchanged; past the last check
                    # (out of queued rounds, not done) the check's sums are stale and the caller resyncs
                    launcher(self.xp, "pr_gpush_finish", min(-(-self.rows // BLOCK) * BLOCK, SWEEP_THREADS),
                             (z, r, self.live, i64(self.rows), self.ctl))
                    scale_back = 1.0 / (1.0 + float(ctl[P_SHIFT]))
                    residual, total = residual * scale_back, total * scale_back
                    self.exact = bool(ctl[P_DONE])
                return (rounds, residual, total, int(ctl[P_EDGES]), int(ctl[P_PUSHES]), int(ctl[P_SELECTS]))
            # a round queued past the stop costs three launches that return at once: chunks of at most
            # PUSH_CHUNK_ROUNDS keep that waste small, at a few more reads; replayed from a graph, a round
            # costs the host nothing and the device a few us, so chunks are whole graphs (the first chunk's
            # rounds are launched one by one: an update done in them captures nothing)
            chunk = min(_sweeps_left(first, residual, int(ctl[P_SELECTS]), goal * float(ctl[P_TOTAL])),
                        PUSH_CHUNK_ROUNDS, most - queued)
            if self.use_graph:
                chunk = min(-(-chunk // PUSH_GRAPH_ROUNDS) * PUSH_GRAPH_ROUNDS, most - queued)


# frontier pushes (FrontierPush): a new level's threshold is at most FRONTIER_SCALE * R / (E + n), and a level's
# threshold is divided by FRONTIER_STEP when its queue dies out
FRONTIER_SCALE = 1.0
FRONTIER_STEP = 2.0
# threads of a frontier round's kernels, at most: about one wave on an H100 (132 SMs of 2048 threads), so a
# round with a short queue costs one wave of blocks that return at once (the host does not know its length)
FRONTIER_THREADS = 1 << 18
# rounds captured in one CUDA graph (FrontierPush.graph): a round is three launches whatever its size, so small
# rounds are bound by the host's launches unless they are replayed from a graph
GRAPH_ROUNDS = 4

# the frontier push's control block's slots (FP_* in SOURCE)
(F_DONE, F_ROUNDS, F_TOTAL, F_RESIDUAL, F_GOAL, F_LIMIT, F_DABS, F_SPREAD, F_THETA, F_SCALE, F_EDGES, F_PUSHES,
 F_SCANS, F_DAMPING, F_SCAN, F_STEP, F_PARITY, F_TRACE, F_TAIL, F_LEVEL_MAX, F_CTL) = range(21)
TRACE_COLS = 8


class FrontierPush:
    """Pruned pushes of an incremental update in threshold levels, on the out-CSR's first ``rows`` rows, in place.

    A *round* is three kernels: ``fp_take`` takes the vertices of the current queue that are still above the
    level's threshold ``theta * max(k, 1)`` (or, on a new level, scans every row for them), moves each one's
    residual, as read then, into ``z`` and queues one entry per chunk of its out-edges (a hub's edges spread over
    many lanes, as in :class:`FusedPush`); ``fp_push`` adds ``d r / k`` to the out-neighbours by atomics, and a
    neighbour now above the threshold joins the next queue (once: a flag per vertex); ``fp_check`` follows ``R``
    (from the atomics' returned values) and ``S``, stops once ``R <= goal * S``, and when the next queue is empty
    (no vertex is above the threshold) starts a new level: ``theta = min(theta / step, scale * R)`` and a scan.
    So a round costs its queue and its edges, not a pass over the rows; the rows are read once per level.

    Nothing is read back per round: rounds are queued in chunks (replayed from a CUDA graph where CuPy can
    capture one: ``graph``), and the control block is read once per chunk.  At the stop the residual is summed
    exactly over the rows (``fp_rsum``), and if the followed ``R`` had drifted above the goal the rounds go on,
    so ``R <= goal * S`` holds for ``R`` as summed from the array.
    """

    def __init__(self, xp, offsets, cols, k, rows: int, damping: float, num_edges: int, lanes: int | None = None,
                 graph: bool | None = None, trace: bool = False):
        _push_entries(self, xp, offsets, cols, rows, damping, num_edges, lanes)
        self.k = k
        self.flag = xp.zeros(max(self.rows, 1), dtype=np.int32)
        self.q = xp.empty(2 * max(self.rows, 1), dtype=np.int32)
        self.qn = xp.zeros(3, dtype=np.int32)
        self.ctl = xp.zeros(F_CTL, dtype=np.float64)
        self.exact = xp.zeros(3, dtype=np.float64)
        self.trace_on = bool(trace)
        self.trace = xp.zeros(1, dtype=np.float64)
        self.use_graph = (not trace) if graph is None else bool(graph)
        # tracing on CuPy: an event after every round (round times; rounds launched one by one)
        self.events = [] if trace and hasattr(xp, "cuda") else None
        if self.events is not None:
            self.use_graph = False
        self._graph = None
        self.graph_used = False

    def _round(self, z, r) -> None:
        xp, rows = self.xp, self.rows
        take_threads = min(-(-rows // BLOCK) * BLOCK, FRONTIER_THREADS)
        launcher(xp, "fp_take", take_threads, (r, z, self.k, self.ctl, self.flag, self.q, self.qn, self.ent_v,
                                               self.ent_start, self.ent_val, i64(rows), i32(self.chunk)))
        push_threads = min(-(-(rows + self.num_edges // self.chunk) * self.tpr // WARP) * WARP, FRONTIER_THREADS)
        launcher(xp, "fp_push", push_threads, (self.offsets, self.cols, self.k, r, self.ctl, self.flag, self.q,
                                               self.qn, self.ent_v, self.ent_start, self.ent_val, i64(rows),
                                               i32(self.tpr), i32(self.chunk)))
        launcher(xp, "fp_check", 1, (self.ctl, self.qn, self.trace))

    def _rounds(self, z, r, count: int) -> None:
        """Queue ``count`` rounds: from a captured CUDA graph of GRAPH_ROUNDS rounds where possible."""
        if self.use_graph and self._graph is None:
            self._graph = self._capture(z, r)
            self.graph_used = self._graph is not None
        done = 0
        if self._graph is not None:
            stream = self.xp.cuda.get_current_stream()      # ordered with the corrections and the reads
            while count - done >= GRAPH_ROUNDS:
                try:
                    self._graph.launch(stream)
                except TypeError:                   # an old CuPy: graphs replay on their capture stream only
                    self._graph = None
                    self.graph_used = False
                    break
                done += GRAPH_ROUNDS
        for _ in range(count - done):
            self._round(z, r)
            if self.events is not None:
                self.events.append(self.xp.cuda.Event())
                self.events[-1].record()

    def _capture(self, z, r):
        """GRAPH_ROUNDS rounds captured as a CUDA graph (None where CuPy or the driver cannot capture)."""
        xp = self.xp
        if launcher is not _launch or not hasattr(xp, "cuda"):
            return None
        # None where no capture: the rounds are then launched one by one
        return capture_graph(xp, ("fp_take", "fp_push", "fp_check"), GRAPH_ROUNDS, lambda _: self._round(z, r))

    def run(self, z, r, residual: float, total: float, goal: float, scale: float, step: float, limit: int,
            tail: float = 0.0):
        """Rounds until ``R <= goal * S`` (or ``limit`` rounds); ``(rounds, R, S, edges, pushes, scans)``, ``R``
        summed exactly from ``r``."""
        xp = self.xp
        if self.rows == 0 or limit <= 0 or not residual > goal * total:
            return 0, residual, total, 0, 0, 0
        if self.trace_on:
            self.trace = xp.zeros((limit + 1) * TRACE_COLS, dtype=np.float64)
        host = np.zeros(F_CTL, dtype=np.float64)
        host[[F_TOTAL, F_RESIDUAL, F_GOAL, F_LIMIT, F_THETA, F_SCALE, F_DAMPING, F_SCAN, F_STEP, F_TRACE,
              F_TAIL]] = (total, residual, goal, limit, scale * residual, scale, self.damping, 1.0,
                          max(float(step), 1.0 + 1e-9), 1.0 if self.trace_on else 0.0, min(float(tail), 0.5))
        self.ctl[:] = xp.asarray(host)
        self.qn[:] = 0
        queued, chunk, first = 0, 8, residual
        while True:
            self._rounds(z, r, chunk)
            queued += chunk
            ctl = self.ctl.tolist()                   # the one transfer of the chunk
            self.reads += 1
            rounds, residual, total = int(ctl[F_ROUNDS]), float(ctl[F_RESIDUAL]), float(ctl[F_TOTAL])
            if ctl[F_DONE]:
                self.exact[:] = 0.0
                launcher(xp, "fp_rsum", min(-(-self.rows // WARP) * WARP, SWEEP_THREADS),
                         (r, i64(self.rows), self.exact))
                exact = float(self.exact[0])
                self.reads += 1
                if exact <= goal * total or rounds >= limit:
                    self.flag[:] = 0              # queued vertices of the last round (not taken)
                    self.qn[:] = 0
                    return (rounds, exact, total, int(ctl[F_EDGES]), int(ctl[F_PUSHES]), int(ctl[F_SCANS]))
                # the followed R drifted above the goal: go on from the exact sum, on a new level
                host = np.asarray(ctl, dtype=np.float64)
                host[[F_DONE, F_RESIDUAL, F_SCAN, F_DABS, F_SPREAD]] = 0.0, exact, 1.0, 0.0, 0.0
                self.flag[:] = 0
                self.qn[:] = 0
                self.ctl[:] = xp.asarray(host)
                residual = exact
            chunk = min(_sweeps_left(first, residual, max(rounds, 1), goal * total), 2 * PUSH_CHUNK_ROUNDS)

    def trace_rows(self):
        """The per-round trace (``trace=True``): rows of (scan, queue taken, entries, next queue, edges so far,
        pushes so far, theta, R after the round)."""
        rounds = int(self.ctl[F_ROUNDS])
        return self.trace[: rounds * TRACE_COLS].reshape(rounds, TRACE_COLS)


def fused_corrections(xp, owner, epoch: int, offsets, cols, z, r, flags, damping: float, ins_s, ins_d, del_s, del_d,
                      removed, added, k, push=None):
    """An update's exact residual corrections (``PageRank.update`` step 1, the array program's) in a few
    kernels and no transfer: per changed source its inserted and deleted edges (counted by atomics), its old and
    new shares, the resets of removed and added slots, then one pass over the edges (the new rows in chunks, the
    deleted and the inserted edges) with each target's whole change.  The batch's sources are its entries in
    order (inserted then deleted edges' sources, repeats kept: no concatenation, sort or compaction): a source's
    last entry owns it, found through ``owner`` (uint64 over the slots, a scratch the caller keeps; stamped
    ``epoch << 32 | entry`` by ``pr_corr_owner``, so ``epoch`` must grow by one per call and stamps of earlier
    calls need no clearing).  ``flags`` (uint8): bit 0 at this batch's removed slots, bit 1 at its added ones;
    the batch arrays int32, as the delta holds them.  Returns ``(acc, k_new)``: ``acc`` on the device, the
    changes of ``R`` and ``S`` and the edges read (new rows once, deleted and inserted edges once), and each
    entry's source's new out-degree, also written into the out-degrees ``k`` (int64, over the slots) at each
    source (by its owner entry; the caller zeroes the removed slots' first).  ``push``: a Google-form
    :class:`FusedPush` whose control block :meth:`FusedPush.prepare` has set: the edge pass also sums its ``T``,
    ``D`` and ``n`` (``push.sums_done`` then set; ``offsets`` must cover its rows)."""
    n_ins, n_del = int(ins_s.shape[0]), int(del_s.shape[0])
    n_src = n_ins + n_del
    # one zeroed buffer: the sums (acc, doubles: zero bits are 0.0), the chunk count and the per-entry counts
    zeroed = xp.zeros(4 + 2 * n_src, dtype=np.uint64)
    acc = zeroed[:3].view(np.float64)
    n_chunks = zeroed[3:4]
    k_new = xp.empty(n_src, dtype=np.int64)                  # pr_corr_sources writes every entry
    if n_src:
        old_share = xp.empty(n_src, dtype=np.float64)        # written at owner entries only (the only ones read)
        new_share = xp.empty(n_src, dtype=np.float64)
        counts = zeroed[4:]
        # the chunks of the distinct sources' new rows: their edges (all in ``cols``) / CORR_CHUNK, plus one each
        chunk_list = xp.empty(n_src + int(cols.shape[0]) // CORR_CHUNK + 1, dtype=np.uint64)
        par = _device_scalar(xp, damping)
        launcher(xp, "pr_corr_owner", n_src, (ins_s, i64(n_ins), del_s, i64(n_del), owner, i64(epoch)))
        launcher(xp, "pr_corr_count", n_src, (owner, ins_s, i64(n_ins), del_s, i64(n_del), counts[:n_src],
                                              counts[n_src:]))
        launcher(xp, "pr_corr_sources", n_src, (ins_s, i64(n_ins), del_s, i64(n_src), owner, offsets, z,
                                                counts[:n_src], counts[n_src:], flags, par, old_share, new_share,
                                                k_new, n_chunks, chunk_list, i64(CORR_CHUNK), k))
    if removed.shape[0]:
        launcher(xp, "pr_corr_reset", int(removed.shape[0]), (removed, i64(removed.shape[0]), z, r, acc, i32(0)))
    if added.shape[0]:
        launcher(xp, "pr_corr_reset", int(added.shape[0]), (added, i64(added.shape[0]), z, r, acc, i32(1)))
    if n_src:
        # one wave of threads whatever the batch: the rows' chunks are not known on the host (no transfer), and
        # one hub among the sources has as many as the rest of the batch
        sums = push is not None and push.form == "google" and push.rows > 0
        launcher(xp, "pr_corr_apply", CORR_THREADS,
                 (owner, i64(n_src), n_chunks, chunk_list, offsets, cols, ins_s, ins_d, i64(n_ins), del_s, del_d,
                  i64(n_del),
                  old_share, new_share, flags, r, acc, i32(CORR_LANES), i64(CORR_CHUNK),
                  *((z, push.live, i64(push.rows), push.ctl, i32(1)) if sums else (acc, acc, i64(0), acc, i32(0)))))
        if sums:
            push.sums_done = True
    return acc, k_new


_SCALARS: dict = {}


def _device_scalar(xp, value: float):
    """A one-value float64 device array of ``value``, kept (an update's corrections read the damping from one
    instead of copying it to the device every batch)."""
    key = (id(xp), float(value))
    a = _SCALARS.get(key)
    if a is None:
        a = _SCALARS[key] = xp.asarray(np.asarray([value], dtype=np.float64))
    return a


# the corrections' edge pass: a changed source's new row in chunks of CORR_CHUNK edges, CORR_LANES lanes each
CORR_LANES = 8
CORR_CHUNK = 64
CORR_THREADS = 1 << 18
