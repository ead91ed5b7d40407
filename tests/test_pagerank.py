"""PageRank, static and incremental, against networkx pagerank(G, weight=None)."""
import random

import numpy as np
import pytest
from hypothesis import given, settings

from tests.algo_support import (
    ADD_EDGE,
    ADD_VERTEX,
    DELETE_VERTEX,
    Harness,
    IdentityMap,
    assert_state_roundtrip,
    backends,
    event_batches,
    long_stream,
    pagerank_l1,
    random_batch,
    table_dict,
    work_graph_and_delta,
)
from vinestream.algorithms import create_job
from vinestream.algorithms.pagerank import PageRank
from vinestream.structures.delta import apply_delta

TOL = 1e-8
# never fall back, never switch a round to dense: exercise the frontier path
FORCE = {"tol": TOL, "fallback_fraction": 1e9, "dense_fraction": 1e9}


def l1_between(a, b) -> float:
    ra, rb = table_dict(a, "rank"), table_dict(b, "rank")
    assert set(ra) == set(rb)
    return sum(abs(ra[v] - rb[v]) for v in ra)


@settings(max_examples=40, deadline=None)
@given(event_batches(max_batches=1, max_events=30))
def test_static_matches_networkx(batches):
    h = Harness()
    h.apply(batches[0])
    job = PageRank(np, tol=TOL)
    job.run_static(h.graph, h.vmap)
    assert pagerank_l1(job, h) < 1e-4


@settings(max_examples=40, deadline=None)
@given(event_batches())
def test_incremental_matches_networkx(batches):
    h = Harness()
    job = PageRank(np, **FORCE)
    job.run_static(h.graph, h.vmap)
    for events in batches:
        job.update(h.graph, h.apply(events), h.vmap)
        assert pagerank_l1(job, h) < 1e-4


def test_vertex_count_changes_stay_exact():
    """Isolated vertices added / removed change everyone's teleport share: still exact, no fallback."""
    h = Harness()
    h.apply([(ADD_EDGE, i, (i * 7 + 3) % 20, 1.0) for i in range(20)])
    job = PageRank(np, **FORCE)
    job.run_static(h.graph, h.vmap)
    for events in ([(ADD_VERTEX, 100, None, None)], [(ADD_VERTEX, 101, None, None), (ADD_EDGE, 101, 3, 1.0)],
                   [(DELETE_VERTEX, 3, None, None)], [(DELETE_VERTEX, 100, None, None), (ADD_EDGE, 3, 5, 1.0)]):
        job.update(h.graph, h.apply(events), h.vmap)
        assert job.work["mode"] == "incremental"
        assert pagerank_l1(job, h) < 1e-6


@pytest.mark.parametrize("params", [FORCE, {"tol": TOL}], ids=["frontier", "default"])
def test_long_stream_incremental_equals_static(params):
    job = PageRank(np, **params)
    n = 0
    for h, delta in long_stream(3):
        if n == 0:
            job.run_static(h.graph, h.vmap)
        else:
            job.update(h.graph, delta, h.vmap)
        fresh = PageRank(np, tol=TOL)
        fresh.run_static(h.graph, h.vmap)
        assert l1_between(job.output(h.vmap), fresh.output(h.vmap)) < 1e-5
        assert pagerank_l1(job, h) < 1e-4
        n += 1
    assert n >= 51 and h.removed_total > 5 and h.reused_total > 0


def test_state_roundtrip():
    assert_state_roundtrip(lambda: PageRank(np, **FORCE), seed=6, steps=4)


def test_incremental_does_less_work_on_a_small_batch():
    g, delta = work_graph_and_delta()
    vm = IdentityMap()
    job = PageRank(np)                     # default tolerance 1e-6 and default switches
    job.run_static(g, vm)
    apply_delta(g, delta)
    job.update(g, delta, vm)
    assert job.work["mode"].startswith("incremental")
    static = PageRank(np)
    static.run_static(g, vm)
    assert float(np.abs(job.ranks() - static.ranks()).sum()) < 1e-5
    assert job.work["edges_touched"] < static.work["edges_touched"]


