"""faimGraph, aimGraph and ouroGraph: randomized streams against the oracle, and their mechanisms checked.

The invariant checker reads the pool itself: it follows every vertex's linked
pages through the next-page words (faimGraph / aimGraph) or its page handle
(ouroGraph), so a structure that kept its edges anywhere else would fail it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tests.structure_ops import XP, H, apply_op, batch, check_queries, edges_of, operations
from vinestream.structures.faimgraph import R_CAP, R_COUNT, R_FIRST, R_HOST, R_LAST, VERTEX_WORDS
from vinestream.structures.registry import create

CONFIGS = [
    ("faimgraph", {}), ("faimgraph", {"page_bytes": 12}), ("faimgraph", {"page_bytes": 20, "sorted": True}),
    ("faimgraph", {"sorted": True}),
    ("aimgraph", {}), ("aimgraph", {"page_bytes": 12}),
    ("ourograph", {}), ("ourograph", {"queue": "va", "chunk_bytes": 256}),
    ("ourograph", {"queue": "vl", "chunk_bytes": 256}), ("ourograph", {"sorted": True, "chunk_bytes": 512}),
]


def records(g) -> np.ndarray:
    """The vertex records (slot x field) read from the bottom of the pool."""
    return H(g.words)[:g.vertex_top * VERTEX_WORDS].reshape(-1, VERTEX_WORDS).astype(np.int64)


def page_list(g, slot) -> list[int]:
    """The linked pages of a faimGraph / aimGraph slot, followed through the next-page words."""
    pool = H(g.pool)
    rec = records(g)[slot]
    pages, p = [], int(rec[R_FIRST])
    while p >= 0:
        pages.append(p)
        assert len(pages) <= g.page_top, "a cycle in a page list"
        p = int(pool[g.pool_words - p * g.page_words - 1])
    return pages


def adjacency_entries(g, slot) -> np.ndarray:
    """The column words of a slot's storage, in position order, over its whole capacity."""
    words = H(g.words)
    rec = records(g)[slot]
    if g.name == "ourograph":
        if rec[R_FIRST] < 0:
            return np.zeros(0, dtype=np.int64)
        a = g.allocator.words - int(rec[R_FIRST])
        return words[a:a + int(rec[R_CAP])].astype(np.int64)
    e = g.edges_per_page
    return np.concatenate([words[g.pool_words - (p + 1) * g.page_words:][:e] for p in page_list(g, slot)]
                          or [np.zeros(0, np.int32)]).astype(np.int64)


def check_invariants(g, oracle: Oracle | None = None) -> None:
    """Records, storage, queues: nothing handed out twice, nothing lost, counts and links consistent."""
    rec = records(g)
    slot_of = H(g.slot_of).astype(np.int64)
    live_ids = np.nonzero(slot_of >= 0)[0]
    live_slots = slot_of[live_ids]
    assert len(set(live_slots.tolist())) == len(live_slots), "two ids share a slot"
    assert (rec[live_slots, R_HOST] == live_ids).all(), "a record names another host id"
    if g.reuse_slots:
        free_slots = H(g.vertex_queue.contents()).tolist()
        assert len(set(free_slots)) == len(free_slots)
        assert not set(free_slots) & set(live_slots.tolist()), "a live slot is in the vertex queue"
        assert len(free_slots) + len(live_slots) == g.vertex_top, "a vertex slot was lost"
    else:
        assert (live_slots == live_ids).all(), "aimGraph's vertex data is static: slot = id"
    total = 0
    owned = []
    slots_with_storage = range(g.vertex_top) if g.name == "aimgraph" else live_slots.tolist()
    for s in slots_with_storage:
        count, cap = int(rec[s, R_COUNT]), int(rec[s, R_CAP])
        entries = adjacency_entries(g, s)
        assert len(entries) == cap
        assert (entries[:count] >= 0).all() and (entries[count:] == -1).all(), "dense, -1 past the count"
        row = entries[:count]
        assert len(set(row.tolist())) == count, "no parallel edges"
        if g.sorted:
            assert (np.diff(row) > 0).all(), "sorted adjacency"
        total += count
        if g.name == "ourograph":
            if count == 0:
                assert rec[s, R_FIRST] == -1 and cap == 0, "an empty adjacency owns no page"
            else:
                c = int(rec[s, R_LAST])
                assert c == int(g.allocator.class_for_words(np.asarray([2 * count]))[0]), "smallest class"
                assert cap == g.allocator.page_words(c) // 2
                owned.append((int(rec[s, R_FIRST]), c))
        else:
            pages = page_list(g, s)
            if not pages:                          # an aimGraph id below the top that never lived
                assert g.name == "aimgraph" and cap == 0 and count == 0
                continue
            assert cap == len(pages) * g.edges_per_page and rec[s, R_LAST] == pages[-1]
            if g.reuse_pages:
                assert len(pages) == max(1, math.ceil(count / g.edges_per_page)), "tail pages were freed"
            owned += pages
    assert total == g.num_edges
    if g.name == "ourograph":
        handles = [h for h, _ in owned]
        assert len(set(handles)) == len(handles), "a page serves two adjacencies"
        for c in range(len(g.allocator.queues)):
            free = set(H(g.allocator.queues[c].contents()).tolist())
            mine = {h for h, k in owned if k == c}
            assert not free & mine, "a page in use is in its class queue"
            assert g.allocator.live_pages(c) == len(mine), "allocator and graph disagree on live pages"
    else:
        assert len(set(owned)) == len(owned), "a page in two lists"
        free = H(g.page_queue.contents()).tolist() if g.reuse_pages else []
        assert len(set(free)) == len(free) and not set(free) & set(owned), "a listed page is queued"
        assert len(free) + len(owned) == g.page_top, "a page was lost"
    mem = g.memory()
    assert 0 <= mem["used_bytes"] <= mem["reserved_bytes"]
    if oracle is not None:
        assert edges_of(g) == pytest.approx(oracle.edges)
        assert set(live_ids.tolist()) == oracle.vertices


