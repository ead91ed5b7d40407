"""BFS, static and incremental, against networkx single_source_shortest_path_length."""
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.algo_support import (
    ADD_EDGE,
    DELETE_EDGE,
    DELETE_VERTEX,
    Harness,
    IdentityMap,
    assert_state_roundtrip,
    backends,
    check_bfs,
    event_batches,
    long_stream,
    outputs_equal,
    random_batch,
    split_delta,
    table_dict,
    work_graph_and_delta,
)
from vinestream.algorithms import create_job
from vinestream.algorithms.bfs import BFS
from vinestream.structures.delta import apply_delta

FORCE = {"fallback_fraction": 1e9}


@pytest.mark.parametrize("library_bfs", [True, False])      # scipy's traversal / the NumPy DO-BFS
@settings(max_examples=40, deadline=None)
@given(event_batches(max_batches=1, max_events=30), st.lists(st.integers(0, 9), min_size=1, max_size=3))
def test_static_matches_networkx(library_bfs, batches, sources):
    h = Harness()
    h.apply(batches[0])
    job = BFS(np, sources=sources, library_bfs=library_bfs)
    job.run_static(h.graph, h.vmap)
    check_bfs(job, h, sources)
    assert (job.in_edges is None) == library_bfs        # the library path builds no index up front


def test_levels_from_a_library_order_on_a_real_sized_graph():
    """scipy's order and predecessors give networkx's levels and valid parents, one source or many."""
    import networkx as nx

    from tests.algo_support import rmat_edges
    from vinestream.algorithms.bfs import bfs_scipy
    from vinestream.structures.registry import build
    s, d = rmat_edges(np.random.default_rng(3), 10, 8)
    keep = s != d
    g = build("csr", np, s[keep], d[keep], 1 << 10)
    G = nx.DiGraph(list(zip(s[keep].tolist(), d[keep].tolist())))
    n = int(g.vertex_capacity)
    for sources in ([int(s[0])], [int(s[0]), int(d[5]), int(s[9])]):
        dist, parent, levels, _, reached = bfs_scipy(g.adjacency(), n, sources)
        ref = nx.multi_source_dijkstra_path_length(G, sources, weight=None)
        assert {v: int(dist[v]) for v in range(n) if dist[v] >= 0} == ref
        assert levels == max(ref.values()) + 1 and reached == len(ref)
        far = np.nonzero(dist > 0)[0]
        assert (dist[parent[far]] == dist[far] - 1).all() and g.contains(parent[far], far.astype(np.int32)).all()
        assert (parent[dist <= 0] == -1).all()


@settings(max_examples=50, deadline=None)
@given(event_batches(), st.lists(st.integers(0, 9), min_size=1, max_size=2))
def test_incremental_matches_networkx(batches, sources):
    h = Harness()
    job = BFS(np, sources=sources, **FORCE)
    job.run_static(h.graph, h.vmap)          # empty graph: sources appear later
    for events in batches:
        job.update(h.graph, h.apply(events), h.vmap)
        check_bfs(job, h, sources)


@settings(max_examples=50, deadline=None)
@given(event_batches(), st.lists(st.integers(0, 9), min_size=1, max_size=2),
       st.lists(st.booleans(), min_size=8, max_size=8))
def test_both_branches_match_networkx(batches, sources, recompute):
    """Batches take the repair or the recompute at random (the cost rule's two branches): every
    result equals networkx, and the in-edge index, built by a repair and kept through recomputes
    by its queue of changes, stays the graph's."""
    h = Harness()
    job = BFS(np, sources=sources)
    job.run_static(h.graph, h.vmap)
    for i, events in enumerate(batches):
        job.fallback_fraction = 0.0 if recompute[i % len(recompute)] else 1e9
        job.update(h.graph, h.apply(events), h.vmap)
        check_bfs(job, h, sources)
        if job.in_edges is not None:
            csr = h.graph.adjacency()
            want = sorted(((csr.cols.astype(np.int64) << 32) | csr.row_ids()).tolist())
            assert sorted(job._in_edge_index(h.graph).keys.tolist()) == want


@pytest.mark.parametrize("structure", ["coo", "graphvine"])
@settings(max_examples=20, deadline=None)
@given(event_batches(), st.lists(st.integers(0, 9), min_size=1, max_size=2))
def test_incremental_on_structures_without_a_csr_matches_networkx(structure, batches, sources):
    """The repair reads a CSR structure's rows directly and asks any other for adjacency(vertices)."""
    from vinestream.structures.registry import create
    h = Harness()
    h.graph = create(structure, np)
    job = BFS(np, sources=sources, **FORCE)
    job.run_static(h.graph, h.vmap)
    for events in batches:
        job.update(h.graph, h.apply(events), h.vmap)
        check_bfs(job, h, sources)