@pytest.mark.parametrize("xp", backends())
def test_incremental_on_each_backend(xp):
    rng = random.Random(7)
    h = Harness(xp)
    h.apply(random_batch(rng, h.oracle, 30, 100))
    job = create_job("pagerank", xp, **FORCE)
    job.run_static(h.graph, h.vmap)
    for _ in range(5):
        job.update(h.graph, h.apply(random_batch(rng, h.oracle, 30, 12)), h.vmap)
        assert pagerank_l1(job, h) < 1e-4


@pytest.mark.parametrize("xp", backends())
def test_library_spmv_and_array_program_agree(xp):
    """Dense sweeps through scipy / cupyx SpMV give the same ranks as the bincount reference."""
    rng = random.Random(11)
    h = Harness(xp)
    h.apply(random_batch(rng, h.oracle, 60, 300))
    lib, ref = PageRank(xp, tol=TOL, fused=False), PageRank(xp, tol=TOL, library_spmv=False, fused=False)
    lib.run_static(h.graph, h.vmap)
    ref.run_static(h.graph, h.vmap)
    assert lib.work["iterations"] == ref.work["iterations"]
    assert l1_between(lib.output(h.vmap), ref.output(h.vmap)) < 1e-12


@pytest.mark.parametrize("seed", [3, 4])
def test_incremental_error_stays_under_the_stated_bound(seed):
    """The docstring's bound ||x - x*||_1 <= 2 d R / ((1 - d) S - d R) holds against networkx at a tight
    tolerance after every batch, and with the defaults it is at most 2 * budget * tol * d / (1 - d) (+1%)."""
    tol, budget, d = 1e-6, 2.0, 0.85
    rng = random.Random(seed)
    h = Harness()
    h.apply(random_batch(rng, h.oracle, 60, 400))
    job = PageRank(np, tol=tol, budget=budget)
    job.run_static(h.graph, h.vmap)
    assert pagerank_l1(job, h) <= job.work["error_bound"]
    for _ in range(6):
        job.update(h.graph, h.apply(random_batch(rng, h.oracle, 60, 6, p_vertex_delete=0.0)), h.vmap)
        bound = job.work["error_bound"]
        assert pagerank_l1(job, h) <= bound
        assert bound <= 1.01 * 2 * budget * tol * d / (1 - d)


def test_static_starts_from_the_uniform_vector_like_the_power_iteration():
    """On a graph without dangling vertices (the real graphs' case) static PageRank needs as many sweeps as
    the scipy power iteration from 1/n to the same tolerance.  (With many dangling vertices, as on R-MAT,
    the normalised iteration contracts faster than the residual push: see the bench's iteration counts.)"""
    import scipy.sparse as sp

    from tests.algo_support import rmat_edges
    from vinestream.stream.bench.peers import scipy_pagerank
    from vinestream.structures.registry import build
    s, d = rmat_edges(np.random.default_rng(8), 11, 8)
    s, d = np.concatenate([s, d]), np.concatenate([d, s])            # symmetric: every vertex has out-edges
    ids = np.unique(np.concatenate([s, d]))
    s, d = np.searchsorted(ids, s), np.searchsorted(ids, d)
    n = int(ids.shape[0])
    g = build("csr", np, s, d, n)
    job = PageRank(np, tol=1e-6)
    job.run_static(g, IdentityMap())
    a = sp.csr_matrix((np.ones(s.shape[0]), (s, d)), shape=(n, n))
    a.data[:] = 1.0
    _, x, iterations = scipy_pagerank(a, n, tol=1e-6)
    assert abs(job.work["iterations"] - iterations) <= 2
    assert float(np.abs(job.ranks()[:n] - x).sum()) < 1e-5


