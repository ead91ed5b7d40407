"""Hornet's mechanisms: power-of-two blocks from per-size block arrays, the counting bit-tree that
finds free blocks (never one twice), moves up on growth and down past half, bulk build from a CSR."""
from __future__ import annotations

import numpy as np
import pytest

from tests import contiguous_support as cs
from vinestream.structures.csr_types import CSR, CSRBatch
from vinestream.structures.hornet import Hornet, SizeClass, ceil_log2
from vinestream.structures.registry import create


def _insert(g, src, dst, w=None):
    w = np.ones(len(src), np.float32) if w is None else np.asarray(w, np.float32)
    return g.insert_edges(CSRBatch.from_edges(np, np.asarray(src), np.asarray(dst), w))


def _delete(g, src, dst):
    return g.delete_edges(CSRBatch.from_edges(np, np.asarray(src), np.asarray(dst)))


def _row(g, v):
    a = g.adjacency(np.array([v]))
    return a.cols.tolist(), a.weights.tolist()


def test_ceil_log2_is_exact():
    x = np.array([1, 2, 3, 4, 5, 7, 8, 9, 2**31 - 1, 2**31, 2**31 + 1, 2**40 + 3], dtype=np.int64)
    assert ceil_log2(np, x).tolist() == [int(np.ceil(np.log2(float(v)))) if v != 2**40 + 3 else 41
                                         for v in x.tolist()]


def test_growth_moves_to_the_next_size_and_frees_the_old_block():
    g = create("hornet", np, block_array_entries=16)
    g.insert_vertices(np.arange(200))
    expected = {}
    for deg_step in range(1, 130, 3):
        cap_before = int(g.row_capacity[0])
        new = [d for d in range(1, deg_step + 1) if d not in expected]
        for d in new:
            expected[d] = float(d)
        _insert(g, [0] * len(new), new, [float(d) for d in new])
        deg = int(g.degree_[0])
        cap = int(g.row_capacity[0])
        assert cap == 1 << int(np.ceil(np.log2(deg)))
        if cap != cap_before and cap_before:
            # the old block went back to its class: none of that size in use any more
            assert g.blocks_in_use()[cap_before] == 0
        cols, ws = _row(g, 0)
        assert dict(zip(cols, ws)) == expected          # contents survived every move
        cs.check_invariants(g)
    assert g.stats["rows_moved"] >= 7                   # 1 -> 2 -> ... -> 128


def test_shrink_moves_down_only_past_half():
    g = create("hornet", np, block_array_entries=16)
    g.insert_vertices(np.arange(40))
    _insert(g, [5] * 16, list(range(16)))
    assert int(g.row_capacity[5]) == 16
    _delete(g, [5] * 7, list(range(7)))                 # degree 9 > 16 / 2: stays
    assert int(g.row_capacity[5]) == 16
    _delete(g, [5], [7])                                 # degree 8 = half: moves down to 8
    assert int(g.row_capacity[5]) == 8
    _delete(g, [5] * 6, list(range(8, 14)))             # degree 2: straight down to 2
    assert int(g.row_capacity[5]) == 2
    assert sorted(_row(g, 5)[0]) == [14, 15]
    _delete(g, [5, 5], [14, 15])                         # no edges, no block
    assert int(g.row_capacity[5]) == 0 and int(g.row_start[5]) == -1
    cs.check_invariants(g)


def test_bit_tree_finds_free_blocks_by_rank_and_never_twice():
    sc = SizeClass(np, 3, blocks_per_array=5)
    sc.add_arrays(np.array([0, 40, 80], dtype=np.int64))       # 15 slots, a 16-leaf tree
    assert sc.leaves == 16 and sc.free == 15
    a = sc.take(6)
    assert a.tolist() == list(range(6))
    sc.give_back(np.array([1, 4]))
    b = sc.take(4)
    assert b.tolist() == [1, 4, 6, 7]                    # freed blocks are found again first
    assert sc.free == 15 - 8
    taken = set(a.tolist()) - {1, 4} | set(b.tolist())
    assert len(taken) == 8
    rest = sc.take(sc.free)
    assert set(rest.tolist()).isdisjoint(taken) and len(set(rest.tolist())) == len(rest)
    assert sc.free == 0 and int(sc.tree[1]) == 0
    assert sc.addresses(np.array([0, 5, 14])).tolist() == [0, 40, 80 + 4 * 8]


