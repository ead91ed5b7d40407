"""PageRank on CuPy: the fused sweep kernel (fused=True; off by default, see PageRank) against the array program
(fused=False, cupyx SpMV, also on the device), on random graphs, R-MAT and batch streams; float32 sweeps
against their stated allowance.

Run on a GPU box: ``python3 -m pytest tests/test_pagerank_fused_gpu.py -m gpu``.
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings

from tests.algo_support import Harness, IdentityMap, event_batches, pagerank_l1, random_batch, rmat_edges
from tests.backends import HAS_GPU, cupy
from tests.test_pagerank_kernels import assert_exact_residual, assert_same_push_state, dead_slot_graph
from vinestream.algorithms import create_job
from vinestream.algorithms import pagerank_kernels as pk
from vinestream.algorithms.pagerank import PageRank
from vinestream.stream.bench.algorithms import random_delta
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")]
TOL = 1e-8


def l1(a, b) -> float:
    return float(cupy.abs(a - b).sum())


def test_cupy_default_picks_the_sweep_by_graph_size():
    """The Google form fused at every size; the Jacobi form fused on small graphs (launch-bound), the library's
    SpMV above ``FUSED_MAX_EDGES``."""
    from vinestream.algorithms import pagerank_kernels as pk
    assert PageRank(cupy, fused=True).fused and PageRank(cupy, fused=False).fused is False
    assert create_job("pagerank", cupy).fused is None and PageRank(cupy, sweep_dtype="float32").fused
    assert PageRank(cupy, sweep_dtype="float32").sweeps == "jacobi" and PageRank(cupy, fused=True).sweeps == "google"
    small, big = 1, pk.FUSED_MAX_EDGES + 1                                   # edge counts
    assert PageRank(cupy)._use_fused(small) and PageRank(cupy)._use_fused(big)
    jacobi = PageRank(cupy, sweeps="jacobi")
    assert jacobi._use_fused(small) and not jacobi._use_fused(big)
    assert not PageRank(cupy, fused=False)._use_fused(small) and PageRank(cupy, fused=True)._use_fused(big)


@settings(max_examples=25, deadline=None)
@given(event_batches(max_batches=1, max_events=30))
def test_static_random_graphs(batches):
    h = Harness(cupy)
    h.apply(batches[0])
    fused = PageRank(cupy, tol=TOL, fused=True, sweeps="jacobi")
    ref = PageRank(cupy, tol=TOL, fused=False, sweeps="jacobi")
    fused.run_static(h.graph, h.vmap)
    ref.run_static(h.graph, h.vmap)
    assert abs(fused.work["iterations"] - ref.work["iterations"]) <= 1
    assert l1(fused.ranks(), ref.ranks()) < 1e-10
    assert pagerank_l1(fused, h) < 1e-4


@pytest.mark.parametrize("tpr", [1, 2, 8, 32, None])
def test_rmat_every_lane_width(tpr, monkeypatch):
    """R-MAT scale 14 (hubs with long in-lists) for each lanes-per-row width: equals the array program."""
    if tpr is not None:
        monkeypatch.setattr(pk, "threads_per_row", lambda mean: tpr)
    s, d = rmat_edges(np.random.default_rng(3), 14, 16)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 14)
    vm = IdentityMap()
    fused = PageRank(cupy, tol=1e-7, fused=True, sweeps="jacobi")
    ref = PageRank(cupy, tol=1e-7, fused=False, sweeps="jacobi")
    fused.run_static(g, vm)
    ref.run_static(g, vm)
    assert abs(fused.work["iterations"] - ref.work["iterations"]) <= 1
    assert l1(fused.ranks(), ref.ranks()) < 1e-9


def test_batch_streams_dense_finish_equals_the_array_program():
    """Every update finished densely (fallback) and by the default switches: fused == array program."""
    s, d = rmat_edges(np.random.default_rng(5), 13, 8)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 13)
    vm = IdentityMap()
    for params in ({"tol": 1e-7, "fallback_fraction": 0.0}, {"tol": 1e-7, "fused_push": False}):
        fused = PageRank(cupy, fused=True, sweeps="jacobi", **params)
        ref = PageRank(cupy, fused=False, sweeps="jacobi", **params)
        fused.run_static(g, vm)
        ref.run_static(g, vm)
        for b in range(5):
            delta = random_delta(cupy, g, 40 * (b + 1), b)
            apply_delta(g, delta)
            fused.update(g, delta, vm)
            ref.update(g, delta, vm)
            assert fused.work["mode"] == ref.work["mode"]
            assert l1(fused.ranks(), ref.ranks()) < 1e-9


def test_random_event_streams():
    rng = random.Random(17)
    h = Harness(cupy)
    h.apply(random_batch(rng, h.oracle, 40, 150))
    fused = PageRank(cupy, tol=TOL, fallback_fraction=0.0, fused=True, sweeps="jacobi")
    ref = PageRank(cupy, tol=TOL, fused=False, fallback_fraction=0.0, sweeps="jacobi")
    fused.run_static(h.graph, h.vmap)
    ref.run_static(h.graph, h.vmap)
    for _ in range(8):
        delta = h.apply(random_batch(rng, h.oracle, 40, 10))
        fused.update(h.graph, delta, h.vmap)
        ref.update(h.graph, delta, h.vmap)
        assert l1(fused.ranks(), ref.ranks()) < 1e-10
        assert pagerank_l1(fused, h) < 1e-4


def test_float32_sweeps_stay_within_the_stated_allowance():
    """float32 ranks: the gap to the exact ranks stays under the float64 bound plus the stated allowance."""
    s, d = rmat_edges(np.random.default_rng(9), 16, 16)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 16)
    vm = IdentityMap()
    f32 = PageRank(cupy, tol=1e-6, sweep_dtype="float32")
    f64 = PageRank(cupy, tol=1e-6, fused=True, sweeps="jacobi")
    f32.run_static(g, vm)
    f64.run_static(g, vm)
    exact = PageRank(cupy, tol=1e-12, fused=False)
    exact.run_static(g, vm)
    gap = l1(f32.ranks(), exact.ranks())
    assert gap <= f64.error_bound() + pk.float32_error_allowance(f32.work["iterations"])
    assert abs(f32.work["iterations"] - f64.work["iterations"]) <= 2


def test_cupy_updates_push_fused_by_default():
    assert PageRank(cupy)._use_fused_push() and not PageRank(cupy, fused=False)._use_fused_push()
    assert PageRank(cupy, fused=False, fused_push=True)._use_fused_push()


PUSH_VARIANTS = {"default": {},
                 "google_scale1": {"push_scale": 1.0},
                 "google_scale4": {"push_scale": 4.0},
                 "google_omega13": {"push_omega": 1.3},
                 "google_nograph": {"push_graph": False},
                 "google_graph": {"push_graph": True},
                 "residual": {"push_form": "residual"},
                 "select1": {"push_mode": "select", "push_scale": 1.0, "push_omega": 1.0, "push_form": "residual"},
                 "select2": {"push_mode": "select", "push_scale": 2.0, "push_omega": 1.0, "push_form": "residual"},
                 "select_omega13": {"push_mode": "select", "push_omega": 1.3, "push_form": "residual"},
                 "select_omega19": {"push_mode": "select", "push_omega": 1.9, "push_form": "residual"},
                 "select_nograph": {"push_mode": "select", "push_graph": False, "push_form": "residual"},
                 "select_graph_omega1": {"push_mode": "select", "push_graph": True, "push_omega": 1.0,
                                         "push_form": "residual"},
                 "frontier": {"push_mode": "frontier"},
                 "frontier4_tail": {"push_mode": "frontier", "frontier_scale": 4.0, "frontier_tail": 0.05},
                 "frontier_nograph": {"push_mode": "frontier", "frontier_scale": 4.0, "frontier_tail": 0.2,
                                      "push_graph": False},
                 "frontier_steep": {"push_mode": "frontier", "frontier_scale": 64.0, "frontier_step": 1.5,
                                    "frontier_tail": 0.5}}


@pytest.mark.parametrize("variant", list(PUSH_VARIANTS))
def test_fused_pushes_on_rmat_batch_streams(variant):
    """R-MAT 14, batches of 0.01 % to 2 %: the fused pruned pushes (real warps, atomics in any order; both
    push modes, frontier rounds replayed from CUDA graphs or launched one by one) end with R <= budget * tol * S
    as summed from the arrays, within the error bound of the exact ranks and of the array program's
    (fused=False: frontier rounds and cuSPARSE sweeps)."""
    s, d = rmat_edges(np.random.default_rng(8), 14, 16)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 14)
    vm = IdentityMap()
    params = PUSH_VARIANTS[variant]
    job, ref = PageRank(cupy, tol=1e-7, **params), PageRank(cupy, tol=1e-7, fused=False)
    job.run_static(g, vm)
    ref.run_static(g, vm)
    m = g.num_edges
    for b, f in enumerate((1e-4, 1e-3, 1e-2, 2e-2, 1e-4)):
        delta = random_delta(cupy, g, max(2, int(f * m)), 30 + b)
        apply_delta(g, delta)
        job.update(g, delta, vm)
        ref.update(g, delta, vm)
        exact = PageRank(cupy, tol=1e-12, fused=False)
        exact.run_static(g, vm)
        w = job.work
        assert w["mode"] == "incremental" and w["dense_sweeps"] == 0, w
        assert job.rnorm <= job.budget * job.tol * job.total * (1 + 1e-9)
        assert job.rnorm == pytest.approx(float(cupy.abs(job.r).sum()), rel=1e-9)
        assert job.total == pytest.approx(float((job.z + job.r).sum()), rel=1e-9)
        assert_exact_residual(job, g)              # the push state is exact (the Google form rescales z)
        gap = l1(job.ranks(), exact.ranks())
        assert gap <= job.error_bound() + exact.error_bound(), (b, gap, job.error_bound())
        assert l1(job.ranks(), ref.ranks()) <= job.error_bound() + ref.error_bound() + 2 * exact.error_bound()
        if w["iterations"]:
            assert w["edges_touched"] > 0
            if job.push_mode == "select":
                assert w["vertices_touched"] >= w["iterations"] * (1 << 14)
                # every round comes from a captured graph, kept from update to update (R-MAT 14 is small: on by
                # default), the first chunk too (whole graphs)
                push = job.last_push
                assert push.use_graph == params.get("push_graph", True) or not push.graph_used
                assert push.graph_used == push.use_graph
                assert not push.use_graph or push.first_chunk % pk.PUSH_GRAPH_ROUNDS == 0
            else:
                push = job.last_push
                assert 1 <= int(push.ctl[pk.F_SCANS]) <= w["iterations"]
                assert not bool(push.flag.any()) and not bool(push.qn.any())
                assert push.graph_used == (params.get("push_graph", True) and push.use_graph)


def test_push_graph_is_kept_across_updates():
    """The captured push rounds read the CSR and the rows through the binding (pr_push_init), so the graph
    captured by one update replays in the next ones (a new CSR array each batch): later updates capture nothing
    while the kept buffers stay, every round comes from it, and the ranks agree with rounds launched one by one
    (push_graph=False) within the two error bounds, with an exact push state."""
    s, d = rmat_edges(np.random.default_rng(9), 13, 8)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 13)
    vm = IdentityMap()
    job, ref = PageRank(cupy, tol=1e-7), PageRank(cupy, tol=1e-7, push_graph=False)
    job.run_static(g, vm)
    ref.run_static(g, vm)
    captures = []
    for b in range(6):
        delta = random_delta(cupy, g, 30, 60 + b)
        apply_delta(g, delta)
        job.update(g, delta, vm)
        ref.update(g, delta, vm)
        assert job.work["mode"] == "incremental"
        push = job.last_push
        if job.work["iterations"]:
            assert push.graph_used and push.use_graph
            captures.append(push.captures)
        assert not ref.last_push.graph_used
        assert job.rnorm <= job.budget * job.tol * job.total * (1 + 1e-9)
        assert_exact_residual(job, g)
        assert l1(job.ranks(), ref.ranks()) <= job.error_bound() + ref.error_bound()
    assert len(captures) >= 3 and captures[0] == 1 and sum(captures[1:]) == 0, captures


@pytest.mark.parametrize("fallback", [False, True])
def test_google_sweeps_from_a_graph_equal_sweeps_one_by_one(fallback, monkeypatch):
    """Google sweeps replayed from a captured graph (graphs of at most SWEEP_GRAPH_MAX_EDGES edges) do what the
    same sweeps launched one by one do: the same rounds, the same ranks up to the atomics' order, R and S; the
    static run and dense finishes (fallback) alike."""
    s, d = rmat_edges(np.random.default_rng(10), 14, 8)
    jobs = {}
    for graph in (True, False):
        monkeypatch.setattr(pk, "SWEEP_GRAPH_MAX_EDGES", (1 << 21) if graph else -1)
        g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 14)
        job = PageRank(cupy, tol=1e-8, fallback_fraction=0.0 if fallback else 0.1)
        job.run_static(g, IdentityMap())
        rounds = [job.work["iterations"]]
        if fallback:
            for b in range(2):
                delta = random_delta(cupy, g, 200, 70 + b)
                apply_delta(g, delta)
                job.update(g, delta, IdentityMap())
                assert job.work["mode"] == "fallback"
                rounds.append(job.work["iterations"])
        assert (job.last_sweep.graph_launches > 0) == graph and job.last_sweep.use_graph == graph
        assert_exact_residual(job, g)
        jobs[graph] = (job, rounds)
    (a, ra), (b, rb) = jobs[True], jobs[False]
    assert ra == rb and ra[0] > 1
    assert l1(a.ranks(), b.ranks()) < 1e-12
    assert a.rnorm == pytest.approx(b.rnorm, rel=1e-3) and a.total == pytest.approx(b.total, rel=1e-12)


def test_frontier_trace_on_the_device():
    """push_trace=True on the device: a row per round (rounds launched one by one, an event after each), the
    same bound."""
    s, d = rmat_edges(np.random.default_rng(9), 14, 16)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 14)
    vm = IdentityMap()
    job = PageRank(cupy, tol=1e-7, push_mode="frontier", push_trace=True, frontier_scale=4.0, frontier_tail=0.05)
    job.run_static(g, vm)
    delta = random_delta(cupy, g, 200, 3)
    apply_delta(g, delta)
    job.update(g, delta, vm)
    push = job.last_push
    rows = push.trace_rows().get()
    assert rows.shape[0] == job.work["iterations"] > 0 and not push.graph_used
    assert len(push.events) >= rows.shape[0]
    assert rows[-1, 7] <= job.budget * job.tol * job.total * (1 + 1e-9) < rows[0, 7]
    assert job.rnorm == pytest.approx(float(cupy.abs(job.r).sum()), rel=1e-9)


@pytest.mark.parametrize("form", ["google", "residual"])
def test_fused_pushes_on_random_event_streams(form):
    """Vertices added and removed, slots reused, on the device: both push forms against networkx, with an exact
    push state after every batch."""
    rng = random.Random(23)
    h = Harness(cupy)
    h.apply(random_batch(rng, h.oracle, 40, 150))
    job = PageRank(cupy, tol=1e-9, fallback_fraction=1e9, push_form=form)
    job.run_static(h.graph, h.vmap)
    for _ in range(8):
        delta = h.apply(random_batch(rng, h.oracle, 40, 10))
        job.update(h.graph, delta, h.vmap)
        assert job.work["mode"] == "incremental"
        assert pagerank_l1(job, h) <= job.error_bound() + 1e-6
        assert_exact_residual(job, h.graph)


def test_google_pushes_read_fewer_edges_on_rmat():
    """R-MAT 16, 0.01 % and 0.1 % batches, the same deltas: the Google form (default) pushes along fewer edges in
    fewer rounds than the residual form, both within the bound with an exact push state."""
    s, d = rmat_edges(np.random.default_rng(9), 16, 16)
    edges, rounds = {}, {}
    for form in ("google", "residual"):
        g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 16)
        vm = IdentityMap()
        job = PageRank(cupy, tol=1e-6, push_form=form)
        job.run_static(g, vm)
        m = g.num_edges
        edges[form] = rounds[form] = 0
        for b, f in enumerate((1e-4, 1e-3, 1e-4, 1e-3)):
            delta = random_delta(cupy, g, max(2, int(f * m)), 50 + b)
            apply_delta(g, delta)
            job.update(g, delta, vm)
            assert job.work["mode"] == "incremental"
            assert job.rnorm <= job.budget * job.tol * job.total * (1 + 1e-9)
            assert job.rnorm == pytest.approx(float(cupy.abs(job.r).sum()), rel=1e-9)
            assert_exact_residual(job, g)
            edges[form] += job.work["edges_touched"]
            rounds[form] += job.work["iterations"]
    assert edges["google"] < 0.8 * edges["residual"], edges
    assert rounds["google"] < rounds["residual"], rounds


def _same_corrections(fused, ref):
    n = min(fused.z.shape[0], ref.z.shape[0])
    assert n > 0
    assert float(cupy.abs(fused.z[:n] - ref.z[:n]).max()) < 1e-9
    assert float(cupy.abs(fused.r[:n] - ref.r[:n]).max()) < 1e-9
    assert bool((fused.k[:n] == ref.k[:n]).all())
    assert fused.total == pytest.approx(ref.total, rel=1e-12)
    assert fused.rnorm == pytest.approx(ref.rnorm, rel=1e-9, abs=1e-12)
    assert fused.rnorm == pytest.approx(float(cupy.abs(fused.r).sum()), rel=1e-9, abs=1e-12)


def test_fused_corrections_equal_the_array_program_on_event_streams():
    """Step 1 alone (a budget no batch exceeds), vertices added, removed, slots reused, on the device:
    the fused corrections (atomics in any order) leave z, r, k, S and R as the array program does."""
    rng = random.Random(31)
    h = Harness(cupy)
    h.apply(random_batch(rng, h.oracle, 40, 150))
    params = {"tol": 1e-9, "budget": 1e12, "fallback_fraction": 1e9}
    fused, ref = PageRank(cupy, fused=False, fused_push=True, **params), PageRank(cupy, fused=False, **params)
    fused.run_static(h.graph, h.vmap)
    ref.run_static(h.graph, h.vmap)
    for _ in range(10):
        delta = h.apply(random_batch(rng, h.oracle, 40, 12))
        fused.update(h.graph, delta, h.vmap)
        ref.update(h.graph, delta, h.vmap)
        assert fused.work["iterations"] == ref.work["iterations"] == 0
        _same_corrections(fused, ref)


def test_fused_corrections_on_rmat_hubs():
    s, d = rmat_edges(np.random.default_rng(13), 14, 16)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 14)
    vm = IdentityMap()
    params = {"tol": 1e-7, "budget": 1e12}
    fused, ref = PageRank(cupy, fused=False, fused_push=True, **params), PageRank(cupy, fused=False, **params)
    fused.run_static(g, vm)
    ref.run_static(g, vm)
    for b, size in enumerate((20, 200, 2000)):
        delta = random_delta(cupy, g, size, 50 + b)
        apply_delta(g, delta)
        fused.update(g, delta, vm)
        ref.update(g, delta, vm)
        _same_corrections(fused, ref)


def test_fused_corrections_owner_stamps_on_the_device():
    """Owner entries by epoch stamps (atomicMax on the device): a large batch then smaller ones (stale stamps with
    larger entries), hub sources repeated, and the epoch's wrap: the corrections equal the array program's."""
    s, d = rmat_edges(np.random.default_rng(17), 12, 16)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 12)
    vm = IdentityMap()
    params = {"tol": 1e-7, "budget": 1e12}
    fused, ref = PageRank(cupy, fused=False, fused_push=True, **params), PageRank(cupy, fused=False, **params)
    fused.run_static(g, vm)
    ref.run_static(g, vm)
    for b, size in enumerate((3000, 30, 300, 7, 100)):
        if b == 3:
            fused._epoch = 1 << 31                      # the next update zeroes the scratch and restarts at 1
        delta = random_delta(cupy, g, size, 70 + b)
        apply_delta(g, delta)
        fused.update(g, delta, vm)
        ref.update(g, delta, vm)
        _same_corrections(fused, ref)
    assert fused._epoch == 2


def test_google_pushes_hand_over_to_the_residual_form_where_their_scale_collapses():
    """The emulation's counterexample on the device (slots reused, the other live vertices dangling): the Google
    form's pushes shrank T with R until the check handed the rounds to the residual form; within the bound."""
    batches = [[(1, 0, 3, 1.0), (4, 0, None, None), (1, 2, 4, 1.0), (1, 2, 6, 1.0), (1, 5, 4, 1.0)],
               [(1, 0, 1, 1.0), (4, 2, None, None), (4, 5, None, None), (1, 0, 2, 1.0)]]
    h = Harness(cupy)
    h.apply(batches[0])
    job = PageRank(cupy, tol=1e-9, fallback_fraction=1e9)
    job.run_static(h.graph, h.vmap)
    job.update(h.graph, h.apply(batches[1]), h.vmap)
    assert job.work["mode"] == "incremental" and job.work["iterations"] < 100
    assert job.rnorm <= job.budget * job.tol * job.total * (1 + 1e-9)
    assert pagerank_l1(job, h) <= job.error_bound() + 1e-9