@st.composite
def streams(draw):
    ops = draw(operations())
    return draw(st.sampled_from(CONFIGS)), ops


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.integers(0, 2**32 - 1))
def test_random_streams_against_oracle(stream, seed):
    (name, opts), ops = stream
    g = create(name, XP, **opts)
    o = Oracle(keep_self_loops=True)
    rng = np.random.default_rng(seed)
    for op in ops:
        apply_op(g, o, op, rng)
        check_invariants(g, o)
        check_queries(g, o, rng)


# ---------------------------------------------------------------------------
# mechanisms
# ---------------------------------------------------------------------------
def _sweep(g, rounds=6, width=40, per=30, seed=0):
    """The thesis's Sweep test (4.3.2): insert a set of edges on a window of sources, delete them, move on."""
    rng = np.random.default_rng(seed)
    g.insert_vertices(XP.arange(width * rounds + 100, dtype=np.int32))
    tops = []
    for r in range(rounds):
        s = np.repeat(np.arange(r * width, (r + 1) * width), per)
        d = rng.integers(0, width * rounds + 100, s.shape[0])
        b = batch(s, d)
        g.insert_edges(b)
        g.delete_edges(b)
        assert g.num_edges == 0
        tops.append(g.memory()["used_bytes"])
    return tops


@pytest.mark.parametrize("name", ["faimgraph", "ourograph"])
def test_sweep_reuses_freed_pages(name):
    g = create(name, XP)
    used = _sweep(g)
    assert used[-1] == used[0], "faimGraph's queues return memory to the base state after every round"
    if name == "faimgraph":
        assert g.stats["pages_reused"] > 0 and g.pages_in_use == g.num_vertices
    else:
        assert g.memory()["live_page_bytes"] == 0
    check_invariants(g)


def test_aimgraph_never_reuses_pages_and_grows_under_sweep():
    aim, faim = create("aimgraph", XP), create("faimgraph", XP)
    used_aim = _sweep(aim)
    _sweep(faim)
    assert used_aim[-1] > used_aim[0], "aimGraph holds the maximal allocation state"
    assert aim.page_top > faim.page_top
    assert aim.pages_free == 0 and aim.page_queue is None
    check_invariants(aim)
    # deletions keep a vertex's pages: re-inserting on the same vertex takes no new page
    top = aim.page_top
    v = np.full(20, 300, np.int32)                      # a vertex no sweep window touched: one page
    aim.insert_edges(batch(v, np.arange(20)))
    aim.delete_edges(batch(v, np.arange(20)))
    aim.insert_edges(batch(v, np.arange(20, 40)))
    assert aim.page_top == top + math.ceil(20 / aim.edges_per_page) - 1


@pytest.mark.parametrize("name", ["faimgraph", "ourograph"])
def test_vertex_slots_are_reused_through_the_vertex_queue(name):
    g = create(name, XP)
    g.insert_vertices(XP.arange(100, dtype=np.int32))
    g.insert_edges(batch(np.arange(100), (np.arange(100) + 1) % 100))
    top = g.vertex_top
    s, _ = g.delete_vertices(XP.asarray(np.arange(0, 100, 2, dtype=np.int32)))
    assert len(H(s)) == 100                                 # each vertex had one out- and one in-edge
    assert len(g.vertex_queue) == 50
    g.insert_vertices(XP.arange(1000, 1050, dtype=np.int32))   # new ids take the freed slots
    assert g.vertex_top == top and len(g.vertex_queue) == 0
    assert g.stats["slots_reused"] == 50
    check_invariants(g)


