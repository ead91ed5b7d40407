"""slabhash: random streams against the oracle, and hashGraph's mechanisms checked on the real slabs.

The invariant checker walks every bucket's chain through the slabs' next words
(word 31) in the allocator's pool, so a structure that kept its edges anywhere
else would fail it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tests.structure_ops import XP, H, apply_op, batch, check_against, operations
from vinestream.structures.registry import create
from vinestream.structures.slabhash import EMPTY, TOMBSTONE, SlabHash, bucket_hash


def chain(g: SlabHash, bucket: int) -> list[int]:
    """Slab ids of a bucket's chain, following word 31 from its head."""
    words = H(g.alloc.words)
    out, s = [], int(H(g.bucket_head)[bucket])
    while s >= 0:
        out.append(s)
        assert len(out) <= g.alloc.capacity, "cycle in a chain"
        s = int(words[s, 31])
    return out


def table_contents(g: SlabHash, v: int) -> dict:
    """{bucket: [key words in chain order]} of vertex v, read from the slabs."""
    words = H(g.alloc.words)
    start, nb = int(H(g.bucket_start)[v]), int(H(g.num_buckets)[v])
    kw = list(range(0, 30, g.key_stride))
    return {b: [int(words[s, j]) for s in chain(g, b) for j in kw] for b in range(start, start + nb)}


def check_invariants(g: SlabHash, oracle: Oracle | None = None) -> None:
    """Chains, dense slots, hashing, counters, slab ownership, pool accounting."""
    g.alloc.check()
    words = H(g.alloc.words)
    alive, count, tomb = H(g.alive), H(g.edge_count), H(g.tombstones)
    nbk, start = H(g.num_buckets), H(g.bucket_start)
    fill, tail, owner = H(g.bucket_fill), H(g.bucket_tail), H(g.slab_owner)
    spp = g.slots_per_slab
    kw = list(range(0, 30, g.key_stride))
    seen = np.zeros(g.alloc.capacity, dtype=bool)
    live_total = tomb_total = buckets_total = 0
    for v in range(g.capacity):
        if not alive[v]:
            assert nbk[v] == 0 and count[v] == 0 and tomb[v] == 0
            continue
        if nbk[v] == 0:
            assert count[v] == 0 and tomb[v] == 0, "edges without a table"
            continue
        buckets_total += int(nbk[v])
        keys_v = []
        for b in range(int(start[v]), int(start[v] + nbk[v])):
            slabs = chain(g, b)
            assert len(slabs) == max(1, math.ceil(fill[b] / spp)), "chain length follows the fill"
            assert tail[b] == slabs[-1]
            for s in slabs:
                assert not seen[s], "a slab is in one chain once"
                seen[s] = True
                assert owner[s] == v
                assert words[s, 30] == EMPTY, "word 30 unused"
            slots = [int(words[s, j]) for s in slabs for j in kw]
            used = [k for k in slots if k != EMPTY]
            assert slots[:len(used)] == used, "used slots are a prefix of the chain"
            assert len(used) == fill[b]
            live = [k for k in used if k != TOMBSTONE]
            keys_v += live
            tomb_total += len(used) - len(live)
            for k in live:                      # every key sits in the bucket its hash names
                assert int(start[v]) + int(bucket_hash(np, np.asarray([k]), np.asarray([nbk[v]]))[0]) == b
        assert len(keys_v) == len(set(keys_v)) == count[v], "no parallel edges; degree = live keys"
        live_total += len(keys_v)
    assert int(seen.sum()) == g.alloc.in_use, "every slab in use belongs to a chain"
    assert live_total == g.num_edges and tomb_total == int(tomb.sum()) == g.memory()["tombstones"]
    assert buckets_total == g.dir_live
    if oracle is not None:
        indeg = H(g.in_degree)
        for v in range(g.capacity):
            assert indeg[v] == (len(oracle.inn.get(v, ())) if alive[v] else 0)