def test_tree_edge_deletion_recomputes_the_subtree_from_its_boundary():
    h = Harness()
    path = [(ADD_EDGE, i, i + 1, 1.0) for i in range(6)]
    h.apply([*path, (ADD_EDGE, 0, 7, 1.0), (ADD_EDGE, 7, 8, 1.0), (ADD_EDGE, 8, 4, 1.0)])
    job = BFS(np, sources=[0], **FORCE)
    job.run_static(h.graph, h.vmap)
    check_bfs(job, h, [0])
    job.update(h.graph, h.apply([(DELETE_EDGE, 1, 2, None)]), h.vmap)   # 2, 3 unreachable
    assert job.work["mode"] == "incremental" and job.work["invalidated"] == 2   # {2, 3}; 4 hangs off 8
    check_bfs(job, h, [0])
    job.update(h.graph, h.apply([(DELETE_VERTEX, 8, None, None), (ADD_EDGE, 3, 2, 1.0)]), h.vmap)
    check_bfs(job, h, [0])
    job.update(h.graph, h.apply([(ADD_EDGE, 0, 3, 1.0), (ADD_EDGE, 9, 5, 1.0)]), h.vmap)  # shortcuts
    check_bfs(job, h, [0])


def test_source_deleted_and_recreated():
    h = Harness()
    h.apply([(ADD_EDGE, 0, 1, 1.0), (ADD_EDGE, 1, 2, 1.0), (ADD_EDGE, 5, 2, 1.0)])
    job = BFS(np, sources=[0, 5], **FORCE)
    job.run_static(h.graph, h.vmap)
    for events in ([(DELETE_VERTEX, 0, None, None)],
                   [(ADD_EDGE, 0, 2, 1.0)],
                   [(DELETE_VERTEX, 5, None, None), (ADD_EDGE, 5, 1, 1.0)]):
        job.update(h.graph, h.apply(events), h.vmap)
        check_bfs(job, h, [0, 5])


@pytest.mark.parametrize("seed", [1, 2])
def test_long_stream_incremental_equals_static(seed):
    sources = [0, 3]
    job = BFS(np, sources=sources, **FORCE)
    n = incremental = 0
    for h, delta in long_stream(seed):
        if n == 0:
            job.run_static(h.graph, h.vmap)
        else:
            job.update(h.graph, delta, h.vmap)
            incremental += job.work["mode"] == "incremental"
        fresh = BFS(np, sources=sources)
        fresh.run_static(h.graph, h.vmap)
        assert outputs_equal(job.output(h.vmap), fresh.output(h.vmap), "distance")
        check_bfs(job, h, sources)
        n += 1
    # restarts only when a source itself is deleted
    assert n >= 51 and h.removed_total > 5 and h.reused_total > 0 and incremental >= 25


def test_state_roundtrip():
    # the copy is built without sources: they come back with the state
    assert_state_roundtrip(lambda: BFS(np, sources=[1], **FORCE), seed=4, steps=5,
                           make_copy=lambda: BFS(np, **FORCE))
def _steady_update(fraction, sources, **params):
    """A job run static, updated once (which builds its in-edge index), then updated again: the
    job after the second update, the first update's work, and a static run on the final graph."""
    g, delta = work_graph_and_delta(fraction=2 * fraction)
    first, second = split_delta(delta)
    vm = IdentityMap()
    job = BFS(np, sources=sources, **params)
    job.run_static(g, vm)
    apply_delta(g, first)
    job.update(g, first, vm)
    first_work = dict(job.work)
    apply_delta(g, second)
    job.update(g, second, vm)
    static = BFS(np, sources=sources)
    static.run_static(g, vm)
    return job, first_work, static, g


def test_incremental_does_less_work_on_a_small_batch():
    job, first_work, static, g = _steady_update(0.001, [0, 1, 2])
    assert job.work["mode"] == "incremental"
    assert (job.dist == static.dist).all()
    # the first update built the in-edge index from the graph (a pass over its edges), and says so
    assert first_work["index_edges"] >= g.num_edges and first_work["edges_touched"] >= g.num_edges
    assert job.work["edges_touched"] * 10 < static.work["edges_touched"]


@pytest.mark.parametrize("xp", backends())
def test_incremental_on_each_backend(xp):
    rng = random.Random(8)
    h = Harness(xp)
    h.apply(random_batch(rng, h.oracle, 30, 100))
    job = create_job("bfs", xp, sources=[0, 1], **FORCE)
    job.run_static(h.graph, h.vmap)
    for _ in range(6):
        job.update(h.graph, h.apply(random_batch(rng, h.oracle, 30, 12)), h.vmap)
        check_bfs(job, h, [0, 1])