# ---- the fused Google-matrix sweeps (the GPU default for static runs and dense finishes) ----------------------

@settings(max_examples=25, deadline=None)
@given(event_batches(max_batches=3, max_events=30))
def test_google_static_random_graphs(batches):
    """Dangling vertices, removed vertices (dead slots), reused slots: the default static run (fused Google
    sweeps) equals the array program's power iterations (same start, same rounds, same push state), gives dead
    slots nothing, and is within the error bound of networkx."""
    h = Harness(cupy)
    for events in batches:
        h.apply(events)
    fused, ref = PageRank(cupy, tol=TOL), PageRank(cupy, tol=TOL, fused=False)
    fused.run_static(h.graph, h.vmap)
    ref.run_static(h.graph, h.vmap)
    assert fused.work["iterations"] == ref.work["iterations"]
    assert_same_push_state(fused, ref, cupy)
    dead = ~fused._live_mask
    assert not bool(fused.z[: dead.shape[0]][dead].any()) and not bool(fused.r[: dead.shape[0]][dead].any())
    assert pagerank_l1(fused, h) <= fused.error_bound() + 1e-9


@pytest.mark.parametrize("size", [2, 3, 7])
def test_google_static_on_a_regular_graph_sweeps_nothing(size):
    """A directed cycle (hypothesis found the 2-cycle, call 1 of bench-results/2026-11-26-princ2): the uniform
    start is the fixed point, so the array program stops before its first sweep; the fused run decides the same on
    the device and keeps the same push state."""
    h = Harness(cupy)
    h.apply([(1, v, (v + 1) % size, 1.0) for v in range(size)])
    fused, ref = PageRank(cupy, tol=TOL), PageRank(cupy, tol=TOL, fused=False)
    fused.run_static(h.graph, h.vmap)
    ref.run_static(h.graph, h.vmap)
    assert fused.work["iterations"] == ref.work["iterations"] == 1
    assert_same_push_state(fused, ref, cupy)
    assert pagerank_l1(fused, h) <= fused.error_bound() + 1e-9