OPTIONS = [{}, {"weighted": True, "max_chain": 1}, {"load_factor": 0.3}, {"auto_flush": False},
           {"flush_fraction": 0.1, "initial_slabs": 1}, {"load_factor": 1.0, "max_chain": 4}]


@st.composite
def streams(draw):
    ops = draw(operations())
    return draw(st.sampled_from(OPTIONS)), ops


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.integers(0, 2**32 - 1))
def test_random_streams_match_oracle(stream, seed):
    opts, ops = stream
    rng = np.random.default_rng(seed)
    g = create("slabhash", XP, **opts)
    o = Oracle(keep_self_loops=True)
    for op in ops:
        apply_op(g, o, op, rng)
        check_invariants(g, o)
        check_against(g, o, rng)


def test_slab_layout_pairs_and_next_word():
    """Weighted: key at word 2i, its weight's bits at 2i+1, word 31 the next slab."""
    g = create("slabhash", XP, max_chain=8, load_factor=1.0)
    d = np.arange(1, 21)                           # 20 edges of vertex 0 -> 2 buckets of 15
    g.insert_edges(batch(np.zeros(20), d, d / 4))
    assert int(H(g.num_buckets)[0]) == 2
    words = H(g.alloc.words)
    for b in table_contents(g, 0):
        for s in chain(g, b):
            for i in range(15):
                k = int(words[s, 2 * i])
                if k >= 0:
                    assert words[s, 2 * i + 1:2 * i + 2].view(np.float32)[0] == np.float32(k / 4)
    assert sorted(k for ks in table_contents(g, 0).values() for k in ks if k >= 0) == d.tolist()


def test_unweighted_slabs_hold_30_keys():
    g = create("slabhash", XP, weighted=False, load_factor=1.0)
    g.insert_edges(batch(np.zeros(30), np.arange(30)))
    assert g.slots_per_slab == 30 and int(H(g.num_buckets)[0]) == 1
    assert g.memory()["slabs_in_use"] == 1                  # 30 keys, one slab
    g.insert_edges(batch([0], [30]))                        # the 31st opens a second slab
    assert g.memory()["slabs_in_use"] == 2
    assert H(g.edge_weights(np.zeros(2), np.asarray([3, 99]))).tolist()[0] == 1.0
    check_invariants(g)


@pytest.mark.parametrize("lf", [0.7, 0.5, 1.0])
def test_bucket_count_from_first_batch_degree_and_load_factor(lf):
    g = create("slabhash", XP, load_factor=lf)
    degs = {0: 1, 1: 10, 2: 11, 3: 100, 4: 0}
    src = np.concatenate([np.full(k, v) for v, k in degs.items()])
    dst = np.concatenate([np.arange(k) + 10 for k in degs.values()])
    g.insert_edges(batch(src, dst))
    g.insert_vertices(XP.asarray([4]))
    nb = H(g.num_buckets)
    for v, k in degs.items():
        assert nb[v] == (0 if k == 0 else max(1, math.ceil(k / (lf * 15)))), v
    check_invariants(g)


def test_resize_rehashes_when_a_chain_grows_past_the_bound():
    g = create("slabhash", XP, max_chain=2)
    rng = np.random.default_rng(3)
    targets = rng.permutation(5000)[:1500] + 1
    g.insert_edges(batch([0, 0], targets[:2]))
    assert int(H(g.num_buckets)[0]) == 1
    sizes = []
    for part in np.array_split(targets[2:], 30):           # the degree grows batch by batch
        g.insert_edges(batch(np.zeros(len(part)), part))
        sizes.append(int(H(g.num_buckets)[0]))
        check_invariants(g)
        longest = max(len(chain(g, b)) for b in table_contents(g, 0))
        assert longest <= g.max_chain + 2                 # the bound triggers a rehash (hash skew aside)
    assert g.stats["resizes"] >= 3 and sizes == sorted(sizes) and sizes[-1] >= 1500 / 30
    assert bool(H(g.contains(np.zeros(1500), targets)).all())