@pytest.mark.parametrize("xp", backends())
def test_direction_optimizing_equals_top_down_and_goes_bottom_up(xp):
    """Beamer's switch gives the same distances as plain top-down BFS, with bottom-up levels on a dense graph."""
    from tests.algo_support import rmat_edges
    from vinestream.algorithms.bfs import bfs_arrays, bfs_direction_optimizing, csr_expander
    from vinestream.algorithms.edge_index import transpose
    from vinestream.structures.registry import build
    s, d = rmat_edges(np.random.default_rng(5), 11, 16)
    g = build("csr", xp, xp.asarray(s), xp.asarray(d), 1 << 11)
    csr = g.adjacency()
    n = int(g.vertex_capacity)
    src = [int(np.argmax(np.bincount(s, minlength=n)))]
    dist, parent, _levels, edges, bottom_up = bfs_direction_optimizing(xp, csr, transpose(xp, csr, n), n, src)
    ref, _, _, ref_edges = bfs_arrays(xp, n, xp.asarray(src), csr_expander(xp, csr))
    assert bool((dist == ref).all()) and bottom_up >= 1 and edges < ref_edges
    reached = xp.nonzero(dist > 0)[0]
    p = parent[reached]
    assert bool((dist[p] == dist[reached] - 1).all())
    assert bool(g.contains(p.astype(np.int32), reached.astype(np.int32)).all())


def test_incremental_does_less_work_than_static_up_to_one_percent():
    for fraction in (0.0001, 0.001, 0.01):
        job, _, static, _ = _steady_update(fraction, [0], **FORCE)
        assert job.work["mode"] == "incremental"
        assert bool((job.dist[: static.dist.shape[0]] == static.dist).all())
        assert job.work["edges_touched"] < static.work["edges_touched"], fraction


def test_default_fallback_recomputes_large_batches_and_drops_the_index():
    """The array program (host_repair=False) keeps the cold rule: with scipy's static traversal and no
    repair yet, a batch above 0.5% of the edges recomputes (and a recompute builds no index).  The host
    repair has no cold rule (its budget bounds a try): a 1% batch repairs; above 5% it recomputes."""
    from vinestream.algorithms.bfs import LIBRARY_FALLBACK, MAX_REPAIR_FRACTION
    job, _, static, _ = _steady_update(0.01, [0], host_repair=False)
    assert job.cold_fraction == LIBRARY_FALLBACK and job.adaptive
    assert job.work["mode"] == "static" and job.in_edges is None
    assert (job.dist == static.dist).all()
    job, _, _, _ = _steady_update(0.001, [0], host_repair=False)
    assert job.work["mode"] == "incremental" and job.in_edges is not None
    job, _, static, _ = _steady_update(0.01, [0])
    assert job.work["mode"] == "incremental" and (job.dist == static.dist).all()
    job, _, static, _ = _steady_update(MAX_REPAIR_FRACTION * 1.2, [0])
    assert job.work["mode"] == "static" and (job.dist == static.dist).all()


def test_a_cut_vertex_with_another_parent_one_level_closer_keeps_its_distance():
    h = Harness()
    h.apply([(ADD_EDGE, 0, 1, 1.0), (ADD_EDGE, 0, 2, 1.0), (ADD_EDGE, 1, 3, 1.0), (ADD_EDGE, 2, 3, 1.0),
             (ADD_EDGE, 3, 4, 1.0)])
    job = BFS(np, sources=[0], **FORCE)
    job.run_static(h.graph, h.vmap)
    parent = table_dict(job.output(h.vmap), "parent")[3]
    job.update(h.graph, h.apply([(DELETE_EDGE, parent, 3, None)]), h.vmap)
    assert job.work["mode"] == "incremental" and job.work["invalidated"] == 0   # 3 (and 4) kept
    assert table_dict(job.output(h.vmap), "parent")[3] == 3 - parent
    check_bfs(job, h, [0])


def test_a_rescue_through_a_lost_subtree_is_undone():
    """c's tree edge and x's only in-edge go in one batch: c picks u, a child of x, then loses it."""
    h = Harness()
    p, q, x, u, c = 1, 2, 3, 4, 5
    h.apply([(ADD_EDGE, 0, p, 1.0), (ADD_EDGE, 0, x, 1.0), (ADD_EDGE, p, q, 1.0), (ADD_EDGE, x, u, 1.0),
             (ADD_EDGE, q, c, 1.0), (ADD_EDGE, u, c, 1.0), (ADD_EDGE, c, 6, 1.0)])
    job = BFS(np, sources=[0], **FORCE)
    job.run_static(h.graph, h.vmap)
    assert table_dict(job.output(h.vmap), "parent")[c] == q        # FIFO order: q is visited before u
    job.update(h.graph, h.apply([(DELETE_EDGE, 0, x, None), (DELETE_EDGE, q, c, None)]), h.vmap)
    assert job.work["mode"] == "incremental" and job.work["invalidated"] == 4     # x, u, c, 6
    check_bfs(job, h, [0])


