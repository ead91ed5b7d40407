"""PageRank, static and incremental (DF-P: dynamic frontier with pruning), as array programs over ``xp``.

Definition (networkx ``pagerank(G, alpha=0.85, weight=None)``): with damping
``d``, ``n`` live vertices, out-degrees ``k`` and the dangling vertices (k = 0)
spreading their rank uniformly,

    x[v] = d * sum_{u -> v} x[u] / k[u]  +  d * (dangling mass) / n  +  (1 - d) / n.

**The unnormalised form.**  Everything on the right except the first term is
one scalar ``c`` shared by all vertices, so ``x = c * z`` where ``z`` solves

    z = 1 + d * P^T z          (P: the row-stochastic matrix of the real edges)

and ``c = 1 / sum(z)`` because ``x`` sums to 1.  ``z`` does not depend on ``n``
nor on which vertices are dangling: adding or removing a vertex, or making one
dangling, changes ``z`` only along the edges that changed, and the teleport and
dangling terms (which change *everyone's* rank) are recovered exactly by the
final normalisation.  This is what lets the incremental form stay local.

**Residual push.**  Both forms keep ``z`` and its residual
``r = 1 + d P^T z - z`` (exact, for the current graph), the total
``S = sum(z + r)`` and the residual norm ``R = sum |r|`` as running sums.
Pushing a vertex ``u`` moves ``r[u]`` into ``z[u]`` and adds ``d r[u] / k[u]``
to the residual of each out-neighbour; a synchronous push of *all* vertices
is one Jacobi / power iteration (one SpMV over the transposed CSR).  The
reported ranks are ``(z + r) / S``.

**Static**: from the uniform vector (``z = 1 / (1 - d)`` on every live vertex,
the fixed point's mean, i.e. networkx's uniform start), dense sweeps until
``R < tol * S``.  A dense sweep is by default a power iteration of the Google
matrix (dangling mass spread over the live vertices), after which the push state
is set to the exact ``z = c x``, ``r = c (x' - x)`` (:meth:`PageRank._dense_sweeps`):
its ``R / S`` is the iteration's own L1 change, so the stop is scipy's and
cuGraph's; pushing every vertex (``sweeps="jacobi"``) drops the dangling mass and
needs 3x the rounds on R-MAT graphs.  On a GPU these iterations are fused kernels
(:class:`~algorithms.pagerank_kernels.GoogleSweep`, :meth:`PageRank._google_sweeps`):
one pass per iteration over the transpose that also sums the change and the
dangling mass, the stop tested on the device; the array program stays the CPU path
and the reference.

**Incremental** (Sahu, Kothapalli and Banerjee's DF-P, in push form): a batch
changes the contribution ``d z[u] / k[u]`` of every source ``u`` whose out-edges
changed, so the residual is corrected exactly at those sources' old and new
out-neighbours (old = new minus inserted plus deleted, so only
``adjacency(changed sources)`` is read).  The *frontier* is the set of vertices
whose residual exceeds ``theta * max(k, 1)``; each round pushes it, and the
touched out-neighbours whose residual now exceeds the threshold form the next
one: vertices whose rank moved by less than the threshold are *pruned*, so the
frontier grows while rank changes are large and dies out where they fade.
When it dies with ``R`` still above the budget the threshold is divided by
``theta_step`` and the frontier restarts from the vertices touched so far.  A
frontier wider than ``dense_fraction`` of the edges (5 %: a frontier round costs
about 15-20x a dense sweep per edge in NumPy), or a batch larger than
``fallback_fraction`` of them, is finished by dense sweeps, warm from the current
``z``: the out-CSR is used as it is (the CSC form of ``A^T``, no transpose built per
batch) and the sweeps run until ``R < tol * S``, the static form's accuracy, which
renews the budget's headroom for the next batches.  Every frontier round reads only
the frontier's rows and its neighbours, the live set and out-degrees are followed
from the delta, and ``S`` and ``R`` are updated at the touched vertices only.

**When the frontier cannot stay local.**  On small-world graphs the exact change
of a small batch is not local at an L1 tolerance of ``1e-6``: for a 196-edge batch
on coAuthorsDBLP (299k vertices) the ranks of 70 % of the vertices must change to
bring the L1 error under ``1e-6`` (34 % for ``1e-5``), and 96 % on cnr-2000 for a
313-edge batch (sorting ``|x_after - x_before|``, exact solves).  No method that
keeps this accuracy can leave those vertices alone, so such batches go dense after
one or two frontier rounds and cost about what a warm-started power iteration costs
(the same number of sweeps); the frontier stays local where the change really is
local (batches on peripheral vertices, loose tolerances).

**On a GPU** (``fused_push``, on by default there; the array program above stays the CPU path and
the reference) an update is a handful of fused kernels (:mod:`algorithms.pagerank_kernels`): the same
corrections (per changed source its inserted and deleted edges, its old and new shares, the resets of
removed and added slots, then one pass over the edges with each target's whole change; ``S`` and ``R``
follow from each atomic's returned old value, ``|old + delta| - |old|``, which telescopes to the exact
change of ``sum |r|``; one host read), then *pruned pushes* over the whole vertex set: each round sums
``R`` afresh over the rows, queues the vertices with ``|r| > theta * max(k, 1)`` where
``theta = push_scale * R / (E + n)`` (above-average residual per unit of degree, so a round pushes the
vertices that reduce ``R`` most per edge read; an empty round quarters the scale, so rounds never stall),
and pushes them in place by atomics, one entry per chunk of out-edges so hubs spread over many lanes; it
stops at ``R <= budget * tol * S`` on the device, with one host read per chunk of rounds.

*Over-relaxed pushes* (``push_omega``, 1.4 by default on the GPU): a pushed vertex gives away
``omega * r[v]`` (its residual becomes ``(1 - omega) r[v]``), the successive over-relaxation of the
pruned Jacobi rounds.  The residual a push sends on comes back in part through the graph's cycles, and
pushing ahead of it cut the edges read per update about 2.5-4.5x on R-MAT 18-22 (0.01 % batches on R-MAT 22:
2.5 |E| instead of 8.3 |E|; 0.1 %: 4.2 |E| instead of 17 |E|; H100, bench-results/2026-11-25-prgpu2).
The error bound below needs nothing of the pushes but ``R``, which every round sums afresh, so it holds for
any ``omega``; but an over-relaxed push can raise ``R`` (it leaves ``(omega - 1) |r[v]|`` behind and
spreads ``omega d |r[v]|``), so the device turns ``omega`` back to 1 for the rest of the update once ``R``
exceeds twice its least value (plain pushes never raise ``R``), and the rounds converge as without it.

*The Google form of the pushes* (``push_form="google"``, the GPU default).  The push state's residual ``r``
decays slowly under pushes on small-world graphs: past a few rounds it is mostly the slow mode of ``d P^T``
(about 0.78 a round on R-MAT), which normalisation alone would fix, yet every unit of it is pushed along.  The
Google matrix's residual ``G x - x`` of ``x = z`` differs from ``r`` by one scalar at the live vertices:
``G z - z = r + c`` with ``c = (d D + (1 - d) T) / n - 1``, ``T = sum(z)``, ``D`` the sum of ``z`` over the live
dangling vertices.  Its L1 norm falls by the cancellation of positive and negative parts, at the Google matrix's
second eigenvalue (13 sweeps from the uniform vector on R-MAT 20, against 53 Jacobi sweeps of ``r``).  So the
pushes select and push ``r + c`` (a push of ``v`` moves ``r[v] + c`` into ``z[v]`` exactly as a residual push
does; ``T`` and ``D``, hence ``c``, follow from the pushed values on the device) and stop once
``sum |r + c| <= budget * tol * (T + sum(r + c))``; at the end ``z / (1 + c)`` has the exact residual
``(r + c) / (1 + c)``, the push state kept (one pass over the rows), whose ``R / S`` is the quantity the rounds
stopped on, so the error bound below holds as it is.  On R-MAT 20 / 22 this halved the edges pushed and the
rounds of 0.01-1 % batches (1.3 |E| in 11 rounds against 2.5 |E| in 21 at 0.01 %; H200,
bench-results/2026-11-26-princ, call 1; with kappa 1 below, 1.2 |E| in 11 rounds).  The pushes then reach most
vertices (pushes per update: 4-5 times the vertices), low-degree ones included, so a push's own cost counts in the
threshold ``theta * (k + kappa)`` (``push_kappa``), and an entry gets 4 lanes, not the mean out-degree's 16.
Over-relaxation does not help this form (``push_omega`` 1 by default).  The Google form conserves
``sum(r + c)`` but not z's scale ``T``: on small graphs of mostly dangling vertices its pushes can shrink ``T``
together with ``R`` (the shift ``c`` tending to -1), so the device hands the rest of the rounds to the residual
form once ``c < -0.5`` (the test the start makes), with the push state's ``S = T + sum r``.

A frontier round of the array program costs about 20 launches and a host read, and its dense finish
about 30 sweeps on small-world graphs; the pushes need no dense sweep and no transpose.
``push_mode="frontier"`` (:class:`~algorithms.pagerank_kernels.FrontierPush`: threshold levels, queues of
the vertices whose residual crossed the threshold instead of a pass over the rows per round) is kept as an
option: it read 7-16 % fewer edges than plain pushes (omega 1) in about twice the rounds, but its time per
edge pushed was 2-3x on an H100 (an atomic whose returned value is used, a degree read), so it is slower at
every batch size measured.

**The error bound.**  With ``z*`` the exact solution,
``z* - (z + r) = (I - d P^T)^-1 d P^T r``, so ``||z* - (z + r)||_1 <= d R / (1 - d)``
(``P^T`` does not increase the L1 norm), and normalising costs at most a
factor 2: the reported ranks ``x`` satisfy

    ||x - x*||_1  <=  2 d R / ((1 - d) S - d R)  =:  error_bound.

The static form stops at ``R < tol * S``; the incremental form keeps
``R <= budget * tol * S`` (``budget = 2`` by default: a batch may leave up to
one more ``tol * S`` of residual behind, outside its frontier, before dense
sweeps clean up).  So with the defaults ``||x - x*||_1 <= 2 * budget * tol *
d / (1 - d) (1 + O(tol))``, about ``22.7 * tol``; ``work["error_bound"]``
reports the bound for the current ``R`` and ``S``, and the tests check it
against networkx at a tight tolerance.  The per-vertex threshold never enters
the bound, which is why it can be large enough to keep a small batch's
frontier local.
"""
from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from vinestream.structures.array_ops import (
    bincount,
    compact,
    distinct_by_scatter,
    edge_keys,
    fill_at,
    member,
    row_ids,
    scatter_add,
    sum_of_sums,
    unique_sorted,
)
from vinestream.structures.backend import is_gpu
from vinestream.structures.base import DynamicGraph
from vinestream.structures.delta import BatchDelta