def test_tombstones_stay_until_flush_and_are_not_reused():
    g = create("slabhash", XP, auto_flush=False, max_chain=10)
    g.insert_edges(batch(np.zeros(40), np.arange(40)))
    slabs = g.memory()["slabs_in_use"]
    removed = H(g.delete_edges(batch(np.zeros(30), np.arange(30))))
    assert removed.all() and g.num_edges == 10
    assert g.memory()["tombstones"] == 30 and g.memory()["slabs_in_use"] == slabs
    flat = [k for ks in table_contents(g, 0).values() for k in ks]
    assert flat.count(TOMBSTONE) == 30
    fill_before = int(H(g.bucket_fill).sum())
    g.insert_edges(batch(np.zeros(5), np.arange(100, 105)))      # new keys take empty slots
    assert int(H(g.bucket_fill).sum()) == fill_before + 5
    assert [k for ks in table_contents(g, 0).values() for k in ks].count(TOMBSTONE) == 30
    check_invariants(g)
    g.flush()
    assert g.memory()["tombstones"] == 0 and g.memory()["slabs_in_use"] < slabs
    assert g.stats["flushes"] == 1
    assert sorted(H(g.adjacency(XP.asarray([0])).cols).tolist()) == list(range(30, 40)) + list(range(100, 105))
    check_invariants(g)


def test_auto_flush_reclaims_when_tombstones_dominate():
    g = create("slabhash", XP, flush_fraction=0.5)
    g.insert_edges(batch(np.zeros(100), np.arange(100)))
    g.delete_edges(batch(np.zeros(20), np.arange(20)))          # 20% tombstones: kept
    assert g.memory()["tombstones"] == 20 and g.stats["flushes"] == 0
    g.delete_edges(batch(np.zeros(40), np.arange(20, 60)))      # 60%: flushed
    assert g.memory()["tombstones"] == 0 and g.stats["flushes"] == 1
    assert int(H(g.num_buckets)[0]) == math.ceil(40 / (0.7 * 15))   # re-sized for its live degree
    check_invariants(g)


def test_memory_back_to_zero_after_deleting_everything():
    g = create("slabhash", XP)
    rng = np.random.default_rng(1)
    s, d = rng.integers(0, 300, 6000), rng.integers(0, 300, 6000)
    g.insert_edges(batch(s, d, rng.random(6000)))
    peak = g.memory()
    assert peak["slabs_in_use"] > 0 and peak["bytes_per_edge"] > 0
    csr = g.adjacency()
    rows = H(csr.row_ids())
    g.delete_edges(batch(rows, H(csr.cols)))
    m = g.memory()
    assert g.num_edges == 0 and m["slabs_in_use"] == 0 and m["buckets"] == 0 and m["tombstones"] == 0
    assert m["used_bytes"] == 29 * g.num_vertices
    check_invariants(g)
    # the freed slabs serve the next inserts: no growth of the pool
    reserved = m["slabs_reserved"]
    g.insert_edges(batch(s, d))
    assert g.memory()["slabs_reserved"] == reserved
    check_invariants(g)


def test_vertex_deletion_drops_table_and_in_edges_and_id_is_reused():
    g = create("slabhash", XP)
    g.insert_edges(batch([1, 1, 2, 3, 3, 5], [2, 3, 1, 1, 5, 1], [1, 2, 3, 4, 5, 6]))
    in_use = g.memory()["slabs_in_use"]
    s, d = g.delete_vertices(XP.asarray([1]))
    assert sorted(zip(H(s).tolist(), H(d).tolist())) == [(1, 2), (1, 3), (2, 1), (3, 1), (5, 1)]
    assert g.num_edges == 1 and int(H(g.num_buckets)[1]) == 0
    assert g.memory()["slabs_in_use"] < in_use
    check_invariants(g)
    g.insert_edges(batch([1], [5], [9.0]))                      # id 1 reused: a fresh table
    assert H(g.degree(XP.asarray([1, 2, 3, 5]))).tolist() == [1, 0, 1, 0]
    assert not bool(H(g.contains(XP.asarray([1, 2]), XP.asarray([2, 1]))).any())
    assert H(g.edge_weights(XP.asarray([1]), XP.asarray([5]))).tolist() == [9.0]
    check_invariants(g)


