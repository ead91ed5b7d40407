"""diff-CSR: random streams against the oracle at several merge thresholds, and the mechanism itself
(base untouched between merges, insert list and tombstones, merge at the threshold, merged reads)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tests.test_gpma import XP, H, apply_op, batch, check_against, streams
from vinestream.structures.registry import create


def check_invariants(g) -> None:
    base, ins, tomb = H(g.base_keys), H(g.ins_keys), H(g.tomb_keys)
    for arr in (base, ins, tomb):
        assert (np.diff(arr) > 0).all(), "every list strictly sorted"
    assert np.isin(tomb, base).all(), "tombstones name base edges"
    assert not np.isin(ins, base).any(), "the insert list holds no base edge"
    off = H(g.base_offsets)
    assert len(off) == g.vertex_capacity + 1 and off[-1] == len(base)
    assert np.array_equal(np.repeat(np.arange(g.vertex_capacity), np.diff(off)), base >> 32), "a real CSR"
    live = np.concatenate([np.setdiff1d(base, tomb), ins])
    assert len(live) == g.num_edges
    deg = np.bincount(live >> 32, minlength=g.vertex_capacity)[: g.vertex_capacity] if len(live) else 0
    assert np.array_equal(H(g.out_degree), np.zeros(g.vertex_capacity, int) + deg)
    assert g.diff_size <= max(g.merge_fraction * len(base), g.min_merge - 1, 0) or g.diff_size == 0


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.sampled_from([0.0, 0.05, 0.3, 1.0, 10.0]), st.integers(0, 2**32 - 1))
def test_random_streams_match_oracle_at_every_threshold(stream, fraction, seed):
    _, ops = stream
    g = create("diffcsr", XP, merge_fraction=fraction)
    o = Oracle(keep_self_loops=True)
    rng = np.random.default_rng(seed)
    for op in ops:
        apply_op(g, o, op, rng)
        check_invariants(g)
        check_against(g, o, rng)


def test_diff_collects_until_the_threshold_then_merges_into_a_new_base():
    g = create("diffcsr", XP, merge_fraction=0.5)
    g.insert_vertices(XP.arange(100, dtype=np.int32))
    g.insert_edges(batch(np.arange(100), (np.arange(100) + 1) % 100))
    assert g.stats["merges"] == 1 and len(g.base_keys) == 100 and g.diff_size == 0   # first batch = base
    base_before = H(g.base_keys).copy()
    g.insert_edges(batch(np.arange(40), (np.arange(40) + 2) % 100))
    assert g.diff_size == 40 and g.stats["merges"] == 1
    assert np.array_equal(H(g.base_keys), base_before), "the base is not touched between merges"
    g.delete_edges(batch([0, 1], [1, 2]))                             # two base edges: tombstones
    assert len(g.tomb_keys) == 2 and g.diff_size == 42
    g.delete_edges(batch([0], [2]))                                   # an insert-list edge: just dropped
    assert len(g.tomb_keys) == 2 and len(g.ins_keys) == 39
    mask = H(g.insert_edges(batch([0, 5], [1, 6], [9.0, 3.0])))       # revive a tombstone; upsert a base edge
    assert mask.tolist() == [True, False] and len(g.tomb_keys) == 1
    assert H(g.edge_weights(XP.asarray([0, 5]), XP.asarray([1, 6]))).tolist() == [9.0, 3.0]
    g.insert_edges(batch(np.arange(50, 62), (np.arange(50, 62) + 3) % 100))   # 39 + 1 + 12 = 52 > 50
    assert g.stats["merges"] == 2 and g.diff_size == 0
    assert len(g.base_keys) == g.num_edges == 100 - 1 + 39 + 12
    check_invariants(g)


def test_reads_merge_base_and_diff_rows_sorted():
    rng = np.random.default_rng(1)
    g = create("diffcsr", XP, merge_fraction=10.0)                   # never merge after the first batch
    g.insert_vertices(XP.arange(50, dtype=np.int32))
    g.insert_edges(batch(rng.integers(0, 50, 400), rng.integers(0, 50, 400)))
    g.insert_edges(batch(rng.integers(0, 50, 300), rng.integers(0, 50, 300)))
    g.delete_edges(batch(rng.integers(0, 50, 300), rng.integers(0, 50, 300)))
    assert len(g.ins_keys) and len(g.tomb_keys)
    full = g.adjacency()
    rows = g.adjacency(XP.arange(g.vertex_capacity))
    assert np.array_equal(H(full.offsets), H(rows.offsets)) and np.array_equal(H(full.cols), H(rows.cols))
    off, cols = H(rows.offsets), H(rows.cols)
    for v in range(50):
        r = cols[off[v]:off[v + 1]]
        assert (np.diff(r) > 0).all(), "row sorted by target, no repeats"
        assert H(g.contains(XP.full(len(r), v), XP.asarray(r))).all()
    assert np.array_equal(H(full.weights), H(rows.weights))


def test_threshold_zero_merges_every_batch_and_memory_returns_after_deleting_everything():
    g = create("diffcsr", XP, merge_fraction=0.0)
    g.insert_vertices(XP.arange(64, dtype=np.int32))
    g.insert_edges(batch(np.arange(64), (np.arange(64) * 7) % 64))
    g.insert_edges(batch(np.arange(32), (np.arange(32) * 5 + 1) % 64))
    assert g.stats["merges"] == 2 and g.diff_size == 0
    m = g.memory()
    assert m["reserved_bytes"] == m["used_bytes"] + 9 * 0      # no dead bytes right after a merge
    csr = g.adjacency()
    rows = np.repeat(np.arange(64), np.diff(H(csr.offsets)))
    g.delete_edges(batch(rows, H(csr.cols)))
    assert g.num_edges == 0 and len(g.base_keys) == 0
    m = g.memory()
    assert m["reserved_bytes"] == 17 * 64 + 8


def test_memory_counts_the_dead_base_edges_and_tombstones():
    g = create("diffcsr", XP, merge_fraction=1.0)
    g.insert_vertices(XP.arange(10, dtype=np.int32))
    g.insert_edges(batch(np.arange(10), (np.arange(10) + 1) % 10))
    g.delete_edges(batch([0, 1, 2], [1, 2, 3]))
    m = g.memory()
    assert m["tombstones"] == 3 and m["base_edges"] == 10
    spare_vertices = 17 * (g.vertex_capacity - g.num_vertices)
    assert m["reserved_bytes"] - m["used_bytes"] == 3 * 12 + 3 * 8 + spare_vertices
    with pytest.raises(ValueError):
        create("diffcsr", XP, merge_fraction=-1)