@pytest.mark.parametrize("xp", backends())
@pytest.mark.parametrize("seed", [1, 2])
def test_sweep_operators_agree_with_the_array_program(xp, seed):
    """d A^T D^-1 x three ways: the scaled transpose (static runs), the out-CSR used as CSC (dense sweeps of an
    update, no transpose) and the gather + bincount reference, on a graph with dangling and dead slots."""
    from vinestream.algorithms.pagerank import sweep_operator
    from vinestream.structures.registry import build
    rng = np.random.default_rng(seed)
    n, m = 300, 2000
    s, d = rng.integers(0, n - 20, m), rng.integers(0, n - 20, m)   # the last 20 slots stay dead
    keys = np.unique((s[s != d] << 32) | d[s != d])                 # a simple graph: distinct, no loops
    s, d = keys >> 32, keys & 0xFFFFFFFF
    keep = np.ones(s.shape[0], dtype=bool)
    g = build("csr", xp, xp.asarray(s), xp.asarray(d), n)
    rows = n - 20
    x = xp.asarray(rng.random(rows))
    ref = sweep_operator(xp, g.adjacency(), rows, 0.85, use_library=False)(x)
    for transposed in (True, False):
        got = sweep_operator(xp, g.adjacency(), rows, 0.85, transposed=transposed)(x)
        assert float(xp.abs(got - ref).max()) < 1e-12
    deg = np.bincount(s[keep], minlength=n)[:rows]
    expect = np.zeros(rows)
    np.add.at(expect, d[keep], 0.85 * np.asarray(x.get() if hasattr(x, "get") else x)[s[keep]] / deg[s[keep]])
    assert np.abs(np.asarray(ref.get() if hasattr(ref, "get") else ref) - expect).max() < 1e-12


def test_dense_finish_reaches_the_static_accuracy_and_counts_its_sweeps():
    """A batch whose frontier goes wide is finished by dense sweeps to R < tol * S (the static form's stop),
    and the work counters split local rounds from dense sweeps."""
    g, delta = work_graph_and_delta(fraction=0.01)
    vm = IdentityMap()
    job = PageRank(np, tol=1e-6, fallback_fraction=1.0)
    job.run_static(g, vm)
    apply_delta(g, delta)
    job.update(g, delta, vm)
    w = job.work
    assert w["mode"] == "incremental+dense"
    assert w["dense_sweeps"] >= 1 and w["iterations"] == w["local_rounds"] + w["dense_sweeps"]
    assert job.rnorm < job.tol * job.total
    static = PageRank(np, tol=1e-6)
    static.run_static(g, vm)
    assert float(np.abs(job.ranks() - static.ranks()).sum()) < 2 * static.error_bound()


def test_a_local_change_stays_local():
    """A batch on a pendant path far from the rest changes ranks only near it: no dense sweep, and the rounds
    touch a few vertices, not the graph."""
    from vinestream.structures.delta import BatchDelta
    from vinestream.structures.registry import build
    g0, _ = work_graph_and_delta()
    n = int(g0.vertex_capacity)
    csr = g0.adjacency()
    s = np.repeat(np.arange(n), np.diff(csr.offsets[: n + 1])).astype(np.int64)
    d = csr.cols.astype(np.int64)
    # a pendant chain n .. n+9 hanging off vertex 0 (edges into the chain only: rank flows out of the graph)
    chain = np.arange(n, n + 10)
    s = np.concatenate([s, [0], chain[:-1]])
    d = np.concatenate([d, [n], chain[1:]])
    g = build("csr", np, s, d, n + 10)
    vm = IdentityMap()
    job = PageRank(np, tol=1e-6)
    job.run_static(g, vm)
    e = np.zeros(0, dtype=np.int32)
    tip = np.asarray([n + 9], dtype=np.int32)
    delta = BatchDelta(0, e, e, tip, np.asarray([n + 5], dtype=np.int32), np.ones(1, np.float32),
                       e, e, e, e, np.zeros(0, np.float32))
    apply_delta(g, delta)
    job.update(g, delta, vm)
    assert job.work["mode"] == "incremental" and job.work["dense_sweeps"] == 0
    assert job.work["frontier"] < 100
    static = PageRank(np, tol=1e-8)
    static.run_static(g, vm)
    assert float(np.abs(job.ranks() - static.ranks()).sum()) <= job.work["error_bound"]


def _exact_residual(job, graph):
    """``1 + d P^T z - z`` on the live slots, recomputed from the graph (no dangling redistribution)."""
    csr = graph.adjacency()
    rows = job.z.shape[0]
    offsets = np.concatenate([csr.offsets, np.full(rows + 1 - csr.offsets.shape[0], csr.offsets[-1])])
    deg = np.diff(offsets)
    src = np.repeat(np.arange(rows), deg)
    push = np.where(deg > 0, job.damping * job.z / np.maximum(deg, 1), 0.0)
    live = job._live_mask[:rows]
    return np.where(live, 1.0 + np.bincount(csr.cols, weights=push[src], minlength=rows) - job.z, 0.0)


