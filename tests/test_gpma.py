"""GPMA+: random streams against the oracle with the array's invariants, and its mechanisms checked directly
(packed leaves, per-level density bounds, bottom-up rebalancing, doubling/halving, contiguous rows)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tests.structure_ops import XP, H, batch, edges_of
from vinestream.structures.gpma import GAP
from vinestream.structures.registry import create


def check_invariants(g) -> None:
    """Sorted with gaps, packed leaves, counts, pivots, degrees; all read from the raw arrays."""
    keys, counts, pivots = H(g.slot_keys), H(g.leaf_count), H(g.leaf_pivot)
    cap, seg = g.capacity, g.segment_size
    assert cap & (cap - 1) == 0 and seg & (seg - 1) == 0 and cap == seg * g.num_segments
    assert g.num_segments == 1 << g.height
    leaves = keys.reshape(g.num_segments, seg)
    filled = np.arange(seg)[None, :] < counts[:, None]
    assert ((leaves != GAP) == filled).all(), "every leaf packed at its start, gaps after"
    live = keys[keys != GAP]
    assert (np.diff(live) > 0).all(), "live keys strictly increasing across the whole array"
    assert len(live) == g.num_edges == int(counts.sum())
    # pivot: own minimum, or the next non-empty leaf's; GAP at the end
    exp = np.full(g.num_segments, GAP, dtype=np.int64)
    nxt = GAP
    for s in range(g.num_segments - 1, -1, -1):
        if counts[s]:
            nxt = leaves[s, 0]
        exp[s] = nxt
    assert np.array_equal(pivots, exp)
    src = live >> 32
    deg = np.bincount(src, minlength=g.vertex_capacity) if len(live) else np.zeros(g.vertex_capacity, int)
    assert np.array_equal(H(g.out_degree), deg[: g.vertex_capacity])
    alive = H(g.alive)
    assert alive[src].all() and alive[live & 0xFFFFFFFF].all(), "edges only between live vertices"
    # the root bound is enforced when an update reaches the root; the array can never overflow
    assert g.num_edges <= g.capacity


def check_against(g, o: Oracle, rng) -> None:
    assert edges_of(g) == pytest.approx(o.edges)
    assert set(H(g.vertices()).tolist()) == o.vertices
    n = max(g.vertex_capacity, 1)
    qs = np.concatenate([rng.integers(-1, n + 3, 50), [u for u, _ in list(o.edges)[:20]]]).astype(np.int64)
    qd = np.concatenate([rng.integers(-1, n + 3, 50), [v for _, v in list(o.edges)[:20]]]).astype(np.int64)
    got = H(g.contains(XP.asarray(qs), XP.asarray(qd)))
    assert got.tolist() == [(int(u), int(v)) in o.edges for u, v in zip(qs, qd)]
    w = H(g.edge_weights(XP.asarray(qs), XP.asarray(qd)))
    ew = np.array([o.edges.get((int(u), int(v)), np.nan) for u, v in zip(qs, qd)], dtype=np.float32)
    assert np.array_equal(w, ew, equal_nan=True)


def apply_op(g, o: Oracle, op, rng) -> None:
    kind, payload = op
    if kind == "ins":
        src, dst, w = payload
        g.insert_edges(batch(src, dst, w))
        for s, d, x in zip(src, dst, w):
            o.apply(1, s, d, float(np.float32(x)))
    elif kind == "del":
        src, dst = payload
        present = list(o.edges)
        if present:        # half of the deletions hit existing edges
            pick = rng.choice(len(present), min(len(present), len(src)), replace=False)
            src = list(src) + [present[i][0] for i in pick]
            dst = list(dst) + [present[i][1] for i in pick]
        g.delete_edges(batch(src, dst))
        for s, d in zip(src, dst):
            o.apply(2, s, d)
    elif kind == "delv":
        g.delete_vertices(XP.asarray(np.asarray(payload, np.int64)))
        for v in payload:
            o.apply(4, v)


def streams(max_id: int = 60):
    ids = st.integers(0, max_id)
    edges = st.lists(st.tuples(ids, ids, st.floats(-5, 5, width=32)), min_size=1, max_size=120)
    op = st.one_of(
        edges.map(lambda es: ("ins", ([a for a, _, _ in es], [b for _, b, _ in es], [w for *_, w in es]))),
        edges.map(lambda es: ("del", ([a for a, _, _ in es], [b for _, b, _ in es]))),
        st.lists(ids, min_size=1, max_size=4).map(lambda vs: ("delv", vs)))
    opts = st.sampled_from([{}, {"segment_size": 2, "min_capacity": 2}, {"segment_size": 4},
                            {"segment_size": 8, "lower_leaf": 0.2, "upper_leaf": 0.75,
                             "lower_root": 0.3, "upper_root": 0.7}])
    return st.tuples(opts, st.lists(op, min_size=1, max_size=14))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.integers(0, 2**32 - 1))
def test_random_streams_keep_invariants_and_match_oracle(stream, seed):
    opts, ops = stream
    g = create("gpma", XP, **opts)
    o = Oracle(keep_self_loops=True)
    rng = np.random.default_rng(seed)
    for op in ops:
        apply_op(g, o, op, rng)
        check_invariants(g)
        check_against(g, o, rng)


def test_density_bounds_interpolate_from_leaf_to_root_and_are_configurable():
    g = create("gpma", XP, segment_size=4, min_capacity=32)          # 8 leaves: levels 0..3
    assert g.height == 3
    b = g.density_bounds()
    assert b[0] == pytest.approx((0.08, 0.92)) and b[-1] == pytest.approx((0.40, 0.80))   # the thesis table
    assert (g.min_entries[0], g.max_entries[0]) == (1, 3)          # of a 4-slot leaf
    assert (g.min_entries[-1], g.max_entries[-1]) == (13, 25)      # of the 32-slot root
    lows, highs = [x for x, _ in b], [y for _, y in b]
    assert lows == sorted(lows) and highs == sorted(highs, reverse=True)
    c = create("gpma", XP, lower_leaf=0.1, upper_leaf=0.9, lower_root=0.3, upper_root=0.6)
    assert c.density_bounds()[-1][1] <= 0.6 and c.density_bounds()[0][1] <= 0.9
    with pytest.raises(ValueError):
        create("gpma", XP, lower_root=0.45, upper_root=0.8)          # halving would overflow the root
    with pytest.raises(ValueError):
        create("gpma", XP, segment_size=6)


def test_root_overflow_doubles_the_array_and_underflow_halves_it():
    g = create("gpma", XP, segment_size=4, min_capacity=16)
    g.insert_vertices(XP.arange(64, dtype=np.int32))
    caps = [g.capacity]
    for lo in range(0, 400, 20):                         # 20 new edges per batch
        k = np.arange(lo, lo + 20)
        g.insert_edges(batch(k // 8, k % 8 + 8))
        assert g.num_edges <= g.upper_leaf * g.capacity, "leaves absorb updates below the leaf bound"
        caps.append(g.capacity)
        check_invariants(g)
    assert g.stats["doublings"] >= 4 and caps == sorted(caps)
    grown = g.capacity
    live = np.arange(400)
    for lo in range(0, 400, 40):
        k = live[lo:lo + 40]
        g.delete_edges(batch(k // 8, k % 8 + 8))
        check_invariants(g)
    assert g.num_edges == 0 and g.stats["halvings"] >= 4
    assert g.capacity == g.min_capacity < grown
    mem = g.memory()
    assert mem["reserved_bytes"] - mem["used_bytes"] <= 12 * g.min_capacity + 9 * g.vertex_capacity


def test_a_burst_into_one_leaf_is_absorbed_bottom_up_without_a_resize():
    g = create("gpma", XP, segment_size=8)
    g.insert_vertices(XP.arange(4096, dtype=np.int32))
    g.insert_edges(batch(np.arange(0, 4096, 4), np.ones(1024)))      # spread: one edge per 4 sources
    cap, before = g.capacity, list(g.stats["redistributions"])
    g.insert_edges(batch(np.full(12, 2048), np.arange(100, 112)))    # 12 keys into one leaf of 8 slots
    check_invariants(g)
    after = g.stats["redistributions"]
    assert g.capacity == cap, "absorbed inside the array"
    assert after[0] == before[0], "the leaf alone could not take them"
    grew = [lvl for lvl in range(1, len(after)) if after[lvl] > before[lvl]]
    assert grew and min(grew) >= 1 and max(grew) < g.height, "settled at an inner level, not the root"
    # a small insert that fits its leaf settles at level 0
    before = list(after)
    g.insert_edges(batch([4000], [7]))
    assert g.stats["redistributions"][0] == before[0] + 1 and g.stats["redistributions"][1:] == before[1:]


def test_deletions_mark_then_merge_underfull_leaves_with_their_siblings():
    g = create("gpma", XP, segment_size=8)
    g.insert_vertices(XP.arange(2048, dtype=np.int32))
    src = np.repeat(np.arange(0, 2048, 2), 2)
    g.insert_edges(batch(src, np.tile([1, 3], 1024)))
    check_invariants(g)
    before = list(g.stats["redistributions"])
    # empty a run of consecutive leaves: they drop below the leaf bound and merge upwards
    keys = H(g.slot_keys)
    start = (g.num_segments // 2) * g.segment_size
    victims = keys[start:start + 4 * g.segment_size]
    victims = victims[victims != GAP]
    g.delete_edges(batch(victims >> 32, victims & 0xFFFFFFFF))
    check_invariants(g)
    after = g.stats["redistributions"]
    assert any(after[lvl] > before[lvl] for lvl in range(1, len(after)))
    assert not H(g.contains(XP.asarray(victims >> 32), XP.asarray(victims & 0xFFFFFFFF))).any()


def test_adjacency_of_a_vertex_is_one_contiguous_sorted_range():
    rng = np.random.default_rng(3)
    g = create("gpma", XP)
    g.insert_vertices(XP.arange(300, dtype=np.int32))
    s, d = rng.integers(0, 300, 5000), rng.integers(0, 300, 5000)
    g.insert_edges(batch(s, d, rng.random(5000)))
    keys = H(g.slot_keys)
    v = np.arange(300)
    start, end = (H(x) for x in g.row_ranges(XP.asarray(v)))
    deg = H(g.degree(XP.asarray(v)))
    for i in range(300):
        span = keys[start[i]:end[i]]
        live = span[span != GAP]
        assert len(live) == deg[i] and ((live >> 32) == i).all()
        outside = np.r_[keys[:start[i]], keys[end[i]:]]
        assert not ((outside >> 32) == i).any() or not (outside[(outside >> 32) == i] != GAP).any()
    sub = g.adjacency(XP.asarray([5, 299, 5, 1000, -1]))
    off, cols = H(sub.offsets), H(sub.cols)
    assert np.diff(off).tolist()[3:] == [0, 0]
    assert np.array_equal(cols[off[0]:off[1]], np.sort(cols[off[0]:off[1]])), "rows sorted by target"
    assert np.array_equal(cols[off[0]:off[1]], cols[off[2]:off[3]])


def test_vertex_deletion_removes_its_range_and_in_edges_and_reuse_starts_bare():
    g = create("gpma", XP, segment_size=4)
    o = Oracle(keep_self_loops=True)
    rng = np.random.default_rng(5)
    s, d = rng.integers(0, 40, 600), rng.integers(0, 40, 600)
    apply_op(g, o, ("ins", (s.tolist(), d.tolist(), [1.0] * 600)), rng)
    src, dst = g.delete_vertices(XP.asarray([3, 7, 7, 99]))
    pairs = set(zip(H(src).tolist(), H(dst).tolist()))
    assert len(pairs) == len(H(src)), "each removed edge once"
    exp = {e for e in o.edges if 3 in e or 7 in e}
    assert pairs == exp
    for v in (3, 7):
        o.apply(4, v)
    check_invariants(g)
    check_against(g, o, rng)
    g.insert_vertices(XP.asarray([7]))
    assert int(H(g.degree(XP.asarray([7])))[0]) == 0


def test_memory_counts_every_slot_and_follows_the_array():
    g = create("gpma", XP)
    g.insert_vertices(XP.arange(1000, dtype=np.int32))
    rng = np.random.default_rng(0)
    g.insert_edges(batch(rng.integers(0, 1000, 20000), rng.integers(0, 1000, 20000)))
    m = g.memory()
    arrays = (g.slot_keys, g.slot_weights, g.leaf_count, g.leaf_pivot, g.alive, g.out_degree)
    assert m["reserved_bytes"] == sum(int(a.nbytes) for a in arrays)
    assert m["used_bytes"] <= m["reserved_bytes"]
    assert g.lower_root * 0.5 <= m["density"] <= g.upper_root