@pytest.mark.parametrize("transpose", ["atomic", "sort", "cusparse"])
@pytest.mark.parametrize("tpr", [1, 2, 4, 16, 32, None])
def test_google_rmat_every_lane_width(tpr, transpose, monkeypatch):
    """R-MAT scale 14 (hubs: the block-per-row kernel) for each lanes-per-row width and transpose: the fused
    static run equals the array program's (iterations and push state); few control-block reads."""
    monkeypatch.setattr(pk, "TRANSPOSE", transpose)
    s, d = rmat_edges(np.random.default_rng(3), 14, 16)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 14)
    if tpr is not None:
        monkeypatch.setattr(pk, "GOOGLE_LANES", tpr)
    fused, ref = PageRank(cupy, tol=1e-7), PageRank(cupy, tol=1e-7, fused=False)
    fused.run_static(g, IdentityMap())
    ref.run_static(g, IdentityMap())
    rounds = fused.work["iterations"]
    assert rounds == ref.work["iterations"] > 5
    assert_same_push_state(fused, ref, cupy)
    sweep = fused.last_sweep
    assert sweep.tpr == min(tpr or 2, pk.threads_per_row(g.num_edges / (1 << 14)))
    if sweep.tpr <= 4:
        assert int(sweep.heavy.shape[0]) > 0                          # hubs went to the block-per-row kernel
    assert sweep.reads <= 2 + rounds // 4