from . import pagerank_kernels as pk
from .base import Job, grow

FLOAT = np.float64
# the fused pruned pushes' defaults (GPU updates): theta = PUSH_SCALE * R / (E + n), and a pushed vertex gives
# PUSH_OMEGA times its residual (over-relaxation; see PageRank._fused_push)
PUSH_SCALE = 1.5
PUSH_OMEGA = 1.4
# the pushes' form on a GPU (PageRank's ``push_form``; module docstring, "The Google form of the pushes"): "google"
# selects and measures the Google matrix's residual r + c, "residual" the push state's r (over-relaxed by PUSH_OMEGA)
PUSH_FORM = "google"
GOOGLE_PUSH_OMEGA = 1.0
# the Google form's pushes reach most vertices, low-degree ones included, so a push's own cost (its entry, r[v] and
# z[v]) counts: the threshold is theta * (k + GOOGLE_PUSH_KAPPA), theta = push_scale * R / (E + kappa n), and an
# entry gets GOOGLE_PUSH_LANES lanes (the residual form: max(k, 1) and the mean out-degree's lanes).  H200, R-MAT
# 20 / 22 (bench-results/2026-11-26-princ, calls 2 and 3): kappa 0 / 1 / 2 / 4 / 8 and 2 / 4 / 8 / 16 lanes were
# timed side by side; kappa 1 with 4 lanes read the fewest edges in the fewest rounds on R-MAT 22 and was the
# fastest there at 0.01 and 0.1 % (4.37 / 6.57 ms against 4.52 / 7.06 for kappa 2, 4.85 / 7.49 for kappa 4)
GOOGLE_PUSH_KAPPA = 1.0
GOOGLE_PUSH_LANES = 4
# an update whose batch changes more than this fraction of the edges (|E| after it) is finished by dense sweeps: the
# array program's frontier rounds cost 15-20x a dense sweep per edge, so large batches go dense at once
FALLBACK_FRACTION = 0.1
# the same for the fused pushes (a GPU's default path), which need neither the sweeps' transpose nor a pass over the
# edges per round.  The sx-mathoverflow replay's batches 1-8 (4.4k-5k changed edges on graphs of 10.7k-44k edges after
# the batch: 11-46 % of |E|) went dense at 0.1; pushed instead, they took the rounds the Google sweeps took (41-53
# against 38-52) and read 7-9x fewer edges (70k-240k against 480k-1.8M an update), within the same error bound (the
# kernels' host emulation; bench-results/2026-11-26-prsmall), and on an H200 the eight updates took 18.0 ms pushed
# against 31.4 ms finished densely (the coo replay's warm pass, call 2).  Measured up to 46 %: larger batches go dense
FUSED_FALLBACK_FRACTION = 0.5


@functools.cache
def _normalised_kernel(xp):
    return xp.ElementwiseKernel("T z, T r, raw T total", "T rank",
                                "T t = total[0]; rank = (z + r) / (t > 0 ? t : (T)1)", "vinestream_normalised_ranks")


def normalised_ranks(xp, z, r):
    """``(z + r) / sum(z + r)`` over every slot (all zero stays zero; the sum stays on the device: no read).  On
    CuPy one reduction and one elementwise launch, where the array program takes five: a snapshot of the
    outputs takes the ranks every batch, and on a small graph each launch is host time."""
    total = sum_of_sums(xp, z, r)
    if xp is np:
        return (z + r) / np.where(total > 0, total, 1.0)
    return _normalised_kernel(xp)(z, r, total)


def _padded(xp, offsets, capacity: int):
    rows_now = offsets.shape[0] - 1
    if rows_now < capacity:
        return xp.concatenate([offsets, xp.full(capacity - rows_now, offsets[-1], dtype=offsets.dtype)])
    return offsets[: capacity + 1]


