"""Honest work counters: incremental jobs and their indexes touch a batch-sized part of the graph.

The jobs' ``work`` counts every edge and vertex they touch, index maintenance included
(``SortedEdgeIndex.work``); these tests compare those counts, and check that no hashing
``np.unique`` runs inside the hot functions.
"""
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.algo_support import IdentityMap, split_delta, work_graph_and_delta
from vinestream.algorithms import create_job
from vinestream.algorithms.edge_index import SortedEdgeIndex
from vinestream.structures.array_ops import difference_sorted, distinct_by_scatter, union_sorted, unique_sorted
from vinestream.structures.delta import apply_delta


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=12)),
                max_size=10), st.integers(1, 8))
def test_sorted_edge_index_matches_a_set(steps, min_pending):
    """Any sequence of adds and removes: the three-array index answers like a Python set."""
    model: set = set()
    index = SortedEdgeIndex(np, min_pending=min_pending)
    for is_add, pairs in steps:
        rows = np.array([a for a, _ in pairs], dtype=np.int64)
        cols = np.array([b for _, b in pairs], dtype=np.int64)
        if is_add:
            index.add(rows, cols)
            model |= set(pairs)
        else:
            index.remove(rows, cols)
            model -= set(pairs)
        assert len(index) == len(model)
        probe = np.arange(8, dtype=np.int64)
        assert index.degrees(probe).tolist() == [sum(1 for a, _ in model if a == v) for v in range(8)]
        owner, nb = index.neighbours(probe)
        assert sorted(zip(owner.tolist(), nb.tolist())) == sorted(model)
        r = np.repeat(probe, 8)
        c = np.tile(probe, 8)
        assert index.contains(r, c).tolist() == [(a, b) in model for a, b in zip(r.tolist(), c.tolist())]
    keys = index.keys
    assert keys.tolist() == sorted((a << 32) | b for a, b in model)


def test_index_maintenance_never_rewrites_the_bulk():
    """A batch of k changes on 1M keys: the base array is untouched and the work is O(k log E)."""
    rng = np.random.default_rng(0)
    keys = unique_sorted(np, rng.integers(0, 2**40, 1_000_000))
    index = SortedEdgeIndex(np, keys.copy())
    base = index.base
    for _ in range(5):
        gone = keys[rng.choice(keys.shape[0], 50, replace=False)]
        index.remove(gone >> 32, gone & 0xFFFFFFFF)
        new = rng.integers(0, 2**40, 50)
        index.add(new >> 32, new & 0xFFFFFFFF)
    assert index.base is base and index.compactions == 0
    work = index.take_work()
    assert work < 5 * 100 * 4 * math.ceil(math.log2(keys.shape[0]))       # not a pass over 1M keys
    index.compact()                                                           # a compaction is counted
    assert index.take_work() >= keys.shape[0]


@pytest.mark.parametrize("job_name", ["bfs", "triangles", "pagerank"])
def test_incremental_work_includes_the_index_and_stays_small(job_name):
    g, delta = work_graph_and_delta(fraction=0.001)
    vm = IdentityMap()
    params = {"sources": [0]} if job_name == "bfs" else {}
    job = create_job(job_name, np, **params)
    job.run_static(g, vm)
    static_work = job.work["edges_touched"]
    if job_name == "bfs":      # its first update builds the in-edge index from the graph, and counts it
        first, delta = split_delta(delta)
        apply_delta(g, first)
        job.update(g, first, vm)
        assert job.work["index_edges"] >= g.num_edges
    apply_delta(g, delta)
    job.update(g, delta, vm)
    work = job.work
    assert work["mode"].startswith("incremental")
    if job_name == "bfs" and work["index_edges"] == 0:   # BFS queues the changes until a read needs
        assert job._backlog_keys == delta.num_changed_edges  # them: the update that reads the index
        job._in_edge_index(g)                                # folds them in and counts it
        assert job.in_edges.take_work() >= delta.num_changed_edges
    elif job_name != "pagerank":
        assert work["index_edges"] > 0                      # the index maintenance is in the count
    if job_name != "pagerank":
        assert work["edges_touched"] * 10 < static_work
        assert work.get("vertices_touched", 0) < g.num_vertices
    else:
        assert work["edges_touched"] < static_work


def test_set_helpers_agree_with_python_sets():
    rng = np.random.default_rng(1)
    a = unique_sorted(np, rng.integers(0, 50, 30))
    b = unique_sorted(np, rng.integers(0, 50, 30))
    assert difference_sorted(np, a, b).tolist() == sorted(set(a.tolist()) - set(b.tolist()))
    assert union_sorted(np, a, b).tolist() == sorted(set(a.tolist()) | set(b.tolist()))
    scratch = np.empty(64, dtype=np.int64)
    v = rng.integers(0, 50, 100)
    assert sorted(distinct_by_scatter(np, v, scratch).tolist()) == sorted(set(v.tolist()))


def test_unique_sorted_sorts_rather_than_hashes_on_2m_keys():
    """np.unique hashes on NumPy >= 2.3 (~100x slower on large int64 keys): the helper must not."""
    keys = np.random.default_rng(2).integers(0, 2**62, 2_000_000)

    def reference(k):
        s = np.sort(k)
        keep = np.ones(s.shape[0], dtype=bool)
        keep[1:] = s[1:] != s[:-1]
        return s[keep]

    def best(fn):
        times = []
        for _ in range(3):
            t = time.perf_counter()
            fn(keys)
            times.append(time.perf_counter() - t)
        return min(times)
    assert np.array_equal(unique_sorted(np, keys), reference(keys))
    assert best(lambda k: unique_sorted(np, k)) < 4 * best(reference) + 0.05


def test_no_np_unique_in_the_hot_paths(monkeypatch):
    """Resolve, the vertex map, the indexes and every job's update run with np.unique forbidden."""
    import vinestream
    from vinestream.stream.pipeline import build_pipeline

    def forbidden(*args, **kwargs):
        raise AssertionError("np.unique on a hot path (it hashes on NumPy >= 2.3): use array_ops.unique_sorted")

    g, delta = work_graph_and_delta(scale=10, fraction=0.01)
    vm = IdentityMap()
    jobs = [create_job(n, np, **({"sources": [0], "fallback_fraction": 1.0} if n == "bfs" else {}))
            for n in ("bfs", "triangles", "pagerank")]
    for job in jobs:
        job.run_static(g, vm)
    apply_delta(g, delta)
    pipeline = build_pipeline(structure="coo", backend="cpu")
    pipeline.apply(vinestream.events(op=["add"] * 4, src=[1, 2, 3, 4], dst=[2, 3, 4, 1]))
    batch = vinestream.events(op=["add", "delete", "delete_vertex", "add"], src=[5, 1, 3, 6], dst=[1, 2, None, 7])
    monkeypatch.setattr(np, "unique", forbidden)
    for job in jobs:
        job.update(g, delta, vm)
        assert job.work["mode"].startswith("incremental")
    pipeline.apply(batch)