def test_query_hashes_to_one_bucket():
    """A key planted in a bucket its hash does not name is not found: queries read one chain."""
    g = create("slabhash", XP, load_factor=0.1)
    g.insert_edges(batch(np.zeros(10), np.arange(10)))
    nb = int(H(g.num_buckets)[0])
    assert nb >= 2
    home = int(H(g.bucket_start)[0]) + int(bucket_hash(np, np.asarray([777]), np.asarray([nb]))[0])
    other = home + 1 if home + 1 < int(H(g.bucket_start)[0]) + nb else home - 1
    s = int(H(g.bucket_head)[other])
    word = s * 32 + 2 * int(H(g.bucket_fill)[other])
    g.alloc.flat[word] = 777
    assert not bool(H(g.contains(XP.asarray([0]), XP.asarray([777])))[0])
    g.alloc.flat[word] = EMPTY


def test_concurrent_phases_equal_sequential_phases():
    assert SlabHash.concurrent_phases is True
    rng = np.random.default_rng(5)
    a, b = create("slabhash", XP), create("slabhash", XP)
    for _ in range(5):
        s, d, w = rng.integers(0, 60, 800), rng.integers(0, 60, 800), rng.random(800)
        ins = batch(s[:500], d[:500], w[:500])
        keys = set(zip(H(ins.sources()).tolist(), H(ins.cols).tolist()))
        dels = [(x, y) for x, y in zip(s[500:], d[500:]) if (x, y) not in keys]     # disjoint
        dels += list(zip(*[H(c) for c in (a.adjacency().row_ids(), a.adjacency().cols)]))[:100]
        dels = [(x, y) for x, y in dels if (x, y) not in keys]
        db = batch([x for x, _ in dels], [y for _, y in dels])
        mi, md = a.apply_edge_phases(ins, db)
        assert np.array_equal(H(mi), H(b.insert_edges(ins)))
        assert np.array_equal(H(md), H(b.delete_edges(db)))
        ea, eb = a.adjacency(), b.adjacency()
        assert np.array_equal(H(ea.offsets), H(eb.offsets))
        check_invariants(a)
    assert a.memory() == b.memory()


def test_options_are_validated():
    with pytest.raises(ValueError):
        create("slabhash", XP, insert_strategy="block")
    with pytest.raises(ValueError):
        create("slabhash", XP, load_factor=0)
    assert create("slabhash", XP, insert_strategy="warp").insert_strategy == "warp"


def test_road_bench_pieces_on_a_small_graph():
    """The slides' experiment's measurements (insert rate, bytes per edge) on a tiny graph."""
    from vinestream.stream.bench.slabhash_road import _insert_rate, _memory_point, format_table
    i = np.arange(200)
    src, dst = i // 4, (i // 4 + 1 + i % 4) % 50                  # 200 distinct edges, degree 4
    r = _insert_rate(np, "array", src, dst, 50, weighted=False, repeat=1, batch_size=64)
    assert r["edges"] == r["distinct_edges"] == 200 and r["batches"] == 4 and r["edges_per_second"] > 0
    m = _memory_point(np, "tiny", src, dst, 50, weighted=True)
    assert m["edges"] == r["edges"] and m["slab_bytes_per_edge"] >= 128 / 15
    assert m["bytes_per_edge"] > m["slab_bytes_per_edge"] > m["csr_bytes_per_edge"]     # degree ~4: slabs mostly empty
    assert "tiny" in format_table({"inserts": {"array/x/y": r}, "memory": [m]})