def test_google_transposes_hold_the_same_in_edges():
    """On the device: the atomic transpose holds each row's in-edges (any order), as the sorted one and cuSPARSE's
    do (in source order)."""
    s, d = rmat_edges(np.random.default_rng(2), 14, 16)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 14)
    csr = g.adjacency()
    rows, m = 1 << 14, int(csr.offsets[-1])
    ip_a, ia = pk.in_edges(cupy, csr.offsets, csr.cols, rows, m, "atomic")
    ip_s, isrt = pk.in_edges(cupy, csr.offsets, csr.cols, rows, m, "sort")
    ip_c, icus = pk.in_edges(cupy, csr.offsets, csr.cols, rows, m, "cusparse")
    assert bool((ip_a == ip_s).all()) and bool((ip_c == ip_s).all())
    row = cupy.repeat(cupy.arange(rows, dtype=cupy.int64), cupy.diff(ip_a).get().tolist())
    want = isrt.astype(cupy.int64) + (row << 32)                      # (row, source) keys, in order
    for got in (ia, icus):                                            # the same sources in each row
        assert bool((cupy.sort(got.astype(cupy.int64) + (row << 32)) == want).all())


def test_google_dense_finish_equals_the_array_program():
    """Every update finished densely (fallback): the fused corrections and Google sweeps
    equal the array program's corrections and power iterations (mode, rounds, push state), within the bound of
    the exact ranks."""
    s, d = rmat_edges(np.random.default_rng(5), 13, 8)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 13)
    vm = IdentityMap()
    fused, ref = PageRank(cupy, tol=1e-8, fallback_fraction=0.0), PageRank(cupy, tol=1e-8, fallback_fraction=0.0,
                                                                           fused=False)
    fused.run_static(g, vm)
    ref.run_static(g, vm)
    assert_same_push_state(fused, ref, cupy)
    for b in range(5):
        delta = random_delta(cupy, g, 40 * (b + 1), b)
        apply_delta(g, delta)
        fused.update(g, delta, vm)
        ref.update(g, delta, vm)
        assert fused.work["mode"] == ref.work["mode"] == "fallback"
        assert fused.work["iterations"] == ref.work["iterations"] > 0
        assert_same_push_state(fused, ref, cupy)
        exact = PageRank(cupy, tol=1e-13, fused=False)
        exact.run_static(g, vm)
        assert l1(fused.ranks(), exact.ranks()) <= fused.error_bound() + exact.error_bound()


