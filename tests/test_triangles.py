"""Triangle counting, static and incremental, against networkx triangles(G.to_undirected())."""
import numpy as np
import pytest
from hypothesis import given, settings

from tests.algo_support import (
    ADD_EDGE,
    DELETE_EDGE,
    DELETE_VERTEX,
    Harness,
    IdentityMap,
    backends,
    check_triangles,
    event_batches,
    long_stream,
    outputs_equal,
    rmat_edges,
    work_graph_and_delta,
)
from vinestream.algorithms import create_job
from vinestream.algorithms.triangles import Triangles, count_static, undirected_keys
from vinestream.structures.delta import apply_delta

FORCE = {"fallback_fraction": 1e9}     # never fall back: exercise the incremental path


@settings(max_examples=40, deadline=None)
@given(event_batches(max_batches=1, max_events=30))
def test_static_matches_networkx(batches):
    h = Harness()
    h.apply(batches[0])
    job = Triangles(np)
    job.run_static(h.graph, h.vmap)
    check_triangles(job, h)


@settings(max_examples=40, deadline=None)
@given(event_batches())
def test_incremental_matches_networkx(batches):
    h = Harness()
    job = Triangles(np, **FORCE)
    job.run_static(h.graph, h.vmap)
    for events in batches:
        delta = h.apply(events)
        job.update(h.graph, delta, h.vmap)
        check_triangles(job, h)


def test_directed_changes_with_reverse_edges():
    """u->v deleted while v->u stays keeps the triangle; both directions at once count once."""
    h = Harness()
    job = Triangles(np, **FORCE)
    h.apply([(ADD_EDGE, 1, 2, 1.0), (ADD_EDGE, 2, 1, 1.0), (ADD_EDGE, 2, 3, 1.0), (ADD_EDGE, 3, 1, 1.0)])
    job.run_static(h.graph, h.vmap)
    check_triangles(job, h)
    steps = [[(DELETE_EDGE, 1, 2, None)],                                  # 2->1 remains: no change
             [(DELETE_EDGE, 2, 1, None)],                                  # now the triangle is gone
             [(ADD_EDGE, 1, 2, 1.0), (ADD_EDGE, 2, 1, 1.0)],               # both directions: one edge
             [(ADD_EDGE, 1, 4, 1.0), (ADD_EDGE, 4, 2, 1.0), (ADD_EDGE, 3, 4, 1.0)],  # 3 new edges, 3 triangles
             [(DELETE_VERTEX, 1, None, None), (ADD_EDGE, 1, 3, 1.0), (ADD_EDGE, 4, 1, 1.0)]]  # slot reuse
    for events in steps:
        delta = h.apply(events)
        job.update(h.graph, delta, h.vmap)
        check_triangles(job, h)


@pytest.mark.parametrize("seed", [1, 2])
def test_long_stream_incremental_equals_static(seed):
    job = Triangles(np, **FORCE)
    n = 0
    for h, delta in long_stream(seed):
        if n == 0:
            job.run_static(h.graph, h.vmap)
        else:
            job.update(h.graph, delta, h.vmap)
            assert job.work["mode"] == "incremental"
        fresh = Triangles(np)
        fresh.run_static(h.graph, h.vmap)
        assert outputs_equal(job.output(h.vmap), fresh.output(h.vmap), "triangles")
        assert job.total == fresh.total
        check_triangles(job, h)
        n += 1
    assert n >= 51 and h.removed_total > 5 and h.reused_total > 0


def test_chunked_static_equals_unchunked():
    s, d = rmat_edges(np.random.default_rng(3), 9, 8)
    und = undirected_keys(np, s, d)
    whole, _ = count_static(np, 1 << 9, und, chunk=1 << 30)
    tiny, _ = count_static(np, 1 << 9, und, chunk=7)
    assert (whole == tiny).all() and int(whole.sum()) > 0


def test_state_roundtrip():
    gen = long_stream(5, batches=3)
    h, _ = next(gen)
    job = Triangles(np, **FORCE)
    job.run_static(h.graph, h.vmap)
    copy = Triangles(np, **FORCE)
    copy.load_state(job.state())
    for h, delta in gen:
        job.update(h.graph, delta, h.vmap)
        copy.update(h.graph, delta, h.vmap)
        assert outputs_equal(job.output(h.vmap), copy.output(h.vmap), "triangles")


def test_incremental_does_less_work_on_a_small_batch():
    g, delta = work_graph_and_delta()
    assert g.num_edges >= 100_000
    vm = IdentityMap()
    job = Triangles(np)
    job.run_static(g, vm)
    apply_delta(g, delta)
    job.update(g, delta, vm)
    assert job.work["mode"] == "incremental"
    static = Triangles(np)
    static.run_static(g, vm)
    assert job.total == static.total
    assert job.work["edges_touched"] * 10 < static.work["edges_touched"]


@pytest.mark.parametrize("xp", backends())
def test_incremental_on_each_backend(xp):
    """A stream on each backend (CuPy where a GPU answers) gives the networkx counts."""
    import random

    from tests.algo_support import random_batch
    rng = random.Random(9)
    h = Harness(xp)
    h.apply(random_batch(rng, h.oracle, 30, 100))
    job = create_job("triangles", xp, **FORCE)
    job.run_static(h.graph, h.vmap)
    for _ in range(5):
        job.update(h.graph, h.apply(random_batch(rng, h.oracle, 30, 12)), h.vmap)
        check_triangles(job, h)