def test_the_in_edge_index_is_kept_through_a_recompute():
    """small batch (builds the index), large batch (recomputes, its changes queued for the index),
    small batch: no rebuild (a rebuild reads every edge twice), the queue is folded in, exact."""
    from vinestream.stream.bench.algorithms import random_delta
    g, delta = work_graph_and_delta(fraction=0.001)
    vm = IdentityMap()
    job = BFS(np, sources=[0], fallback_fraction=0.005)          # the fixed rule
    job.run_static(g, vm)
    for changes, mode in ((g.num_edges // 1000, "incremental"), (g.num_edges // 50, "static"),
                          (g.num_edges // 1000, "incremental")):
        delta = random_delta(np, g, changes, seed=changes)
        apply_delta(g, delta)
        job.update(g, delta, vm)
        assert job.work["mode"] == mode and job.in_edges is not None
        if mode == "static":                 # the recompute queued its changes: no index work
            assert job.work["index_edges"] == 0 and job._backlog_keys == changes
        fresh = BFS(np, sources=[0])
        fresh.run_static(g, vm)
        assert (job.dist == fresh.dist).all()
    assert 0 < job.work["index_edges"] < g.num_edges
    assert sorted(job._in_edge_index(g).keys.tolist()) == sorted(((g.adjacency().cols.astype(np.int64) << 32)
                                                                  | g.adjacency().row_ids()).tolist())


def test_a_long_run_of_recomputes_drops_the_index_once_a_rebuild_is_cheaper():
    """Queued and logged changes past |E| / 16 cost more to fold in than a rebuild: the index goes, and
    the next repair rebuilds it from the graph (counted) and is exact."""
    from vinestream.stream.bench.algorithms import random_delta
    g, _ = work_graph_and_delta(fraction=0.001)
    vm = IdentityMap()
    job = BFS(np, sources=[0], fallback_fraction=0.005)          # the fixed rule
    job.run_static(g, vm)
    steps = [(g.num_edges // 1000, "incremental")] + [(g.num_edges // 50, "static")] * 6 + \
        [(g.num_edges // 1000, "incremental")]
    kept = []
    for changes, mode in steps:
        delta = random_delta(np, g, changes, seed=changes + len(kept))
        apply_delta(g, delta)
        job.update(g, delta, vm)
        assert job.work["mode"] == mode
        kept.append(job.in_edges is not None)
        fresh = BFS(np, sources=[0])
        fresh.run_static(g, vm)
        assert (job.dist == fresh.dist).all()
    assert kept[1] and not kept[-2]              # kept at first, dropped after enough recomputes
    # the last repair rebuilt the index if it read it (and counted the pass), else it is still gone
    assert (job.work["index_edges"] >= g.num_edges) if kept[-1] else job.work["index_edges"] == 0
    csr = g.adjacency()
    assert sorted(job._in_edge_index(g).keys.tolist()) == sorted(((csr.cols.astype(np.int64) << 32)
                                                                  | csr.row_ids()).tolist())


def test_the_default_rule_learns_from_the_last_repair():
    """The array program's rule: after a repair, a batch recomputes when (the largest recent traversal
    edges per change + log2 |E|) times its changes pass |E|: cheap repairs let a 1% batch repair (its
    rate is learnt), a costly one sends it to the static form; a batch above 5% always recomputes."""
    from vinestream.stream.bench.algorithms import random_delta
    g, _ = work_graph_and_delta(fraction=0.001)
    vm = IdentityMap()
    job = BFS(np, sources=[0], host_repair=False)
    job.run_static(g, vm)
    m = g.num_edges
    for step, (changes, rate, mode) in enumerate([(m // 1000, None, "incremental"), (m // 100, 1.0, "incremental"),
                                                   (m // 100, 200.0, "static"), (m // 15, 0.0, "static")]):
        if rate is not None:
            job._rates = [rate]
        delta = random_delta(np, g, changes, seed=40 + step)
        apply_delta(g, delta)
        job.update(g, delta, vm)
        assert job.work["mode"] == mode, step
        if mode == "incremental":            # learnt from this repair, the index left out
            assert job._rates[-1] * changes == job.work["edges_touched"] - job.work["index_edges"]
        fresh = BFS(np, sources=[0])
        fresh.run_static(g, vm)
        assert (job.dist == fresh.dist).all()