@pytest.mark.parametrize("name,opts", CONFIGS)
def test_memory_back_to_zero_after_deleting_everything(name, opts):
    g = create(name, XP, **opts)
    rng = np.random.default_rng(3)
    g.insert_vertices(XP.arange(300, dtype=np.int32))
    s = (rng.zipf(1.7, 5000) % 300).astype(np.int32)
    g.insert_edges(batch(s, rng.integers(0, 300, 5000)))
    full = g.memory()
    g.delete_vertices(XP.arange(300, dtype=np.int32))
    mem = g.memory()
    assert g.num_edges == 0 and g.num_vertices == 0
    check_invariants(g)
    if name == "aimgraph":
        assert mem["pages_in_use"] == full["pages_in_use"], "aimGraph keeps every page"
    else:
        assert mem["used_bytes"] == 0, mem
        assert mem["reserved_bytes"] >= full["used_bytes"]


def test_faimgraph_pool_is_sized_from_need_and_grows_in_steps():
    g = create("faimgraph", XP)
    rng = np.random.default_rng(5)
    g.insert_vertices(XP.arange(1000, dtype=np.int32))
    first = g.memory()["pool_bytes"]
    assert first <= 1.5 * 1000 * VERTEX_WORDS * 4 * 1.01 + 64 * 1000 * 1.5 + 4096
    for _ in range(6):
        g.insert_edges(batch(rng.integers(0, 1000, 20000), rng.integers(0, 1000, 20000)))
    mem = g.memory()
    assert mem["pool_grows"] >= 1
    # never "all of the GPU": the pool stays within the grow factor of what is in use
    need = 4 * VERTEX_WORDS * g.vertex_top + g.page_bytes * g.page_top
    assert mem["pool_bytes"] <= 1.5 * need + 4096
    check_invariants(g)


def test_page_size_is_configurable():
    for page_bytes, epp in ((64, 7), (128, 15), (12, 1)):
        g = create("faimgraph", XP, page_bytes=page_bytes)
        g.insert_edges(batch(np.zeros(40, np.int32), np.arange(40)))
        assert g.edges_per_page == epp
        assert len(page_list(g, int(H(g.slot_of)[0]))) == math.ceil(40 / epp)
        check_invariants(g)


def test_sorted_mode_keeps_pages_sorted_through_inserts_and_deletes():
    g = create("faimgraph", XP, sorted=True, page_bytes=20)          # 2 edges per page: many pages
    rng = np.random.default_rng(7)
    o = Oracle(keep_self_loops=True)
    for step in range(12):
        s = rng.integers(0, 8, 60)
        d = rng.integers(0, 50, 60)
        if step % 3 == 2:
            g.delete_edges(batch(s, d))
            for a, b in zip(s.tolist(), d.tolist()):
                o.apply(2, a, b)
        else:
            w = rng.random(60).astype(np.float32)
            b = batch(s, d, w)
            g.insert_edges(b)
            for a, c, x in zip(H(b.sources()).tolist(), H(b.cols).tolist(), H(b.weights).tolist()):
                o.apply(1, a, c, x)
        check_invariants(g, o)


def test_ourograph_reallocates_on_size_class_changes_and_reuses_pages():
    g = create("ourograph", XP)
    g.insert_vertices(XP.arange(4, dtype=np.int32))
    g.insert_edges(batch([0], [1]))
    c1 = int(records(g)[int(H(g.slot_of)[0]), R_LAST])
    g.insert_edges(batch(np.zeros(9, np.int32), np.arange(2, 11)))      # 10 edges: 80 B -> a 128 B page
    c2 = int(records(g)[int(H(g.slot_of)[0]), R_LAST])
    assert c2 > c1 and g.stats["reallocations"] == 2
    freed = H(g.allocator.queues[c1].contents()).tolist()
    g.insert_edges(batch([1], [0]))                                   # vertex 1 gets a page of class c1
    h1 = int(records(g)[int(H(g.slot_of)[1]), R_FIRST])
    assert h1 == freed[0], "the freed page is handed out first"
    g.delete_edges(batch(np.zeros(9, np.int32), np.arange(2, 11)))      # shrink back: one more move
    assert int(records(g)[int(H(g.slot_of)[0]), R_LAST]) == c1
    check_invariants(g)


@pytest.mark.parametrize("queue", ["array", "va", "vl"])
def test_ourograph_queue_variants_agree(queue):
    rng = np.random.default_rng(11)
    g = create("ourograph", XP, queue=queue, chunk_bytes=256)
    ref = create("faimgraph", XP)
    for step in range(8):
        s, d = rng.integers(0, 60, 400), rng.integers(0, 60, 400)
        for x in (g, ref):
            (x.insert_edges if step % 3 != 2 else x.delete_edges)(batch(s, d))
        if step == 5:
            for x in (g, ref):
                x.delete_vertices(XP.asarray(np.arange(0, 60, 7, dtype=np.int32)))
        assert edges_of(g) == edges_of(ref)
        check_invariants(g)
    if queue != "array":
        assert g.memory()["queue_chunks"] > 0