def test_google_default_against_networkx_on_event_streams():
    """The default job on a random event stream (static, then pushes; dense finishes by fallback): networkx's
    ranks within the error bound after each batch."""
    rng = random.Random(41)
    h = Harness(cupy)
    h.apply(random_batch(rng, h.oracle, 60, 250))
    job = PageRank(cupy, tol=TOL)
    job.run_static(h.graph, h.vmap)
    assert job.last_sweep is not None
    assert pagerank_l1(job, h) <= job.error_bound() + 1e-9
    for i in range(6):
        delta = h.apply(random_batch(rng, h.oracle, 60, 40 if i % 2 else 4))
        job.update(h.graph, delta, h.vmap)
        assert pagerank_l1(job, h) <= job.error_bound() + 1e-9


def test_google_gives_dead_slots_nothing():
    """Dead slots below the last live one, on the device: the fused static run and a dense finish leave them at
    z = r = 0 and equal the array program's state and networkx's ranks."""
    from tests.oracle import ADD_EDGE
    h = dead_slot_graph(cupy)
    fused = PageRank(cupy, tol=TOL, fallback_fraction=0.0)
    ref = PageRank(cupy, tol=TOL, fallback_fraction=0.0, fused=False)
    fused.run_static(h.graph, h.vmap)
    ref.run_static(h.graph, h.vmap)
    dead = cupy.flatnonzero(~fused._live_mask[: fused._rows])
    assert dead.shape[0] >= 2
    assert not bool(fused.z[dead].any()) and not bool(fused.r[dead].any())
    assert_same_push_state(fused, ref, cupy)
    assert pagerank_l1(fused, h) <= fused.error_bound() + 1e-12
    delta = h.apply([(ADD_EDGE, 8, 0, 1.0), (ADD_EDGE, 13, 1, 1.0)])
    fused.update(h.graph, delta, h.vmap)
    ref.update(h.graph, delta, h.vmap)
    assert fused.work["mode"] == ref.work["mode"] == "fallback"
    assert not bool(fused.z[dead].any()) and not bool(fused.r[dead].any())
    assert_same_push_state(fused, ref, cupy)
    assert pagerank_l1(fused, h) <= fused.error_bound() + 1e-12
