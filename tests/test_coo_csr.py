"""Mechanisms particular to the COO (deleted-slot queue, growth) and CSR (capacity) structures.

The behaviour both share with every structure is in test_structure_contract.py.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from vinestream.structures import CSRBatch, create
from vinestream.structures.backend import to_numpy

try:
    from structure_contract import BACKENDS, StreamRun, array_namespace, stream_st
except ImportError:
    from tests.structure_contract import BACKENDS, StreamRun, array_namespace, stream_st

backends = pytest.mark.parametrize("backend", BACKENDS)


def coo_run(backend, **options) -> StreamRun:
    xp = array_namespace(backend)
    run = StreamRun.start("coo", xp)
    run.graph = create("coo", xp, **options)
    return run


def live_slot_keys(g) -> set:
    """(row, col) of every occupied slot, read straight from the COO arrays."""
    row, col = to_numpy(g.row_idx), to_numpy(g.col_idx)
    used = row != -1
    return set(zip(row[used].tolist(), col[used].tolist()))


@backends
def test_freed_slots_are_reused_under_equal_churn(backend):
    """Delete k edges, insert k new ones: the queue feeds the inserts, the arrays never grow."""
    rng = np.random.default_rng(3)
    run = coo_run(backend, edge_capacity=512, vertex_capacity=64)
    run.insert_vertices(list(range(64)))
    pairs = rng.choice(64 * 64, 1000, replace=False)
    run.insert_edges(pairs // 64, pairs % 64, rng.random(1000))
    g = run.graph
    capacity, high_water = g.edge_capacity, g.high_water
    assert high_water == 1000 and capacity == 1024
    for step in range(6):
        edges = run.model.sorted_edges()
        gone = rng.choice(len(edges), 150, replace=False)
        run.delete_edges([edges[i][0] for i in gone], [edges[i][1] for i in gone])
        assert g.memory()["free_slots"] == 150
        assert set(to_numpy(g.row_idx)[to_numpy(g.deleted)[:150]].tolist()) == {-1}   # marked free
        absent = np.setdiff1d(np.arange(64 * 64), [s * 64 + d for s, d in run.model.edges()])
        new = rng.choice(absent, 150, replace=False)
        run.insert_edges(new // 64, new % 64, rng.random(150))
        assert g.memory()["free_slots"] == 0
        assert (g.edge_capacity, g.high_water) == (capacity, high_water), f"grew at churn step {step}"
        assert live_slot_keys(g) == set(run.model.edges())
        run.check(step)


@backends
def test_queue_is_first_in_first_out(backend):
    """Alg. 7 pops deleted[head]: the first slot freed is the first one refilled."""
    run = coo_run(backend, edge_capacity=8)
    run.insert_vertices(list(range(8)))
    run.insert_edges([0, 1, 2, 3, 4], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5])   # slots 0..4 in key order
    g = run.graph
    run.delete_edges([3], [4])      # slot 3 freed first
    run.delete_edges([1], [2])      # then slot 1
    assert g.free_slots == 2
    run.insert_edges([7], [0], [9.0])
    assert to_numpy(g.row_idx)[3] == 7 and to_numpy(g.col_idx)[3] == 0
    run.insert_edges([6], [0], [8.0])
    assert to_numpy(g.row_idx)[1] == 6 and g.free_slots == 0 and g.high_water == 5
    run.check()


@backends
def test_one_batch_pops_the_queue_then_appends_then_grows(backend):
    run = coo_run(backend, edge_capacity=4)
    g = run.graph
    run.insert_vertices(list(range(10)))
    run.insert_edges([0, 0, 0, 0], [1, 2, 3, 4], [1, 1, 1, 1])
    assert (g.edge_capacity, g.high_water, g.free_slots) == (4, 4, 0)
    run.delete_edges([0, 0], [2, 4])
    # 2 upserts + 5 new edges: 2 from the queue, 3 appended past a full array (4 -> 8)
    run.insert_edges([0, 0, 5, 5, 5, 6, 7], [1, 3, 1, 2, 3, 1, 1], [2, 3, 4, 5, 6, 7, 8])
    assert (g.edge_capacity, g.high_water, g.free_slots) == (8, 7, 0)
    assert live_slot_keys(g) == set(run.model.edges())
    run.check()
    # many at once: grows by doubling until they fit
    src = np.repeat(np.arange(10), 10)
    dst = np.tile(np.arange(10), 10)
    run.insert_edges(src, dst, np.ones(100))
    assert g.edge_capacity == 128 and g.high_water == 100 and g.num_edges == 100
    run.check()


@backends
def test_vertex_delete_frees_both_directions(backend):
    run = coo_run(backend, edge_capacity=16)
    g = run.graph
    run.insert_vertices([0, 1, 2, 3])
    run.insert_edges([0, 1, 1, 2, 3], [1, 0, 1, 1, 2], [1, 2, 3, 4, 5])   # 1: out, in and a self-loop
    run.delete_vertices([1])
    assert g.free_slots == 4 and g.num_edges == 1
    mem = g.memory()
    assert mem["free_slots"] == 4 and mem["capacity_edges"] == 16
    run.check()


@backends
def test_in_degree_counts_live_columns(backend):
    rng = np.random.default_rng(5)
    run = coo_run(backend, edge_capacity=8)
    run.insert_vertices(list(range(30)))
    run.insert_edges(rng.integers(0, 30, 200), rng.integers(0, 30, 200), rng.random(200))
    run.delete_vertices([4, 9])
    run.delete_edges(rng.integers(0, 30, 50), rng.integers(0, 30, 50))
    expected = np.zeros(run.graph.vertex_capacity, dtype=np.int64)
    for _, d in run.model.edges():
        expected[d] += 1
    assert np.array_equal(to_numpy(run.graph.in_degree()), expected)
    xp = run.xp
    assert to_numpy(run.graph.in_degree(xp.asarray([3, 4, 3]))).tolist() == expected[[3, 4, 3]].tolist()


@pytest.mark.parametrize("name", ["csr", "coo"])
@backends
def test_vertex_capacity_doubles(name, backend):
    xp = array_namespace(backend)
    g = create(name, xp, vertex_capacity=4)
    g.insert_vertices(xp.asarray([0, 3]))
    assert g.vertex_capacity == 4
    g.insert_edges(CSRBatch.from_edges(xp, [0], [3], [1.5]))
    g.insert_vertices(xp.asarray([9]))
    assert g.vertex_capacity == 16
    assert g.degree().shape[0] == 16 and g.adjacency().num_rows == 16
    assert to_numpy(g.edge_weights(xp.asarray([0]), xp.asarray([3]))).tolist() == [1.5]


@pytest.mark.parametrize("name", ["csr", "coo"])
@backends
def test_unweighted_insert_means_weight_one(name, backend):
    xp = array_namespace(backend)
    g = create(name, xp)
    g.insert_vertices(xp.asarray([0, 1, 2]))
    g.insert_edges(CSRBatch.from_edges(xp, [0, 1], [1, 2], [5.0, 6.0]))
    new = g.insert_edges(CSRBatch.from_edges(xp, [0, 2], [1, 0]))      # no weights: 1.0, upsert included
    assert to_numpy(new).tolist() == [False, True]
    w = g.edge_weights(xp.asarray([0, 1, 2]), xp.asarray([1, 2, 0]))
    assert to_numpy(w).tolist() == [1.0, 6.0, 1.0]


@backends
@pytest.mark.parametrize("log_min", [1, 3, 16])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=stream_st)
def test_index_log_dead_entries_and_compactions_match_reference(backend, log_min, stream):
    """The key index's log, dead entries (freed slots, revived by re-inserts) and compactions at any
    point between batches: every query, degree and adjacency agrees with the reference model."""
    pool, ops = stream
    run = coo_run(backend, index_log_min=log_min)
    run.check()
    for op in ops:
        run.check(run.apply(op, pool))
    g = run.graph
    assert g.num_edges == len(run.model.edges())
    assert g.memory()["index_dead_entries"] >= 0


def test_edge_phases_leave_the_index_alone_between_compactions():
    """A small batch's delete and insert touch O(batch + log) index entries, not the whole index: the
    main part is the same array object until a compaction (which an O(E) read like adjacency() or a
    vertex deletion, or the log's size limit, triggers)."""
    g = create("coo", np, index_log_min=1 << 20)
    rng = np.random.default_rng(0)
    s, d = rng.integers(0, 3000, 100_000), rng.integers(0, 3000, 100_000)
    g.insert_new_vertices(np.arange(3000), 3000)
    g.insert_edges(CSRBatch.from_edges(np, s, d, np.ones(100_000, np.float32)))
    g.adjacency()                                          # compacts: all in the main part
    main = g._keys
    assert g.memory()["index_log_entries"] == 0 and g.memory()["index_dead_entries"] == 0
    for _ in range(5):
        k = rng.integers(0, 100_000, 500)
        g.delete_edges(CSRBatch.from_edges(np, s[k], d[k], None))
        ns, nd = rng.integers(0, 3000, 500), rng.integers(0, 3000, 500)
        g.insert_edges(CSRBatch.from_edges(np, ns, nd, np.ones(500, np.float32)))
        assert g._keys is main                             # the main index was not rewritten
    mem = g.memory()
    assert mem["index_log_entries"] > 0 and mem["index_dead_entries"] > 0
    assert g.num_edges == int(g.degree().sum())
    g.adjacency()
    assert g._keys is not main and g.memory()["index_dead_entries"] == 0


def _batch(src, dst, weights=True):
    w = np.ones(len(src), np.float32) if weights else None
    return CSRBatch.from_edges(np, np.array(src), np.array(dst), w)


def slot_reuse_scenarios(g):
    """Index entries that die with their slot: a slot taken by another edge of the same source does not
    revive the old key, and a re-inserted key placed in another slot revives its dead entry."""
    g.insert_new_vertices(np.arange(10), 10)
    g.insert_edges(_batch([1, 2], [2, 3]))
    g.delete_edges(_batch([1], [2], weights=False))
    g.insert_edges(_batch([1], [7]))                 # the freed slot of (1, 2) now holds (1, 7)
    assert g.contains(np.array([1, 1]), np.array([2, 7])).tolist() == [False, True]
    assert int(g.degree(np.array([1]))[0]) == 1
    g.delete_edges(_batch([2], [3], weights=False))
    g.insert_edges(_batch([5], [6]))                 # takes the slot of (2, 3)
    g.insert_edges(_batch([2, 1], [3, 2]))           # both re-inserted keys land in fresh slots
    assert g.contains(np.array([1, 2, 1, 5]), np.array([2, 3, 7, 6])).tolist() == [True] * 4
    assert g.num_edges == 4 and g.memory()["index_dead_entries"] == 0
    adj = g.adjacency(np.array([1, 2]))
    cols = to_numpy(adj.cols).tolist()                 # a row's columns may come in any order
    assert to_numpy(adj.offsets).tolist() == [0, 2, 3] and sorted(cols[:2]) == [2, 7] and cols[2:] == [3]


def test_index_entries_die_with_their_slots_and_revive():
    slot_reuse_scenarios(create("coo", np, index_log_min=1 << 20))