@settings(max_examples=30, deadline=None)
@given(event_batches(max_batches=4, max_events=30))
def test_google_sweeps_leave_an_exact_push_state(batches):
    """The Google-matrix power iterations end in ``z = c x``, ``r = c (x' - x)``: r is the exact residual of z
    on the current graph, R < tol * S, and the ranks are within the error bound of networkx's; updates
    finished by dense sweeps (fallback 0) keep all three."""
    h = Harness()
    h.apply(batches[0])
    job = PageRank(np, tol=TOL, sweeps="google", fallback_fraction=0.0)
    job.run_static(h.graph, h.vmap)
    for events in [None, *batches[1:]]:
        if events is not None:
            job.update(h.graph, h.apply(events), h.vmap)
        if h.graph.num_vertices == 0:
            continue
        np.testing.assert_allclose(job.r, _exact_residual(job, h.graph), rtol=0, atol=1e-9 * max(job.total, 1))
        assert job.rnorm <= (1 if events is None else job.budget) * TOL * job.total
        assert pagerank_l1(job, h) <= job.error_bound() + 1e-12


def test_google_sweeps_need_fewer_rounds_where_many_vertices_dangle():
    """R-MAT 12 (a third of the vertices without out-edges): the Google form stops in far fewer rounds than
    pushing every vertex, both at R < tol * S, and its ranks are at least as close to networkx's."""
    import networkx as nx

    from tests.algo_support import rmat_edges
    from vinestream.structures.registry import build
    s, d = rmat_edges(np.random.default_rng(3), 12, 8)
    g = build("csr", np, s, d, 1 << 12)
    jobs = {form: PageRank(np, tol=1e-6, sweeps=form) for form in ("google", "jacobi")}
    G = nx.DiGraph()
    G.add_nodes_from(range(1 << 12))
    G.add_edges_from(zip(s.tolist(), d.tolist()))
    ref = nx.pagerank(G, alpha=0.85, tol=1e-14, max_iter=10_000)
    ref = np.array([ref[v] for v in range(1 << 12)])
    err = {}
    for form, job in jobs.items():
        job.run_static(g, IdentityMap())
        assert job.rnorm < 1e-6 * job.total
        err[form] = float(np.abs(job.ranks()[: 1 << 12] - ref).sum())
        assert err[form] <= job.error_bound()
    assert jobs["google"].work["iterations"] * 2 < jobs["jacobi"].work["iterations"]
    assert err["google"] <= err["jacobi"]


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_the_cpu_sweeps_row_blocks_give_the_one_products_ranks_bitwise(monkeypatch, threads):
    """On NumPy the static sweeps' SpMV runs as row blocks on threads (SciPy's SpMV releases the GIL and uses one
    core): every row's sum is the one product's, so the static ranks are bitwise those of one SpMV, and so are the
    iterations."""
    import scipy.sparse as sp

    from tests.algo_support import rmat_edges
    from vinestream.algorithms import pagerank as pr
    from vinestream.structures.registry import build
    rng = np.random.default_rng(threads)
    a = sp.random(3000, 3000, density=0.004, format="csr", random_state=threads)
    x = rng.random(3000)
    monkeypatch.setattr(pr, "SPMV_PARALLEL_MIN_ENTRIES", 0)
    assert np.array_equal(pr._row_parallel(a, threads)(x), a @ x)
    s, d = rmat_edges(np.random.default_rng(9), 12, 8)
    g = build("csr", np, s[s != d], d[s != d], 1 << 12)
    ranks = {}
    for split in (1, threads):
        monkeypatch.setattr(pr, "SPMV_THREADS", split)
        job = PageRank(np, tol=1e-8)
        job.run_static(g, IdentityMap())
        ranks[split] = (job.ranks().copy(), job.work["iterations"])
    assert np.array_equal(ranks[1][0], ranks[threads][0]) and ranks[1][1] == ranks[threads][1]