def test_block_arrays_are_added_only_when_a_class_is_full_and_blocks_are_reused():
    g = create("hornet", np, block_array_entries=64)
    g.insert_vertices(np.arange(500))
    src = np.repeat(np.arange(100), 8)
    dst = (src * 7 + np.tile(np.arange(8), 100)) % 500
    _insert(g, src, dst)
    assert g.blocks_in_use() == {8: 100}
    arrays = g.memory()["block_arrays"]
    assert g.classes[3].slots == g.classes[3].num_arrays * 8 >= 100
    for _ in range(3):                                    # churn: same sizes, no new block arrays
        _delete(g, src, dst)
        assert g.memory()["blocks_in_use"] == 0
        _insert(g, src, dst)
        assert g.memory()["block_arrays"] == arrays
    cs.check_invariants(g)


def test_memory_goes_back_to_metadata_after_deleting_everything():
    g = create("hornet", np, block_array_entries=32)
    rng = np.random.default_rng(3)
    g.insert_vertices(np.arange(300))
    s, d = (rng.zipf(1.5, 5000) % 300), rng.integers(0, 300, 5000)
    _insert(g, s, d)
    full = g.memory()
    assert full["used_bytes"] > full["bit_tree_bytes"] + 8 * g.num_edges
    g.delete_vertices(np.arange(300))
    mem = g.memory()
    assert g.num_edges == 0 and mem["blocks_in_use"] == 0 and mem["row_bytes_held"] == 0
    assert mem["used_bytes"] == mem["bit_tree_bytes"]
    assert mem["reserved_bytes"] == full["reserved_bytes"]       # block arrays stay, all blocks free
    cs.check_invariants(g)


def test_bulk_build_from_csr_matches_incremental_build():
    rng = np.random.default_rng(8)
    s, d = (rng.zipf(1.6, 4000) % 500).astype(np.int32), rng.integers(0, 500, 4000).astype(np.int32)
    w = rng.random(4000).astype(np.float32)
    b = CSRBatch.from_edges(np, s, d, w)
    counts = np.zeros(500, np.int64)
    counts[b.rows] = np.diff(b.offsets)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    bulk = Hornet.from_csr(np, CSR(offsets=offsets, cols=b.cols, weights=b.weights), block_array_entries=64)
    inc = create("hornet", np, block_array_entries=64)
    inc.insert_vertices(np.arange(500))
    inc.insert_edges(b)
    for g in (bulk, inc):
        cs.check_invariants(g)
    a1, a2 = bulk.adjacency(), inc.adjacency()
    assert np.array_equal(a1.offsets, a2.offsets)
    e1 = set(zip(a1.row_ids().tolist(), a1.cols.tolist(), a1.weights.tolist()))
    e2 = set(zip(a2.row_ids().tolist(), a2.cols.tolist(), a2.weights.tolist()))
    assert e1 == e2 and bulk.num_edges == inc.num_edges == b.num_edges
    assert bulk.stats["rows_moved"] == int((counts > 0).sum())   # one allocation per row, no moves
    with pytest.raises(ValueError):
        bulk.load_csr(CSR(offsets=offsets, cols=b.cols, weights=b.weights))


def test_batch_duplicates_within_batch_and_against_graph():
    g = create("hornet", np)
    g.insert_vertices(np.arange(10))
    _insert(g, [0, 0], [1, 2], [1.0, 2.0])
    raw = CSRBatch(rows=np.array([0, 3], np.int32), offsets=np.array([0, 4, 6]),
                   cols=np.array([9, 1, 9, 3, 4, 4], np.int32),
                   weights=np.array([1, 2, 3, 4, 5, 6], np.float32))
    m = g.insert_edges(raw)
    assert m.tolist() == [True, False, False, True, True, False]
    assert g.degree(np.array([0, 3])).tolist() == [4, 1]
    assert g.edge_weights(np.array([0, 0, 3]), np.array([9, 1, 4])).tolist() == [3.0, 2.0, 6.0]
    cs.check_invariants(g)


@pytest.mark.parametrize("seed", range(4))
def test_random_streams_keep_the_invariants(seed):
    rng = np.random.default_rng(seed)
    g = create("hornet", np, block_array_entries=int(rng.choice([1, 8, 256])))
    for op in cs.random_ops(rng, nv=150, steps=21, max_batch=800):
        cs.apply(g, op)
        cs.check_invariants(g)