def sweep_operator(xp, csr, rows: int, damping: float, use_library: bool = True, transposed: bool = True,
                   ones=None):
    """``x -> d A^T D^-1 x`` over the first ``rows`` slots for the unweighted out-CSR ``csr``.

    This is one synchronous push of every vertex: vertex ``u`` sends ``d x[u] / k[u]``
    along each out-edge (nothing from dangling ones).  Where ``scipy.sparse`` (NumPy)
    or ``cupyx.scipy.sparse`` (CuPy) is installed each product is one library SpMV
    (cuSPARSE on the GPU), 32-bit indices where they fit:

    - ``transposed=True`` (static runs): the transpose is built once (an O(E) counting
      pass) with the damping and ``1 / k`` folded into its values, so a product is one
      row-parallel SpMV and nothing else;
    - ``transposed=False`` (dense sweeps of an incremental update): the out-CSR is used
      as it is, as the CSC form of ``A^T`` (no O(E) build per batch; ``ones`` is a cached
      all-ones array of at least E values), and ``x`` is scaled by ``d / k`` first.

    The array-program form, a gather plus a weighted ``bincount``, stays the reference
    (the tests compare them).  Every slot at or past ``rows`` must be empty.
    """
    offsets = _padded(xp, csr.offsets, rows)
    deg = xp.diff(offsets)
    scale = xp.where(deg > 0, damping / xp.maximum(deg, 1), 0.0).astype(FLOAT)
    num_edges = int(offsets[-1]) if rows else 0
    cols = csr.cols[:num_edges]
    if use_library:
        try:
            if xp is np:
                import scipy.sparse as sp
            else:
                import cupyx.scipy.sparse as sp
            index = np.int32 if num_edges < 2**31 and rows < 2**31 else np.int64
            cols_i, offsets_i = cols.astype(index, copy=False), offsets.astype(index, copy=False)
            if transposed:
                a = sp.csr_matrix((xp.repeat(scale, deg), cols_i, offsets_i), shape=(rows, rows))
                at = a.T.tocsr()
                if xp is np:
                    return _row_parallel(at)
                return lambda x: at @ x
            if ones is None or ones.shape[0] < num_edges:
                ones = xp.ones(num_edges, dtype=FLOAT)
            at = sp.csr_matrix((ones[:num_edges], cols_i, offsets_i), shape=(rows, rows)).T
            return lambda x: at @ (x * scale)
        except (ImportError, ValueError, TypeError):    # no sparse library, or a matrix it refuses
            pass
    owner = row_ids(xp, offsets)
    return lambda x: bincount(xp, cols, rows, weights=(x * scale)[owner])


#: the CPU's static sweeps split their SpMV into this many row blocks, one a thread, from this many entries on
SPMV_THREADS = min(4, os.cpu_count() or 1)
SPMV_PARALLEL_MIN_ENTRIES = 1 << 20


@functools.cache
def _spmv_pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(threads, thread_name_prefix="vinestream-spmv")


