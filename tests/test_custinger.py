"""cuSTINGER's mechanisms: arrays over-allocated by a factor, reallocated (copied, old one freed)
only when full, deletion that marks the slot and swaps the last edge into the hole, no shrinking,
vertex deletion as edge deletions, and the pool's compaction of freed arrays."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests import contiguous_support as cs
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create


def _insert(g, src, dst, w=None):
    w = np.ones(len(src), np.float32) if w is None else np.asarray(w, np.float32)
    return g.insert_edges(CSRBatch.from_edges(np, np.asarray(src), np.asarray(dst), w))


def _delete(g, src, dst):
    return g.delete_edges(CSRBatch.from_edges(np, np.asarray(src), np.asarray(dst)))


def _raw_row(g, v):
    s, d = int(g.row_start[v]), int(g.degree_[v])
    return g.pool_cols[s:s + d].tolist()


@pytest.mark.parametrize("factor", [1.0, 1.5, 2.0, 3.0])
def test_arrays_are_over_allocated_by_the_factor_and_reallocated_only_when_full(factor):
    g = create("custinger", np, factor=factor, min_capacity=2)
    g.insert_vertices(np.arange(100))
    _insert(g, [1] * 5, range(5))
    cap = int(g.row_capacity[1])
    assert cap == max(math.ceil(5 * factor), 2)
    moved = g.stats["rows_moved"]
    nxt = 5
    while int(g.degree_[1]) < cap:                 # fits: no reallocation
        _insert(g, [1], [nxt])
        nxt += 1
        assert int(g.row_capacity[1]) == cap and g.stats["rows_moved"] == moved
    freed = g.stats["arrays_freed"]
    old_start = int(g.row_start[1])
    _insert(g, [1, 1], [nxt, nxt + 1])             # full: a new array, edges copied, old one freed
    deg = int(g.degree_[1])
    assert int(g.row_capacity[1]) == max(math.ceil(deg * factor), 2)
    assert g.stats["arrays_freed"] == freed + 1 and int(g.row_start[1]) != old_start
    assert sorted(_raw_row(g, 1)) == list(range(nxt + 2))
    cs.check_invariants(g)


def test_delete_swaps_the_last_edge_into_the_hole():
    g = create("custinger", np)
    g.insert_vertices(np.arange(20))
    for d in (10, 11, 12, 13, 14):                 # one per batch: the row keeps insertion order
        _insert(g, [0], [d])
    assert _raw_row(g, 0) == [10, 11, 12, 13, 14]
    assert _delete(g, [0], [11]).tolist() == [True]
    assert _raw_row(g, 0) == [10, 14, 12, 13]      # the last edge moved into the hole
    assert _delete(g, [0, 0], [10, 13]).tolist() == [True, True]
    assert _raw_row(g, 0) == [12, 14]              # hole 0 takes the surviving tail edge; 13 was the tail
    assert _delete(g, [0, 0], [99, 12]).tolist() == [True, False]     # batch order: (0,12), (0,99)
    assert _raw_row(g, 0) == [14]
    cap = int(g.row_capacity[0])
    assert cap >= 5                                # arrays never shrink
    s = int(g.row_start[0])
    assert (g.pool_cols[s + 1:s + cap] == -1).all()
    cs.check_invariants(g)


def test_insert_checks_duplicates_against_the_array_and_within_the_batch():
    g = create("custinger", np)
    g.insert_vertices(np.arange(10))
    assert _insert(g, [2, 2], [3, 4], [1, 2]).tolist() == [True, True]
    raw = CSRBatch(rows=np.array([2], np.int32), offsets=np.array([0, 4]),
                   cols=np.array([3, 5, 5, 4], np.int32), weights=np.array([7, 8, 9, 6], np.float32))
    assert g.insert_edges(raw).tolist() == [False, True, False, False]
    assert int(g.degree_[2]) == 3
    assert g.edge_weights(np.array([2, 2, 2]), np.array([3, 4, 5])).tolist() == [7.0, 6.0, 9.0]


def test_vertex_deletion_is_a_series_of_edge_deletions():
    g = create("custinger", np)
    g.insert_vertices(np.arange(6))
    _insert(g, [0, 0, 1, 2, 3, 3, 4], [1, 2, 0, 0, 0, 4, 3])
    deleted = g.stats["arrays_freed"]
    s, d = g.delete_vertices(np.array([0, 0, 5]))
    assert sorted(zip(s.tolist(), d.tolist())) == [(0, 1), (0, 2), (1, 0), (2, 0), (3, 0)]
    assert g.num_edges == 2 and g.degree(np.array([1, 2, 3, 4])).tolist() == [0, 0, 1, 1]
    assert int(g.row_capacity[0]) == 0 and g.stats["arrays_freed"] == deleted + 1
    assert int(g.row_capacity[1]) > 0              # in-edge deletion did not shrink the others
    cs.check_invariants(g)


def test_pool_compaction_reclaims_freed_arrays():
    g = create("custinger", np, factor=1.0, min_capacity=1, initial_pool_entries=8)
    g.insert_vertices(np.arange(50))
    for k in range(1, 40):                          # every batch outgrows the arrays: garbage piles up
        _insert(g, np.arange(50), (np.arange(50) + k) % 50)
        cs.check_invariants(g)
    assert g.stats["compactions"] > 0
    mem = g.memory()
    assert mem["garbage_entries"] < mem["pool_entries"]
    assert mem["pool_entries"] <= 4 * (mem["row_entries_held"] + 50)   # the pool tracks live arrays
    g.delete_vertices(np.arange(50))
    mem = g.memory()
    assert mem["used_bytes"] == 0 and mem["row_entries_held"] == 0 and g.num_edges == 0


@pytest.mark.parametrize("seed", range(4))
def test_random_streams_keep_the_invariants(seed):
    rng = np.random.default_rng(seed)
    g = create("custinger", np, factor=float(rng.choice([1.0, 1.25, 2.0])),
               initial_pool_entries=int(rng.choice([1, 64])))
    for op in cs.random_ops(rng, nv=150, steps=21, max_batch=800):
        cs.apply(g, op)
        cs.check_invariants(g)