def _row_parallel(at, threads: int | None = None):
    """``x -> at @ x`` for a SciPy CSR matrix, its rows cut into ``threads`` blocks of about equal entries, each
    block's product on a thread of its own: SciPy's SpMV releases the GIL and runs on one core, so a static
    PageRank on two cores ran at half NetworKit's pace (cnr-2000: 336 against 272 ms, 2 cores,
    bench-results/2026-11-27-session30/cpu-quiet).  Every row's sum is the one product's, in the same order: the
    ranks are bitwise those of ``at @ x``."""
    threads = SPMV_THREADS if threads is None else threads
    if threads < 2 or at.nnz < SPMV_PARALLEL_MIN_ENTRIES:
        return lambda x: at @ x
    cuts = np.searchsorted(at.indptr, np.arange(1, threads) * (at.nnz // threads))
    bounds = list(zip([0, *cuts.tolist()], [*cuts.tolist(), at.shape[0]]))
    blocks = [at[lo:hi] for lo, hi in bounds if hi > lo]
    pool = _spmv_pool(threads)

    def product(x):
        parts = [pool.submit(block.__matmul__, x) for block in blocks]
        return np.concatenate([part.result() for part in parts])
    return product


class PageRank(Job):
    """PageRank (module docstring): ``run_static`` from the uniform vector, ``update`` by DF-P rounds.

    ``tol``: static runs stop at ``R < tol * S``; ``budget``: updates keep ``R <= budget * tol * S``;
    ``dense_fraction`` / ``fallback_fraction``: frontier / batch sizes (fractions of |E|) above which an
    update is finished by dense sweeps (``fallback_fraction=None``: ``FALLBACK_FRACTION`` for the array program,
    ``FUSED_FALLBACK_FRACTION`` for the fused pushes); ``fused``: dense sweeps as fused CUDA kernels
    (:mod:`algorithms.pagerank_kernels`; the stopping test on the device, one host read per chunk of
    sweeps), of the form ``sweeps`` says.  ``None`` (the default) picks them on a GPU: the Google
    form at every size (:class:`~algorithms.pagerank_kernels.GoogleSweep`: an H100 swept R-MAT 20 / 22
    in 0.27 / 0.95 ms, 0.64x / 0.68x one cuSPARSE SpMV of the same CSR, where the array program's
    iteration took 0.60 / 1.67 ms), the Jacobi form on graphs of at most
    ``pagerank_kernels.FUSED_MAX_EDGES`` edges, where a sweep is launch-bound (R-MAT 15: 0.11 ms per
    sweep fused against 0.36 ms through the library path; R-MAT 20: 0.69 against 0.39 ms);
    ``sweep_dtype="float32"``: the fused Jacobi sweeps keep ranks
    and residuals in float32, which adds at most
    :func:`~algorithms.pagerank_kernels.float32_error_allowance` (``iterations * 2^-21``) to the
    L1 error of the ranks beyond ``error_bound`` (which then assumes float64 arithmetic).
    ``sweeps``: the dense sweeps' form, ``"google"`` (power iterations of the Google matrix, dangling
    mass spread: :meth:`_dense_sweeps`) or ``"jacobi"`` (every vertex pushed, dangling mass dropped:
    :meth:`_jacobi_sweeps`, the array program the fused Jacobi kernel reproduces; float32 implies it).
    Both stop at the same ``R < tol * S`` and leave an exact push state; the Google form needs far
    fewer rounds on graphs with many dangling vertices.
    ``push_form``: the fused pushes' form, ``"google"`` (select and measure the Google matrix's residual
    ``r + c``; module docstring) or ``"residual"`` (``r``, over-relaxed by ``push_omega``, 1.4 by default there);
    ``push_kappa``: the Google form's threshold is ``theta * (k + push_kappa)`` (a push's own cost in edges;
    ``GOOGLE_PUSH_KAPPA`` by default, 0 means ``max(k, 1)``).
    """

    name = "pagerank"

    def __init__(self, xp=np, *, damping: float = 0.85, tol: float = 1e-6, max_iter: int = 1000,
                 fallback_fraction: float | None = None, dense_fraction: float = 0.05, budget: float = 2.0,
                 frontier_tol: float | None = None, theta_step: float = 4.0, library_spmv: bool = True,
                 fused: bool | None = None, sweep_dtype: str = "float64", fused_push: bool | None = None,
                 push_scale: float = PUSH_SCALE, push_lanes: int | None = None, push_mode: str = "select",
                 frontier_scale: float | None = None, frontier_step: float | None = None,
                 frontier_tail: float = 0.0, push_graph: bool | None = None, push_trace: bool = False,
                 push_omega: float | None = None, sweeps: str = "google", push_form: str = PUSH_FORM,
                 push_kappa: float | None = None, **params):
        super().__init__(xp, **params)
        if sweeps not in ("google", "jacobi"):
            raise ValueError(f"sweeps {sweeps!r}: 'google' or 'jacobi'")
        self.damping = float(damping)
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        # changed edges / |E| above which an update is finished by dense sweeps: the array program's and the fused
        # pushes' (_update_fused) defaults differ (FUSED_FALLBACK_FRACTION says why); a value given sets both
        self.fallback_fraction = FALLBACK_FRACTION if fallback_fraction is None else float(fallback_fraction)
        self.fused_fallback_fraction = (FUSED_FALLBACK_FRACTION if fallback_fraction is None
                                        else float(fallback_fraction))
        self.dense_fraction = float(dense_fraction)         # frontier edges / |E| above which: dense sweeps
        self.budget = max(1.0, float(budget))               # incremental keeps R <= budget * tol * S
        self.frontier_tol = frontier_tol                    # threshold per unit of degree / S (None: budget)
        self.theta_step = max(1.5, float(theta_step))
        self.library_spmv = bool(library_spmv)              # dense sweeps through scipy / cupyx SpMV
        # dense sweeps as fused kernels: True, False, or None = on a GPU (Jacobi: by graph size; docstring)
        self.fused = True if sweep_dtype == "float32" else (None if fused is None else bool(fused))
        if sweep_dtype not in ("float64", "float32"):
            raise ValueError(f"sweep_dtype {sweep_dtype!r}: float64 or float32")
        self.sweep_dtype = np.dtype(sweep_dtype)            # float32: fused static sweeps only (see pk)
        self.sweeps = "jacobi" if self.sweep_dtype == np.float32 else sweeps    # float32: the Jacobi kernel only
        # an update's propagation as fused pruned pushes (pk.FusedPush): True, False, or None = as
        # ``fused`` where it is set, else on a GPU (any graph size: the pushes need no transpose)
        self.fused_push = None if fused_push is None else bool(fused_push)
        self.push_scale = float(push_scale)                  # pruned pushes: theta = push_scale * R / (E + n)
        self.push_lanes = None if push_lanes is None else int(push_lanes)   # lanes per push entry (pk)
        if push_mode not in ("frontier", "select"):
            raise ValueError(f"push_mode {push_mode!r}: 'frontier' or 'select'")
        self.push_mode = push_mode                           # pk.FrontierPush (levels) or pk.FusedPush
        self.frontier_scale = float(pk.FRONTIER_SCALE if frontier_scale is None else frontier_scale)
        self.frontier_step = float(pk.FRONTIER_STEP if frontier_step is None else frontier_step)
        self.frontier_tail = float(frontier_tail)            # a level ends once its queue is this small
        if push_form not in ("google", "residual"):
            raise ValueError(f"push_form {push_form!r}: 'google' or 'residual'")
        self.push_form = push_form                           # select pushes: of r + c (Google) or of r
        if push_omega is None:                               # over-relaxation helps the residual form only
            push_omega = GOOGLE_PUSH_OMEGA if push_form == "google" else PUSH_OMEGA
        self.push_omega = float(push_omega)                  # select pushes: omega * r (over-relaxation)
        if push_kappa is None:
            push_kappa = GOOGLE_PUSH_KAPPA if push_form == "google" else 0.0
        self.push_kappa = max(0.0, float(push_kappa))        # select threshold theta * (k + kappa); 0: max(k, 1)
        if self.push_lanes is None and push_form == "google" and push_mode == "select":
            self.push_lanes = GOOGLE_PUSH_LANES
        self.push_graph = push_graph                         # push rounds replayed from a CUDA graph (None: pk's)
        self.push_trace = bool(push_trace)                   # keep the last update's per-round trace
        self.last_push = None                                # the last update's push object (its trace)
        self.last_sweep = None                               # the last fused Google sweep object (its reads)
        self.z = xp.zeros(0, dtype=FLOAT)
        self.r = xp.zeros(0, dtype=FLOAT)
        self.k = xp.zeros(0, dtype=np.int64)                # out-degrees, followed from the deltas
        self.total = 0.0                                     # S = sum(z + r)
        self.rnorm = 0.0                                     # R = sum |r|
        self._ids = xp.empty(0, dtype=np.int64)              # scratch over the slots (distinct_by_scatter)
        self._seen = xp.zeros(0, dtype=bool)                 # scratch: touched in this batch
        self._flags = xp.zeros(0, dtype=np.uint8)            # scratch: removed (1) / added (2) in this batch
        self._owner = xp.zeros(0, dtype=np.uint64)           # scratch: a changed source's owner entry (fused)
        self._epoch = 0                                      # its stamps' epoch: one more per fused update
        self._ones = xp.zeros(0, dtype=FLOAT)                # cached all-ones SpMV values (dense sweeps)
        self._rows = 0                                       # every slot at or past it is dead
        self._restarts = self._frontier_max = 0              # counters of the last update's DF-P rounds
        self._push_hint = 8                                  # fused pushes: the first chunk of rounds queued
        self._no_vertices = xp.zeros(0, dtype=np.int64)
        self._ready = False

    # -- bookkeeping ------------------------------------------------------------------------
    def _fit(self, capacity: int) -> None:
        xp = self.xp
        self.z = grow(xp, self.z, capacity, 0.0)
        self.r = grow(xp, self.r, capacity, 0.0)
        self.k = grow(xp, self.k, capacity, 0)
        if self._ids.shape[0] < capacity:
            self._ids = xp.empty(capacity, dtype=np.int64)
            self._seen = xp.zeros(capacity, dtype=bool)

    def _use_fused(self, num_edges: int) -> bool:
        """Whether the dense sweeps run as fused kernels (``fused``; ``None``: on a GPU, the Google form at any
        size, the Jacobi form on graphs of at most ``pk.FUSED_MAX_EDGES`` edges)."""
        if self.fused is not None:
            return self.fused
        return is_gpu(self.xp) and (self.sweeps == "google" or num_edges <= pk.FUSED_MAX_EDGES)

    def _use_fused_push(self) -> bool:
        """Whether an update propagates by fused pruned pushes (``fused_push``; see ``__init__``)."""
        if self.fused_push is not None:
            return self.fused_push
        if self.fused is not None:
            return self.fused
        return is_gpu(self.xp)

    def error_bound(self) -> float:
        """Upper bound on the L1 distance of :meth:`ranks` to the exact PageRank (module docstring)."""
        d = self.damping
        denom = (1 - d) * self.total - d * self.rnorm
        return 2 * d * self.rnorm / denom if denom > 0 else float("inf")

    def _resync(self) -> None:
        """Exact S and R from the arrays (one fused host transfer)."""
        xp = self.xp
        self.total, self.rnorm = (float(v) for v in
                                  xp.stack([self.z.sum() + self.r.sum(), xp.abs(self.r).sum()]).tolist())

    # -- building blocks ---------------------------------------------------------------
    def _norms(self, r, buf) -> tuple[float, float]:
        """(sum |r|, sum r): one host transfer."""
        xp = self.xp
        if xp is np:
            return float(np.abs(r, out=buf).sum()), float(r.sum())
        a, b = xp.stack([xp.abs(r).sum(), r.sum()]).tolist()
        return float(a), float(b)

    def _dense_sweeps(self, graph: DynamicGraph, limit: int, target: float, rows: int | None = None,
                      op=None) -> tuple[int, int]:
        """Power iterations of the Google matrix until ``R < target * tol * S``; (rounds, edges).

        From the current ranks ``x = (z + r) / S``, each round is
        ``x' = d A^T D^-1 x + (d * sum(x[dangling]) + 1 - d) / n`` over the ``n`` live
        vertices (one SpMV, the dangling mass and the teleport spread over the live
        vertices, and the L1 change ``||x' - x||_1`` read back: one transfer).  The push
        state is then set to ``z = c x``, ``r = c (x' - x)`` with
        ``c = n / (d * sum(x[dangling]) + 1 - d)``, which is exact: ``1 + d P^T z - z``
        equals ``c (x' - x)`` term by term, and ``S = c``, so ``R / S = ||x' - x||_1`` and
        the stop is the power iteration's own (scipy's, cuGraph's) at the same bound.

        Why not push every vertex (``z += r; r = d A^T D^-1 r``)?  That Jacobi sweep drops
        the dangling vertices' mass, so its residual shrinks by ``d`` times the spectral
        radius of the sub-stochastic ``P``; the Google matrix spreads that mass, and its
        iterates converge by its second eigenvalue, far below ``d`` on graphs with many
        dangling vertices: R-MAT 20 took 53 Jacobi sweeps against 16 power iterations
        for ``tol = 1e-6`` (and the L1 error 2.1e-6 against 4.5e-7; H100, session 8).
        On graphs with few dangling vertices the counts are the same.
        """
        if self.sweeps == "jacobi":
            return self._jacobi_sweeps(graph, limit, target, rows, op)
        xp, d = self.xp, self.damping
        csr = graph.adjacency()
        rows = int(self.z.shape[0]) if rows is None else int(rows)
        self._resync()
        if rows == 0 or self.rnorm < target * self.tol * self.total:
            return 0, 0
        if op is None:
            op = self._update_operator(csr, rows)
        live = self._live_mask[:rows]
        live_f = live.astype(FLOAT)
        dangling = xp.nonzero(live & (xp.diff(_padded(xp, csr.offsets, rows)) == 0))[0]
        n = float(live_f.sum())
        if n == 0:
            return 0, 0
        all_live = n == rows                                 # no dead slot: the teleport is a scalar add
        x = (self.z[:rows] + self.r[:rows]) * live_f
        x /= x.sum()                                         # a device scalar: no transfer
        buf = xp.empty(rows, dtype=FLOAT)
        rounds = edges = 0
        while True:
            y = xp.asarray(op(x), dtype=FLOAT)
            spread = (d * x[dangling].sum() + (1.0 - d)) / n     # a device scalar on a GPU
            if all_live:
                y += spread
            else:
                y += xp.multiply(live_f, spread, out=buf)
            xp.subtract(y, x, out=buf)
            change = float(xp.abs(buf, out=buf).sum())
            rounds += 1
            edges += csr.num_edges
            if change < target * self.tol or rounds >= limit:
                break
            x = y
        c = 1.0 / spread                                     # n / (d * sum(x[dangling]) + 1 - d)
        z = c * x
        r = c * (y - x)
        self.z[:rows], self.r[:rows] = z, r
        self._resync()
        return rounds, edges

    def _update_operator(self, csr, rows: int):
        """:func:`sweep_operator` on the out-CSR as it is (an incremental update's sweeps: no transpose built
        per batch), over the cached all-ones values."""
        if self._ones.shape[0] < csr.num_edges:
            self._ones = self.xp.ones(max(csr.num_edges, 2 * int(self._ones.shape[0])), dtype=FLOAT)
        return sweep_operator(self.xp, csr, rows, self.damping, self.library_spmv, transposed=False,
                              ones=self._ones)

    def _jacobi_sweeps(self, graph: DynamicGraph, limit: int, target: float, rows: int | None = None,
                       op=None) -> tuple[int, int]:
        """Push every vertex each round (Jacobi) until ``R < target * tol * S``; (rounds, edges).

        A sweep is ``z += r; r = d A^T D^-1 r`` over the first ``rows`` slots (the others
        must be dead): one SpMV plus three passes over the vertices (the add, and the
        residual's L1 norm and sum, fetched together).  ``S`` follows without a pass of
        its own: moving ``r`` into ``z`` keeps it, and the new residual adds its sum.
        The reference of the fused sweep kernel (``pagerank_kernels.FusedSweep``).
        """
        xp = self.xp
        csr = graph.adjacency()
        rows = int(self.z.shape[0]) if rows is None else int(rows)
        edges = 0
        if op is None:
            op = self._update_operator(csr, rows)
        z, r = self.z[:rows], self.r[:rows]
        buf = xp.empty(rows, dtype=FLOAT)
        residual, r_sum = self._norms(r, buf)
        total = float(z.sum()) + r_sum
        rounds = 0
        while rounds < limit and residual >= target * self.tol * total:
            z += r
            r = xp.asarray(op(r), dtype=FLOAT)
            residual, r_sum = self._norms(r, buf)
            total += r_sum
            rounds += 1
            edges += csr.num_edges
        if rows == self.r.shape[0]:
            self.r = r
        else:
            self.r[:rows] = r
        self.rnorm, self.total = residual, total
        return rounds, edges

    def _push_rounds(self, graph: DynamicGraph, touched_list: list, num_edges: int, limit: int):
        """DF-P rounds from the vertices touched so far; returns (rounds, edges, went_dense)."""
        xp, d = self.xp, self.damping
        seen, ids = self._seen, self._ids
        goal = self.budget * self.tol
        touched = xp.concatenate(touched_list) if len(touched_list) > 1 else touched_list[0]
        touched_list[:] = [touched]
        vol = float(xp.maximum(self.k[touched], 1).sum()) if touched.shape[0] else 1.0
        headroom = max(goal * self.total - self.rnorm, 0.5 * self.tol * self.total)
        if self.frontier_tol is not None:
            theta = self.frontier_tol * self.total
        else:
            theta = headroom / max(vol, 1.0)
        rounds = edges = 0
        while self.rnorm > goal * self.total and rounds < limit:
            touched = xp.concatenate(touched_list) if len(touched_list) > 1 else touched_list[0]
            touched_list[:] = [touched]
            kt = self.k[touched]
            over = xp.abs(self.r[touched]) > theta * xp.maximum(kt, 1)
            n_front, front_deg = (int(v) for v in xp.stack([over.sum(), (kt * over).sum()]).tolist())
            frontier = compact(xp, touched, over, n_front)
            # one host transfer per round: the round's sums and the next frontier's size and degree
            while n_front and rounds < limit:
                if front_deg > self.dense_fraction * max(num_edges, 1):
                    return rounds, edges, True
                deg = self.k[frontier]
                rf = self.r[frontier]
                self.z[frontier] += rf
                self.r[frontier] = 0.0
                adj = graph.adjacency(frontier.astype(np.int32))
                cols = adj.cols.astype(np.int64)
                owner = adj.row_ids().astype(np.int64)
                has_out = deg > 0
                push = xp.where(has_out, d * rf / xp.maximum(deg, 1), 0.0)
                at = xp.arange(cols.shape[0], dtype=np.int64)
                ids[cols] = at
                first = ids[cols] == at                   # one entry per distinct target
                before_abs = (xp.abs(self.r[cols]) * first).sum()
                scatter_add(xp, self.r, cols, push[owner])
                after = self.r[cols]
                fresh = first & ~seen[cols]
                kc = self.k[cols]
                nxt = first & (xp.abs(after) > theta * xp.maximum(kc, 1))
                stats = xp.stack([(xp.abs(after) * first).sum() - before_abs, xp.abs(rf).sum(),
                                  (d * rf * has_out).sum(), fresh.sum(), nxt.sum(), (kc * nxt).sum()]).tolist()
                gained, lost_here, spread = stats[:3]
                n_fresh, n_front, front_deg = (int(v) for v in stats[3:])
                self.rnorm += gained - lost_here
                self.total += spread
                fresh_ids = compact(xp, cols, fresh, n_fresh)
                seen[fresh_ids] = True
                touched_list.append(fresh_ids)
                frontier = compact(xp, cols, nxt, n_front)
                edges += int(cols.shape[0])
                rounds += 1
                self._frontier_max = max(self._frontier_max, n_front)
            if self.rnorm > goal * self.total:
                self._restarts += 1
            theta /= self.theta_step
        return rounds, edges, False

    def _new_push(self, csr, num_edges: int, offsets=None):
        """The select pushes' :class:`~algorithms.pagerank_kernels.FusedPush` over the first ``_rows`` rows
        (``offsets``: the out-CSR's offsets padded to them, where the caller has them)."""
        xp = self.xp
        if offsets is None:
            offsets = _padded(xp, csr.offsets, self._rows)
        # the last update's push lends its buffers (entries, control block): its run is over
        return pk.FusedPush(xp, offsets, csr.cols, self._rows, self.damping, num_edges,
                            self.push_lanes, self.push_graph, self._live_mask[:self._rows], self.push_form,
                            reuse=self.last_push)

    def _push_args(self, num_edges: int) -> tuple:
        """``FusedPush.prepare``'s arguments (``run``'s of the same names): total, residual, goal, scale, limit,
        omega, kappa."""
        return (self.total, self.rnorm, self.budget * self.tol, self._push_theta_scale(num_edges), self.max_iter,
                self.push_omega, self.push_kappa)

    def _push_theta_scale(self, num_edges: int) -> float:
        """The select pushes' ``theta / R``: ``push_scale / (E + kappa n)`` (kappa at least 1: the residual
        form's ``max(k, 1)``)."""
        return self.push_scale / max(num_edges + max(self.push_kappa, 1.0) * self._rows, 1)

    def _fused_push(self, csr, num_edges: int, limit: int, acc=None, push=None) -> tuple[int, int, int, int]:
        """Pruned pushes (:class:`~algorithms.pagerank_kernels.FusedPush`) until ``R <= budget * tol * S``:
        each round pushes ``push_omega`` times the residual of the vertices with ``|r| > theta * max(k, 1)``,
        ``theta = push_scale * R / (E + n)`` (at ``push_scale <= 1`` every round pushes at least one vertex:
        the thresholds add up to at most ``R``; above, an empty round quarters the scale); or, with
        ``push_mode="frontier"``, :class:`~algorithms.pagerank_kernels.FrontierPush`.  ``acc``: the
        corrections' device sums, not yet in ``R`` and ``S`` (select mode: added on the device).
        Returns ``(rounds, edges pushed along, vertices pushed, vertices scanned)``."""
        xp = self.xp
        rows = self._rows
        if self.push_mode == "frontier":
            push = pk.FrontierPush(xp, _padded(xp, csr.offsets, rows), csr.cols, self.k[:rows], rows, self.damping,
                                   num_edges, self.push_lanes, self.push_graph, self.push_trace)
            self.last_push = push
            scale = self.frontier_scale / max(num_edges + rows, 1)
            rounds, residual, total, edges, pushes, scans = push.run(
                self.z[:rows], self.r[:rows], self.rnorm, self.total, self.budget * self.tol, scale,
                self.frontier_step, limit, self.frontier_tail)
            self.rnorm, self.total = residual, total
            return rounds, edges, pushes, scans * rows + pushes
        if push is None:
            push = self._new_push(csr, num_edges)
        self.last_push = push
        rounds, residual, total, edges, pushes, selects = push.run(
            self.z[:rows], self.r[:rows], self.rnorm, self.total, self.budget * self.tol,
            self._push_theta_scale(num_edges), limit,
            self.push_omega, acc, self.push_kappa, self._push_hint)
        self._push_hint = max(8, selects + 1)               # the next update's first chunk of rounds
        self.rnorm, self.total = residual, total
        if not push.exact:                                   # stopped between checks (out of queued rounds)
            self._resync()
        return rounds, edges, pushes, selects * rows + (2 * rows if self.push_form == "google" else 0)

    # -- the two forms -------------------------------------------------------------------
    def run_static(self, graph: DynamicGraph, vertex_map) -> None:
        xp = self.xp
        live, live_mask = self._remember_live(graph)
        cap = int(live_mask.shape[0])
        self.z = xp.zeros(cap, dtype=FLOAT)
        self.r = xp.zeros(cap, dtype=FLOAT)
        self.k = xp.zeros(0, dtype=np.int64)
        self._fit(cap)
        csr = graph.adjacency()
        self.k = xp.diff(_padded(xp, csr.offsets, cap)).astype(np.int64)
        rows = int(live.max()) + 1 if live.shape[0] else 0      # every slot past the last live one is dead
        self._rows = rows
        rounds, edges = self._dense_sweeps_from_uniform(graph, live_mask, rows)
        self._ready = True
        self.work = {"mode": "static", "iterations": rounds, "edges_touched": edges,
                     "frontier": int(live.shape[0]), "vertices_touched": cap,
                     "error_bound": self.error_bound()}

    def _dense_sweeps_from_uniform(self, graph: DynamicGraph, live_mask, rows: int) -> tuple[int, int]:
        """The uniform start ``z = 1 / (1 - d)`` on live vertices (the fixed point's mean: networkx's
        and the power iteration's start) and its exact residual ``1 + d P^T z - z``, then dense sweeps."""
        xp, d = self.xp, self.damping
        csr = graph.adjacency()
        live = live_mask[:rows].astype(FLOAT)
        z = live * (1.0 / (1.0 - d))
        self.z[:rows] = z
        fused = self._use_fused(csr.num_edges)
        if fused and self.sweeps == "google":
            # the same start as below (z + r of the uniform vector, normalised) by one sweep of the kernel
            n = int(self._live_ids.shape[0]) if self._live_ids is not None else int(live.sum())
            if rows == 0 or n == 0:
                return 1, 0                                  # as the array program counts an empty graph
            sweep = pk.GoogleSweep(xp, csr, rows, d, live_mask[:rows])
            rounds, edges = self._google_sweeps(graph, self.max_iter - 1, rows, x=sweep.first_iterate(self.tol),
                                                n=n, sweep=sweep)
            if not rounds:
                # the uniform start within tol already (a regular graph; the device decided, no sweep ran): the
                # array program keeps it with its exact residual, and so does this (one more product, E edges)
                op = sweep_operator(xp, csr, rows, d, self.library_spmv)
                self.r[:rows] = (live + xp.asarray(op(z), dtype=FLOAT)) - z
                self._resync()
                return 1, edges + 2 * csr.num_edges
            return rounds + 1, edges + csr.num_edges         # the first iterate (E); the transpose is counted
        if fused and self.sweep_dtype == FLOAT:
            # the first residual through the fused sweeps' own transpose (no library SpMV, built once)
            sweep = pk.FusedSweep(xp, csr, rows, d, FLOAT)
            self.r[:rows] = (live + sweep.product(z, xp.empty(rows, dtype=FLOAT))) - z
            rounds, edges = self._fused_sweeps(graph, self.max_iter - 1, rows, sweep)
            return rounds + 1, edges + csr.num_edges           # the first residual (E); the transpose is counted
        op = sweep_operator(xp, csr, rows, d, self.library_spmv)
        self.r[:rows] = (live + xp.asarray(op(z), dtype=FLOAT)) - z
        if fused:
            rounds, edges = self._fused_sweeps(graph, self.max_iter - 1, rows)
        else:
            rounds, edges = self._dense_sweeps(graph, self.max_iter - 1, 1.0, rows, op)
        return rounds + 1, edges + 3 * csr.num_edges          # transpose (2E) and the first residual (E)

    def _google_sweeps(self, graph: DynamicGraph, limit: int, rows: int, x=None, n: int | None = None,
                       sweep=None) -> tuple[int, int]:
        """:meth:`_dense_sweeps` (Google form, target 1) as fused kernels
        (:class:`~algorithms.pagerank_kernels.GoogleSweep`): the same iterations, stop and end state
        ``z = c x``, ``r = c (x' - x)``, ``c = 1 / spread`` of the last sweep, with ``S = c sum(x')`` and
        ``R = c ||x' - x||_1`` from the sweep's own sums; the stopping test on the device, one host read per
        chunk of sweeps.  ``x``: the start (the static run's uniform vector); ``None``: the current ranks, after
        the array program's check that ``R >= tol * S`` (an update's dense finish).  ``n``: the live vertices."""
        xp = self.xp
        csr = graph.adjacency()
        live = self._live_mask[:rows]
        if x is None:
            self._resync()
            if rows == 0 or self.rnorm < self.tol * self.total:
                return 0, 0
            x = (self.z[:rows] + self.r[:rows]) * live
            x /= x.sum()                                     # a device scalar: no transfer
        if n is None:
            n = int(live.sum())
        if sweep is None:
            sweep = pk.GoogleSweep(xp, csr, rows, self.damping, live)
        self.last_sweep = sweep
        rounds, x, y, ctl = sweep.run(x, n, self.tol, limit)
        edges = (2 + rounds) * csr.num_edges                 # its transpose, then each sweep
        if not rounds:
            return 0, edges
        c = 1.0 / ctl[pk.G_USED]                             # n / (d * sum(x[dangling]) + 1 - d)
        self.z[:rows] = c * x
        self.r[:rows] = c * (y - x)
        self.total, self.rnorm = c * ctl[pk.TOTAL], c * ctl[pk.RESIDUAL]
        return rounds, edges

    def _fused_sweeps(self, graph: DynamicGraph, limit: int, rows: int, sweep=None) -> tuple[int, int]:
        """The dense sweeps as fused kernels: :meth:`_google_sweeps` for ``sweeps="google"``, else
        :meth:`_jacobi_sweeps` (target 1) as one fused kernel per sweep (``pagerank_kernels``), in
        ``sweep_dtype``; the stopping test runs on the device, so the sweeps are queued in chunks with
        one host transfer per chunk (:meth:`~algorithms.pagerank_kernels.FusedSweep.sweeps`).  ``sweep``:
        a FusedSweep already built over the graph's first ``rows`` rows."""
        if self.sweeps == "google":
            return self._google_sweeps(graph, limit, rows)
        xp = self.xp
        csr = graph.adjacency()
        if sweep is None:
            sweep = pk.FusedSweep(xp, csr, rows, self.damping, self.sweep_dtype)
        z = self.z[:rows].astype(self.sweep_dtype)
        r = self.r[:rows].astype(self.sweep_dtype)
        residual, r_sum = self._norms(self.r[:rows], xp.empty(rows, dtype=FLOAT))
        total = float(self.z[:rows].sum()) + r_sum
        # the convergence test on the device: sweeps queued in chunks, one transfer per chunk
        rounds, residual, total, r = sweep.sweeps(z, r, xp.empty_like(r), residual, total, self.tol, limit)
        edges = (2 + rounds) * csr.num_edges                 # its transpose, then each sweep
        self.z[:rows] = z
        self.r[:rows] = r
        if self.sweep_dtype != FLOAT:                         # S and R exactly for the ranks as stored
            residual, r_sum = self._norms(self.r[:rows], xp.empty(rows, dtype=FLOAT))
            total = float(self.z[:rows].sum()) + r_sum
        self.rnorm, self.total = residual, total
        return rounds, edges

    def update(self, graph: DynamicGraph, delta: BatchDelta, vertex_map) -> None:
        xp, d = self.xp, self.damping
        if not self._ready:
            return self.run_static(graph, vertex_map)
        live_mask = self._follow_live(graph, delta)
        cap = int(live_mask.shape[0])
        self._fit(cap)
        seen, ids = self._seen, self._ids
        edges = 0

        # no conversion of an empty vertex list (most batches): a kept empty array
        removed, added = (xp.asarray(a, dtype=np.int64) if a.shape[0] else self._no_vertices
                          for a in (delta.vertices_removed, delta.vertices_added))
        if added.shape[0]:
            self._rows = max(self._rows, int(added.max()) + 1)
        if self._use_fused_push():
            # the kernels read the batch as the delta holds it (int32), its sources in order, repeats kept (a
            # source's last entry owns it, pk.fused_corrections): no concatenation, sort, compaction or host read
            ins_s, ins_d, del_s, del_d = (xp.asarray(a, dtype=np.int32) for a in (
                delta.inserted_src, delta.inserted_dst, delta.deleted_src, delta.deleted_dst))
            return self._update_fused(graph, delta, ins_s, ins_d, del_s, del_d, removed, added)
        ins_s, ins_d = delta.inserted_src.astype(np.int64), delta.inserted_dst.astype(np.int64)
        del_s, del_d = delta.deleted_src.astype(np.int64), delta.deleted_dst.astype(np.int64)
        sources = unique_sorted(xp, xp.concatenate([ins_s, del_s]))
        adj = graph.adjacency(sources.astype(np.int32))              # new out-rows (rows after the batch)
        cols = adj.cols.astype(np.int64)
        # every vertex whose z or r the corrections change, and their S and R before
        touched = distinct_by_scatter(xp, xp.concatenate([cols, del_d, removed, added]), ids)
        before = xp.stack([(self.z[touched] + self.r[touched]).sum(), xp.abs(self.r[touched]).sum()])

        # 1. Exact residual corrections at the changed sources' old and new out-neighbours.
        if sources.shape[0]:
            z_src = self.z[sources]
            seen[removed] = True
            survives = ~seen[sources]
            seen[removed] = False
            k_new = xp.diff(adj.offsets).astype(FLOAT)
            n_ins = bincount(xp, xp.searchsorted(sources, ins_s), sources.shape[0])
            n_del = bincount(xp, xp.searchsorted(sources, del_s), sources.shape[0])
            k_old = k_new - n_ins + n_del
            owner = adj.row_ids().astype(np.int64)
            edges += int(cols.shape[0] + del_s.shape[0])
            # old out-set = (new out-set minus inserted) plus deleted; survivors of removed slots
            # are not in the new rows (a removed vertex's new row belongs to its slot's new owner).
            inserted_keys = unique_sorted(xp, edge_keys(xp, ins_s, ins_d))
            kept = ~member(xp, inserted_keys, edge_keys(xp, sources[owner], cols)) & survives[owner]
            old_share = xp.where(k_old > 0, d * z_src / xp.maximum(k_old, 1), 0.0)
            scatter_add(xp, self.r, cols[kept], -old_share[owner[kept]])
            scatter_add(xp, self.r, del_d, -old_share[xp.searchsorted(sources, del_s)])
            self._reset(removed, added)
            new_share = xp.where(survives & (k_new > 0), d * z_src / xp.maximum(k_new, 1), 0.0)
            scatter_add(xp, self.r, cols, new_share[owner])
            # out-degrees follow the delta (a removed slot reused as a source gets its new row's)
            if removed.shape[0]:
                self.k[removed] = 0
            self.k[sources] = k_new.astype(np.int64)
        else:
            self._reset(removed, added)
            if removed.shape[0]:
                self.k[removed] = 0
        after = xp.stack([(self.z[touched] + self.r[touched]).sum(), xp.abs(self.r[touched]).sum()])
        (ds, dr) = (after - before).tolist()
        self.total += ds
        self.rnorm += dr

        # 2. Propagate: DF-P rounds, or dense sweeps when the batch or the frontier is large.
        num_edges = int(graph.num_edges)
        touched_list = [touched]
        rounds, more, dense = 0, 0, False
        self._restarts = self._frontier_max = 0
        if delta.num_changed_edges > self.fallback_fraction * max(num_edges, 1):
            mode = "fallback"
            dense = True
            visited = int(touched.shape[0])
        else:
            seen[touched] = True
            rounds, more, dense = self._push_rounds(graph, touched_list, num_edges, self.max_iter)
            mode = "incremental+dense" if dense else "incremental"
            touched = xp.concatenate(touched_list) if len(touched_list) > 1 else touched_list[0]
            seen[touched] = False
            visited = int(touched.shape[0])
        local_rounds = rounds
        if dense:
            if self._use_fused(num_edges):     # the edge count, not a CSR built only to count them
                more_rounds, dense_edges = self._fused_sweeps(graph, self.max_iter - rounds, self._rows)
            else:
                more_rounds, dense_edges = self._dense_sweeps(graph, self.max_iter - rounds, 1.0, self._rows)
            rounds += more_rounds
            more += dense_edges
            visited = int(graph.num_vertices)
        self.work = {"mode": mode, "iterations": rounds, "edges_touched": edges + more,
                     "frontier": visited, "vertices_touched": visited + int(touched_list[0].shape[0]),
                     "local_rounds": local_rounds, "dense_sweeps": rounds - local_rounds,
                     "restarts": self._restarts, "frontier_max": self._frontier_max,
                     "error_bound": self.error_bound()}

    def _update_fused(self, graph: DynamicGraph, delta: BatchDelta, ins_s, ins_d, del_s, del_d,
                      removed, added) -> None:
        """:meth:`update` with fused kernels (a GPU's default): step 1 by
        :func:`~algorithms.pagerank_kernels.fused_corrections` (the same corrections, S and R followed by
        the atomics' telescoping sums), step 2 by :meth:`_fused_push` (or dense sweeps past
        ``fused_fallback_fraction``).  The array program above stays the reference (the tests compare them)."""
        xp = self.xp
        csr = graph.adjacency()
        offsets = _padded(xp, csr.offsets, self._rows)
        flags = self._flags
        if flags.shape[0] < self._seen.shape[0]:
            flags = self._flags = xp.zeros(self._seen.shape[0], dtype=np.uint8)
        if removed.shape[0]:
            fill_at(xp, flags, removed, 1)
            fill_at(xp, self.k, removed, 0)                  # before the kernels write the sources' new degrees
        if added.shape[0]:
            if removed.shape[0]:
                flags[added] |= 2                            # a slot removed and re-added in the batch: both bits
            else:
                fill_at(xp, flags, added, 2)                 # flags are 0 between updates: one scatter, no read
        # the sources' owner entries: a scratch over the slots stamped with this update's epoch (no clearing)
        if self._owner.shape[0] < flags.shape[0] or self._epoch >= (1 << 31):
            self._owner = xp.zeros(flags.shape[0], dtype=np.uint64)
            self._epoch = 0
        self._epoch += 1
        num_edges = int(graph.num_edges)
        self._restarts = self._frontier_max = 0
        fallback = delta.num_changed_edges > self.fused_fallback_fraction * max(num_edges, 1)
        # the Google-form pushes' control block set before the corrections, whose edge pass then also sums the
        # pushes' T, D and n (one pass over the rows and one launch fewer)
        push = None
        if not fallback and self.push_mode == "select":
            push = self._new_push(csr, num_edges, offsets)
            push.prepare(*self._push_args(num_edges))
        # the sources' new out-degrees go into self.k in the kernels (a repeated source writes once)
        acc, _ = pk.fused_corrections(
            xp, self._owner, self._epoch, offsets, csr.cols.astype(np.int32, copy=False), self.z, self.r, flags,
            self.damping, ins_s, ins_d, del_s, del_d, removed, added, self.k, push)
        if removed.shape[0]:
            fill_at(xp, flags, removed, 0)
        if added.shape[0]:
            fill_at(xp, flags, added, 0)
        edges = 0
        if fallback or self.push_mode != "select":
            d_abs, d_sum, edges = acc.tolist()              # the corrections' one transfer
            edges = int(edges)
            self.rnorm += d_abs
            self.total += d_sum
            acc = None                                       # else the pushes add it on the device
        # vertices whose r or z the corrections changed, counted with repeats (one per edge and slot)
        touched = int(ins_s.shape[0] + del_s.shape[0]) + edges + int(removed.shape[0]) + int(added.shape[0])
        if fallback:
            if self._use_fused(num_edges):
                rounds, more = self._fused_sweeps(graph, self.max_iter, self._rows)
            else:
                rounds, more = self._dense_sweeps(graph, self.max_iter, 1.0, self._rows)
            self.work = {"mode": "fallback", "iterations": rounds, "edges_touched": edges + more,
                         "frontier": int(graph.num_vertices), "vertices_touched": int(graph.num_vertices) + touched,
                         "local_rounds": 0, "dense_sweeps": rounds, "restarts": 0, "frontier_max": 0,
                         "error_bound": self.error_bound()}
            return
        # fused pruned pushes over the whole vertex set: a pass over the vertices per round (no edges),
        # the edges of the pushed vertices only; never dense sweeps
        rounds, more, pushes, scanned = self._fused_push(csr, num_edges, self.max_iter, acc, push)
        if acc is not None:
            edges = self.last_push.corr_edges
            touched += edges
        self.work = {"mode": "incremental", "iterations": rounds, "edges_touched": edges + more,
                     "frontier": pushes, "vertices_touched": pushes + touched + scanned,
                     "local_rounds": rounds, "dense_sweeps": 0, "restarts": 0, "frontier_max": 0,
                     "error_bound": self.error_bound()}

    def _reset(self, removed, added) -> None:
        """Slots removed in this batch lose their values; slots (re)used start from z = 0, r = 1."""
        if removed.shape[0]:
            fill_at(self.xp, self.z, removed, 0.0)
            fill_at(self.xp, self.r, removed, 0.0)
        if added.shape[0]:
            fill_at(self.xp, self.z, added, 0.0)
            fill_at(self.xp, self.r, added, 1.0)

    # -- results ---------------------------------------------------------------------------
    def ranks(self):
        """Normalised ranks over all slots (0 on dead slots): a pass over the slots."""
        return normalised_ranks(self.xp, self.z, self.r)

    def slot_columns(self, vertex_map):
        return self._live_mask, {"rank": (self.ranks(), None, np.float64)}

    def summary(self) -> dict:
        return {"pagerank_iterations": int(self.work.get("iterations", 0)),
                "pagerank_frontier": int(self.work.get("frontier", 0)),
                "pagerank_edges_touched": int(self.work.get("edges_touched", 0))}

    def state(self) -> dict:
        return self._host(z=self.z, r=self.r, k=self.k, live=self._live)

    def load_state(self, state: dict) -> None:
        xp = self.xp
        self.z = self._device(state["z"], FLOAT)
        self.r = self._device(state["r"], FLOAT)
        self._set_live(self._device(state["live"], np.int64), int(self.z.shape[0]))
        cap = int(self._live_mask.shape[0])
        self.k = self._device(state["k"], np.int64) if "k" in state else xp.zeros(cap, dtype=np.int64)
        self._ids = xp.empty(0, dtype=np.int64)
        self._fit(cap)
        live = self._live
        self._rows = int(live.max()) + 1 if live.shape[0] else 0
        self._resync()
        self._ready = True
        if "k" not in state:
            self._ready = False          # an old checkpoint without degrees: recompute on the next batch
