"""The fused GraphVine kernels: compiled by nvcc for sm_90 (skipped without nvcc), and run through
the serial host emulation (tests/graphvine_emulation.py) against the array program and the oracle."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import graphvine_emulation as emu
from tests import structure_contract as contract
from tests.backends import HAS_GPU
from tests.oracle import Oracle
from tests.structure_ops import apply_op, check_against
from tests.test_graphvine import assert_same_state, check_device_queue, check_invariants, phase_batches, streams
from vinestream.structures import graphvine_kernels as gk
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

needs_gpp = pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation")
# the emulation stands in for a GPU; where there is one, test_graphvine_fused_gpu.py runs the real kernels
emulation_only = pytest.mark.skipif(HAS_GPU, reason="a GPU is present: the real kernels are tested instead")


@needs_gpp
@emulation_only
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2]))
def test_emulated_fused_path_matches_oracle_and_array_path(stream, seed, order):
    """Random streams through the fused path (emulated kernels, threads in several orders) and
    the array program side by side: oracle, invariants, and identical state after every op."""
    opts, ops = stream
    saved, gk.launcher = gk.launcher, emu.HostLauncher(order, seed)
    tile, gk.SHIFT_TILE = gk.SHIFT_TILE, 1 + seed % 9          # the one-pass shifts' tiles: moves cross them
    try:
        _run_side_by_side(opts, ops, seed)
    finally:
        gk.launcher, gk.SHIFT_TILE = saved, tile


def _run_side_by_side(opts, ops, seed):
    # odd seeds: the one-sync batches on the CUDA graph path's fixed buffers (sizes and arrays on the device);
    # seeds not divisible by 3: the two-sync batches (the first, vertex deletions' in-edges, raw batches) on
    # the key-side path, their moves staged where seed % 7 == 0, else in one pass; seed % 5 > 1: the one-sync
    # batches on the key side too
    fused = create("graphvine", np, graphs="emulate" if seed % 2 else False, keyside=seed % 3 != 0,
                   keyside_small=seed % 5 > 1, shift="staged" if seed % 7 == 0 else "tiles", **opts)
    ref = create("graphvine", np, **opts)
    fused.fused = True
    o, o_ref = Oracle(keep_self_loops=True), Oracle(keep_self_loops=True)
    for op in ops:
        apply_op(fused, o, op, np.random.default_rng(seed))
        apply_op(ref, o_ref, op, np.random.default_rng(seed))
        check_invariants(fused, o)
        check_against(fused, o, np.random.default_rng(seed))
        assert_same_state(fused, ref)
        check_device_queue(fused)


@needs_gpp
@emulation_only
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("opts", [{"block_size": 3}, {"min_block_size": 1, "max_block_size": 64, "target_blocks": 2}])
@pytest.mark.parametrize("block_keys, workspace, keyside, graphs, shift",
                         [(gk.BLOCK_KEYS, None, False, False, "tiles"), (gk.BLOCK_KEYS, (1, 2), False, False, "tiles"),
                          (gk.BLOCK_KEYS, None, True, False, "tiles"), (gk.BLOCK_KEYS, (1, 2), True, False, "tiles"),
                          (gk.BLOCK_KEYS, None, False, "emulate", "tiles"),
                          (gk.BLOCK_KEYS, (1, 2), True, "emulate", "tiles"),
                          (0, None, True, False, "tiles"), (0, None, True, False, "staged"),
                          (0, None, False, False, "tiles")],
                         ids=["one-sync", "one-sync-tiny-workspace", "one-sync-key-side",
                              "one-sync-key-side-tiny-workspace", "one-sync-graph-buffers",
                              "one-sync-key-side-graph-buffers-tiny-workspace", "grid-plans", "grid-plans-staged",
                              "grid-plans-row-side"])
def test_emulated_fused_path_on_a_skewed_graph(order, opts, block_keys, workspace, keyside, graphs, shift,
                                               monkeypatch):
    """Hub vertices with deep trees (hundreds of blocks with one size; re-homing through the size
    classes otherwise), several insert/delete rounds; the 4,000- and 7,600-edge batches through the one-sync path
    (one-block prep and plans, every kernel queued before the one read; with a tiny workspace every
    batch first stops and runs again in a grown one) and, with ``block_keys`` 0, through the grid
    kernels, CuPy's prefix sums and two reads: their searches from the keys (``keyside``: gv_rank, then
    the one-pass shifts over tiles of 5 entries, so that moves cross tiles, or with ``shift="staged"``
    gv_stage and the scatters) or from the rows' live entries (gv_fill_rows, gv_find, gv_insert_write,
    gv_delete_move).  ``graphs="emulate"``: the one-sync launches on the CUDA graph path's fixed buffers, with
    the batch's size and arrays as device parameters (what a graph captures), run one by one."""
    launcher = emu.HostLauncher(order, 12345)
    monkeypatch.setattr(gk, "launcher", launcher)
    monkeypatch.setattr(gk, "BLOCK_KEYS", block_keys)
    monkeypatch.setattr(gk, "SHIFT_TILE", 5)
    rng = np.random.default_rng(order)
    fused = create("graphvine", np, keyside=keyside, keyside_small=keyside, graphs=graphs, shift=shift, **opts)
    ref = create("graphvine", np, **opts)
    fused.fused = True
    if workspace:
        fused._ws_want = workspace
    for step in range(6):
        # 4,000 edges, or (steps 1 and 3) about 7,000 distinct keys: past the 128 chunks of 32 keys whose
        # sums a 4,096-key one-block plan kept in shared memory
        m = 7600 if step in (1, 3) else 4000
        s = (rng.zipf(1.6, m) % 300).astype(np.int32)
        d = rng.integers(0, 2000, m).astype(np.int32)
        w = rng.random(m).astype(np.float32)
        for g in (fused, ref):
            b = CSRBatch.from_edges(np, s, d, w)
            m = (g.insert_edges if step % 3 != 2 else g.delete_edges)(b)
            if g is fused:
                mf = m
            else:
                assert np.array_equal(mf, m)
        if step == 4:
            fused.delete_vertices(np.arange(0, 300, 7))
            ref.delete_vertices(np.arange(0, 300, 7))
        assert_same_state(fused, ref)
        check_invariants(fused)
        check_device_queue(fused)
    if block_keys:          # every batch after the first (it makes the pool), 7,600-edge ones too: the one-sync path
        assert fused.one_sync["batches"] >= 5, fused.one_sync
    if "block_size" in opts:
        assert max(np.asarray(fused.num_blocks)) > 100
    else:
        assert fused.stats["rehomed"] > 20 and len(set(np.asarray(fused.block_class).tolist())) > 4
    qs, qd = rng.integers(-2, 2100, 5000), rng.integers(-2, 2100, 5000)
    present = np.asarray(ref.adjacency(np.arange(300)).cols)       # hits in deep rows as well
    rows_of = np.repeat(np.arange(300), np.diff(np.asarray(ref.adjacency(np.arange(300)).offsets)))
    qs, qd = np.concatenate([qs, rows_of]), np.concatenate([qd, present])
    exp = ref.contains(qs, qd)
    assert exp.sum() >= len(present)
    for a, b in ((qs, qd), (qs.astype(np.int32), qd.astype(np.int32))):   # both query kernels
        assert np.array_equal(fused.contains(a, b), exp)
        assert np.array_equal(fused.edge_weights(a, b), ref.edge_weights(qs, qd), equal_nan=True)
    rows = rng.integers(-1, 400, 50)
    a, b = fused.adjacency(rows), ref.adjacency(rows)
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.cols, b.cols)
    assert np.array_equal(a.weights, b.weights)
    assert np.array_equal(fused.degree(rows), ref.degree(rows))
    moved = sum(launcher.launches.get(k, 0) for k in ("gv_delete_move", "gv_delete_scatter", "gv_delete_shift"))
    assert launcher.launches.get("gv_insert_finish", 0) >= 3 and moved >= 2
    # every batch on the key side (searches from the keys) or every one on the rows' side; the large ones'
    # moves in one pass (tiles) or staged
    tiles = ("gv_insert_shift", "gv_delete_shift")
    staged = ("gv_stage", "gv_delete_scatter")
    one_pass = keyside and shift == "tiles" and not block_keys
    key_side = [launcher.launches.get(k, 0) for k in ("gv_rank", "gv_insert_scatter") + (tiles if one_pass else staged)]
    row_side = [launcher.launches.get(k, 0) for k in ("gv_find", "gv_insert_write", "gv_delete_move")]
    assert min(key_side if keyside else row_side) >= 2 and max(row_side if keyside else key_side) == 0
    if keyside and not block_keys:      # (the one-sync path stages; its first batch, the pool's, is large)
        assert max(launcher.launches.get(k, 0) for k in (staged if one_pass else tiles)) == 0
    assert launcher.launches.get("gv_query_i32", 0) >= 2 and launcher.launches.get("gv_query_i64", 0) >= 2
    block = launcher.launches.get("gv_insert_plan_block", 0) + launcher.launches.get("gv_delete_plan_block", 0)
    assert (block >= 3) if block_keys else (block == 0 and launcher.launches.get("gv_plan_scan", 0) >= 3)
    assert (fused._gbuf is not None) == bool(graphs and block_keys)     # the graph path's buffers were used
    if block_keys:      # the first batch built the pool (two reads); the others went through in one
        assert fused.one_sync["batches"] >= 5, fused.one_sync
        assert (fused.one_sync["workspace_grown"] >= 1) == bool(workspace), fused.one_sync


@needs_gpp
@emulation_only
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=contract.stream_st, order=st.sampled_from([0, 1, 2]))
def test_emulated_fused_path_keeps_the_structure_contract(stream, order):
    """The structure contract's streams (tests/structure_contract.py) on graphvine's fused path."""
    real = contract.create

    def fused_graphvine(name, xp, **options):
        g = real(name, xp, **options)
        g.fused = True
        return g
    launcher = emu.HostLauncher(order, 7)
    saved, gk.launcher = gk.launcher, launcher
    contract.create = fused_graphvine
    try:
        run = contract.run_stream("graphvine", np, stream)
    finally:
        contract.create, gk.launcher = real, saved
    if run.graph.num_edges:
        assert launcher.inserts_written() >= 1, "the fused path ran"


#: device operations (array operations + kernel launches, as ``backend.count_operations`` counts them)
#: of one 1,000-edge batch on graphvine's fused path: what it issues now.  Before the fused plan kernels
#: the branch's own counter (which also counted allocations) gave insert 229, delete 164, query 49; with
#: them (count_operations) 49 / 42 / 3; with gv_prep (a CSR batch's keys in order: no sort) and the delete's
#: per-key plan (no pass over the live entries for the compaction offsets), 20 / 17 / 3; with the live
#: entries' slots listed once (gv_fill_rows) and the per-class offsets by chunk sums (a zeroed chunk
#: table: one memset), which make 1e6-edge batches cheaper, and gv_find's int8 flags in place of slots
#: (one comparison less), 21 / 18 / 3.  With one-block prep and plan kernels (their prefix sums by block
#: scans: no CuPy cumsum, no zeroed chunk table), the walk and the listing of the rows in one kernel
#: (gv_walk_fill), an io buffer read in one transfer per sync (no concatenate), the activated vertices
#: counted by the activation (no count_nonzero of the dictionary) and the queue table kept on the device
#: (no host -> device copy): 8 / 8 / 3; with every kernel of a small batch queued before one read (the
#: one-sync path: sizes on the device, a kept workspace, the later kernels gated by io's STOP / HOLD):
#: 7 / 7 / 3, of which 1 / 1 / 0 device -> host reads (READ_BUDGET)
OPS_BUDGET = {"insert": 7, "delete": 7, "query": 3}
READ_BUDGET = {"insert": 1, "delete": 1, "query": 0}


def _launches(counter) -> int:
    return sum(n for kind, n in counter.kinds.items() if kind.startswith("launch:"))


@needs_gpp
def test_fused_small_batch_operation_budget(monkeypatch):
    """A 1,000-edge insert, query and delete on an R-MAT graph issue at most OPS_BUDGET device
    operations each (the host dispatch a small batch pays on a GPU), with the graph still right."""
    from vinestream.connectors.synthetic import rmat_simple_edges
    from vinestream.structures.backend import count_operations
    monkeypatch.setattr(gk, "launcher", emu.HostLauncher())
    src, dst = rmat_simple_edges(np, 11, 16, 1, relabel=True)
    b = CSRBatch.from_edges(np, src[src != dst], dst[src != dst])
    perm = np.random.default_rng(0).permutation(b.num_edges)
    src, dst = b.sources()[perm].astype(np.int32), b.cols[perm].astype(np.int32)
    ref = create("graphvine", np, headroom=2.0)                      # headroom: no pool growth
    init = len(src) - 1000
    ref.insert_edges(CSRBatch.from_edges(np, src[:init], dst[:init]))
    ins = CSRBatch.from_edges(np, src[init:], dst[init:], np.full(1000, 2.0, np.float32))
    dele = CSRBatch.from_edges(np, src[init - 500:init + 500], dst[init - 500:init + 500])
    qs = np.concatenate([src[init - 500:init + 500], src[:500]])
    qd = np.concatenate([dst[init - 500:init + 500], dst[-500:]])
    counted, reads = {}, {}
    from vinestream.structures.backend import count_transfers
    with count_operations() as c, count_transfers() as t:      # arrays built inside are counted ones
        g = create("graphvine", np, headroom=2.0)
        g.fused = True
        g.insert_edges(CSRBatch.from_edges(np, src[:init], dst[:init]))
        batches = {"insert": CSRBatch.from_edges(np, src[init:], dst[init:], np.full(1000, 2.0, np.float32)),
                   "delete": CSRBatch.from_edges(np, src[init - 500:init + 500], dst[init - 500:init + 500])}
        q = (np.asarray(qs), np.asarray(qd))
        for name, fn, plain in (("insert", "insert_edges", ins), ("query", None, None),
                                ("delete", "delete_edges", dele)):
            mark, launches, tmark = c.mark(), _launches(c), t.mark()
            if fn is None:
                hit = g.contains(*q)
                counted[name], reads[name] = c.since(mark), t.since(tmark)
                assert np.array_equal(np.asarray(hit), ref.contains(qs, qd))
            else:
                mask = getattr(g, fn)(batches[name])
                counted[name], reads[name] = c.since(mark), t.since(tmark)
                assert np.array_equal(np.asarray(mask), getattr(ref, fn)(plain))
            assert _launches(c) > launches                        # the fused kernels ran
    assert_same_state(g, ref)
    assert g.stats["pool_grows"] == 0 and g.stats["rehomed"] == 0    # the common case was measured
    assert all(counted[k] <= OPS_BUDGET[k] for k in OPS_BUDGET), (counted, g.stats)
    assert all(reads[k] <= READ_BUDGET[k] for k in READ_BUDGET), reads
    check_device_queue(g)


@needs_gpp
@emulation_only           # check_invariants reads the backend under test (CuPy on a GPU box)
def test_fused_insert_rehomes_in_its_own_pass(monkeypatch):
    """A batch whose vertices outgrow their classes re-homes them inside the insert's kernels: no
    eviction and second insert (``_rehome`` is not called), the insert's two transfers, the same
    state as the array program, the old trees back in their queues."""
    from vinestream.structures.backend import count_transfers
    monkeypatch.setattr(gk, "launcher", emu.HostLauncher(2, 99))
    opts = {"min_block_size": 1, "max_block_size": 64, "target_blocks": 2, "min_pool_blocks": 1, "grow_min_entries": 0}
    rng = np.random.default_rng(5)
    with count_transfers() as c:
        fused, ref = create("graphvine", np, **opts), create("graphvine", np, **opts)
        fused.fused = True
        s0 = np.repeat(np.arange(40), 3).astype(np.int32)
        d0 = rng.integers(0, 500, s0.shape[0]).astype(np.int32)
        for g in (fused, ref):
            g.insert_edges(CSRBatch.from_edges(np, s0, d0))
        assert_same_state(fused, ref)

        def no_rehome(*a, **k):
            raise AssertionError("an insert went through the eviction path")
        monkeypatch.setattr(fused, "_rehome", no_rehome)
        s = np.repeat(np.arange(0, 40, 2), 30).astype(np.int32)      # every second vertex: 3 -> ~33 edges
        d = rng.integers(0, 500, s.shape[0]).astype(np.int32)
        w = rng.random(s.shape[0]).astype(np.float32)
        before_f, before_r = fused.stats["rehomed"], ref.stats["rehomed"]
        b = CSRBatch.from_edges(np, s, d, w)
        mark = c.mark()
        mf = fused.insert_edges(b)
        assert c.since(mark) <= 2                        # sync 1 and sync 2, re-homing included
        mr = ref.insert_edges(CSRBatch.from_edges(np, s, d, w))
    assert np.array_equal(np.asarray(mf), np.asarray(mr))
    assert fused.stats["rehomed"] - before_f == ref.stats["rehomed"] - before_r >= 15
    assert_same_state(fused, ref)
    check_invariants(fused)
    assert fused.blocks_in_use == int(np.asarray(fused.num_blocks).sum())   # no block lost or doubled


@needs_gpp
@emulation_only
@pytest.mark.parametrize("order", [0, 2])
def test_large_key_side_batches_walk_before_sync_one(order, monkeypatch):
    """A large key-side batch queues its walk, ranks, activation and plan before sync 1 (the read waits beside
    them), the kernels that change the structure gated on the prep's checks: a batch that breaks CSRBatch's promise
    (a row's columns out of order, a repeated key) or has ids past the dictionary is sorted and applied once,
    in-degrees, upserted weights and the vertex count as the array program leaves them (the ranks' and the
    activation's side effects skipped the first time); every batch walks before the read."""
    from vinestream.structures import graphvine as gv
    launcher = emu.HostLauncher(order, 13)
    monkeypatch.setattr(gk, "launcher", launcher)
    monkeypatch.setattr(gk, "BLOCK_KEYS", 0)              # every batch on the large path
    monkeypatch.setattr(gk, "SHIFT_TILE", 6)
    events = []
    real_read = gv.GraphVine._read_io

    def read(self, *a):
        events.append("read")
        return real_read(self, *a)
    monkeypatch.setattr(gv.GraphVine, "_read_io", read)
    real_launch = gk.launcher

    def launch(xp, name, n, args):
        events.append(name)
        return real_launch(xp, name, n, args)
    monkeypatch.setattr(gk, "launcher", launch)
    rng = np.random.default_rng(order)
    fused = create("graphvine", np, keyside=True, shift="tiles")
    ref = create("graphvine", np)
    fused.fused = True
    s0 = (rng.zipf(1.5, 3000) % 150).astype(np.int32)
    d0 = rng.integers(0, 600, 3000).astype(np.int32)
    w0 = rng.random(3000).astype(np.float32)
    for g in (fused, ref):
        g.insert_edges(CSRBatch.from_edges(np, s0, d0, w0))
    assert_same_state(fused, ref)

    def raw(b, reverse_rows):
        """``b`` with each row's columns reversed (out of order) and, on one row, its first key repeated."""
        off = np.asarray(b.offsets)
        cols, w = np.asarray(b.cols).copy(), None if b.weights is None else np.asarray(b.weights).copy()
        for r in reverse_rows:
            cols[off[r]:off[r + 1]] = cols[off[r]:off[r + 1]][::-1]
            if w is not None:
                w[off[r]:off[r + 1]] = w[off[r]:off[r + 1]][::-1]
        r = reverse_rows[0]
        cols[off[r] + 1] = cols[off[r]]
        return CSRBatch(rows=b.rows, offsets=b.offsets, cols=cols, weights=w)

    live = np.unique((s0.astype(np.int64) << 32) | d0)
    for step in range(4):
        insert = step % 2 == 0
        for bad in (False, True):     # each on keys of its own (a repeat of the last batch would change nothing)
            if insert:        # new keys, upserts of live ones, and (step 2) ids past the dictionary
                pick = rng.choice(live, 300, replace=False)
                s = np.concatenate([(pick >> 32), rng.integers(0, 150 if step == 0 else 1500, 700)])
                d = np.concatenate([pick & 0xFFFFFFFF, rng.integers(0, 600, 700)])
            else:             # live keys and absent ones
                pick = rng.choice(live, 800, replace=False)
                s = np.concatenate([(pick >> 32), rng.integers(0, 150, 200)])
                d = np.concatenate([pick & 0xFFFFFFFF, rng.integers(0, 600, 200)])
            s, d = s.astype(np.int32), d.astype(np.int32)
            w = rng.random(s.shape[0]).astype(np.float32) if insert else None
            b = CSRBatch.from_edges(np, s, d, w)
            rows_many = np.flatnonzero(np.diff(np.asarray(b.offsets)) > 1)
            assert rows_many.shape[0] > 3
            fb = raw(b, rows_many[::2]) if bad else b
            del events[:]
            got = (fused.insert_edges if insert else fused.delete_edges)(fb)
            first_read = events.index("read")
            assert events.index("gv_walk_keys") < first_read and events.index("gv_rank") < first_read
            exp = (ref.insert_edges if insert else ref.delete_edges)(fb)
            assert np.array_equal(np.asarray(got), np.asarray(exp))
            assert_same_state(fused, ref)
            if bad:           # the sorted path ran the walk and ranks again, after the read
                assert events.count("gv_rank") == 2 and events.index("gv_rank", first_read) > first_read
            keys = (s.astype(np.int64) << 32) | d
            live = np.union1d(live, keys) if insert else np.setdiff1d(live, keys)
    assert fused.capacity >= 1000 and fused.num_vertices == ref.num_vertices
    # a pool whose walk table would pass AHEAD_TABLE_BYTES reads first and walks after, into an exact table
    monkeypatch.setattr(gv, "AHEAD_TABLE_BYTES", gv.WALK_ENTRY_BYTES * fused.pool_blocks - 1)
    pick = rng.choice(live, 500, replace=False)
    b = CSRBatch.from_edges(np, (pick >> 32).astype(np.int32), (pick & 0xFFFFFFFF).astype(np.int32))
    del events[:]
    got = fused.delete_edges(b)
    assert int(np.asarray(got).sum()) == 500
    assert events.index("read") < events.index("gv_walk_keys")
    assert np.array_equal(np.asarray(got), np.asarray(ref.delete_edges(b)))
    assert_same_state(fused, ref)


@needs_gpp
def test_fused_insert_new_vertices_matches_array_program(monkeypatch):
    """The vertex phase's new ids (gv_new_vertices, one launch) leave the array program's state,
    reused ids included (deleted vertices come back empty)."""
    launcher = emu.HostLauncher(2, 3)
    monkeypatch.setattr(gk, "launcher", launcher)
    rng = np.random.default_rng(8)
    fused, ref = create("graphvine", np), create("graphvine", np)
    fused.fused = True
    s, d = rng.integers(0, 60, 400).astype(np.int32), rng.integers(0, 60, 400).astype(np.int32)
    for g in (fused, ref):
        g.insert_edges(CSRBatch.from_edges(np, s, d))
        g.delete_vertices(np.arange(0, 60, 5))
        g.insert_new_vertices(np.array([5, 10, 70, 90], np.int64), 100)
        g.insert_edges(CSRBatch.from_edges(np, np.array([5, 90], np.int32), np.array([70, 5], np.int32)))
    assert_same_state(fused, ref)
    assert fused.num_vertices == ref.num_vertices and fused.capacity >= 100
    assert launcher.launches.get("gv_new_vertices") == 1


@needs_gpp
@emulation_only
@pytest.mark.parametrize("order", [0, 2])
@pytest.mark.parametrize("paths", [{}, {"keyside": True, "keyside_small": True, "graphs": "emulate"}],
                         ids=["rows", "keys-graph-buffers"])
def test_one_sync_path_holds_stops_and_reads_once(order, paths, monkeypatch):
    """Small batches on the one-sync path: a batch whose pops grow the pool is held on the device and
    finished after the read (HOLD), a batch with ids past the dictionary, out of order, or with a
    negative id stops after gv_prep_block (STOP) and is run again or by the two-sync path; the state
    equals the array program's after every batch, and a batch that went through read once.  ``paths``: the
    same on the key side, on the CUDA graph path's fixed buffers."""
    from vinestream.structures.backend import count_transfers
    monkeypatch.setattr(gk, "launcher", emu.HostLauncher(order, 5))
    rng = np.random.default_rng(order)
    opts = {"block_size": 2, "min_pool_blocks": 1, "grow_min_entries": 0, "headroom": 1.0}
    with count_transfers() as t:
        fused, ref = create("graphvine", np, **opts, **paths), create("graphvine", np, **opts)
        fused.fused = True

        def both(fn, batch, reads=None):
            mark = t.mark()
            got = getattr(fused, fn)(batch)
            n_reads = t.since(mark)
            assert np.array_equal(np.asarray(got), np.asarray(getattr(ref, fn)(batch)))
            assert_same_state(fused, ref)
            check_device_queue(fused)
            if reads is not None:
                assert n_reads <= reads, n_reads
        both("insert_edges", CSRBatch.from_edges(np, rng.integers(0, 50, 200).astype(np.int32),
                                                 rng.integers(0, 50, 200).astype(np.int32)))
        for _ in range(6):                  # growing rows: pops past 80% of a class hold the write
            s, d = rng.integers(0, 50, 300).astype(np.int32), rng.integers(0, 400, 300).astype(np.int32)
            before = dict(fused.one_sync)
            both("insert_edges", CSRBatch.from_edges(np, s, d, rng.random(300).astype(np.float32)))
            # one pass, and one more after each stop (here: columns past the dictionary)
            assert (fused.one_sync["batches"] - before["batches"]
                    == 1 + fused.one_sync["stopped"] - before["stopped"]), fused.one_sync
            both("delete_edges", CSRBatch.from_edges(np, s[:100], d[:100]), reads=1)
        assert fused.one_sync["held"] >= 1 and fused.stats["pool_grows"] > 0, fused.one_sync
        stopped = fused.one_sync["stopped"]
        cap = fused.capacity                 # an id past the dictionary: stop, grow it, run again
        both("insert_edges", CSRBatch.from_edges(np, np.array([1, cap + 5], np.int32),
                                                 np.array([cap + 9, 2], np.int32)))
        raw = CSRBatch(rows=np.array([3, 1], np.int32), offsets=np.array([0, 2, 3]),   # rows out of order
                       cols=np.array([7, 5, 4], np.int32), weights=np.ones(3, np.float32))
        both("insert_edges", raw)
        both("delete_edges", raw)
        assert fused.one_sync["stopped"] >= stopped + 3
        bad = CSRBatch(rows=np.array([0], np.int32), offsets=np.array([0, 1]), cols=np.array([-4], np.int32),
                       weights=None)
        for g in (fused, ref):
            with pytest.raises(ValueError):
                g.insert_edges(bad)
        assert_same_state(fused, ref)
        plain = CSRBatch.from_edges(np, rng.integers(0, 50, 100).astype(np.int32),
                                    rng.integers(0, 50, 100).astype(np.int32))
        both("insert_edges", plain, reads=1)
        both("delete_edges", plain, reads=1)
    check_invariants(fused)


def _rmat_edge_stream():
    """R-MAT 12 (ef 16) as distinct edges without self-loops in a shuffled order, with weights in [0.5, 1.5)."""
    from vinestream.connectors.synthetic import rmat_edges
    src, dst = rmat_edges(np, 12, 16, seed=0)
    keep = src != dst
    b = CSRBatch.from_edges(np, src[keep].astype(np.int32), dst[keep].astype(np.int32))
    src, dst = b.sources().astype(np.int32), b.cols
    rng = np.random.default_rng(1)
    order = rng.permutation(len(src))
    return src[order], dst[order], (rng.random(len(src)) + 0.5).astype(np.float32)


def _insert_then_delete_half(fused, ref, stream, lo: int, n: int) -> None:
    """Edges ``lo .. lo + n`` of ``stream`` inserted into both structures, then the first half deleted: the
    masks and the whole state equal after each."""
    src, dst, w = stream
    ins = CSRBatch.from_edges(np, src[lo:lo + n], dst[lo:lo + n], w[lo:lo + n])
    dele = CSRBatch.from_edges(np, src[lo:lo + n // 2], dst[lo:lo + n // 2])
    for fn, batch in (("insert_edges", ins), ("delete_edges", dele)):
        assert np.array_equal(getattr(fused, fn)(batch), getattr(ref, fn)(batch))
        assert_same_state(fused, ref)


@needs_gpp
@emulation_only
def test_emulated_paths_switched_between_batches_on_rmat(monkeypatch):
    """One structure whose paths change from batch to batch (rows' side, key side for large and small
    batches, the CUDA graph path's fixed buffers) on an R-MAT graph, 1,000- to 6,000-edge batches inserted
    then half deleted: masks and the whole state equal the array program's after every batch."""
    monkeypatch.setattr(gk, "launcher", emu.HostLauncher(2, 3))
    src, dst, w = _rmat_edge_stream()
    init = len(src) - 12000
    fused, ref = create("graphvine", np), create("graphvine", np)
    fused.fused = True
    for g in (fused, ref):
        g.insert_edges(CSRBatch.from_edges(np, src[:init], dst[:init], w[:init]))
    paths = [(False, False, False), ("emulate", False, False), ("emulate", True, True), (False, True, True),
             (False, False, True)]
    for step in range(10):
        fused.graphs, fused.keyside_small, fused.keyside = paths[step % len(paths)]
        n = [1000, 2500, 6000][step % 3]
        _insert_then_delete_half(fused, ref, (src, dst, w), init + (step * 997) % (12000 - n), n)
    check_invariants(fused)
    assert fused.one_sync["batches"] >= 10 and fused._gbuf is not None


@needs_gpp
@emulation_only
@pytest.mark.parametrize("keyside", [False, True], ids=["rows", "keys"])
def test_emulated_graph_replays_match_array_program(keyside, monkeypatch):
    """The CUDA graph path as the emulation records it: a capture records the one-sync launches with their
    arguments, a cache hit reruns the recording as it is (what a replayed graph does: nothing of the batch
    but the device parameters changes).  Many small batches, most of them replays, some held (their pops
    grow the pool): masks and the whole state equal the array program's after every batch."""
    monkeypatch.setattr(gk, "launcher", emu.HostLauncher(1, 3))
    src, dst, w = _rmat_edge_stream()
    init = len(src) - 30000
    fused = create("graphvine", np, graphs="emulate", keyside=keyside, keyside_small=keyside)
    ref = create("graphvine", np)
    fused.fused = True
    for g in (fused, ref):
        g.insert_edges(CSRBatch.from_edges(np, src[:init], dst[:init], w[:init]))
    for step in range(24):
        n = [300, 1000, 2000][step % 3]
        _insert_then_delete_half(fused, ref, (src, dst, w), init + (step * 613) % (30000 - n), n)
    check_invariants(fused)
    stats = fused.one_sync
    assert stats["batches"] >= 48 and stats["graphs_captured"] <= stats["batches"] // 3, stats   # mostly replays
    assert stats["held"] >= 1, stats


@needs_gpp
@emulation_only
@pytest.mark.parametrize("order", [0, 2])
@pytest.mark.parametrize("opts", [{"block_size": 2, "min_pool_blocks": 1, "grow_min_entries": 0, "headroom": 1.0},
                                  {"min_block_size": 1, "max_block_size": 64, "target_blocks": 2,
                                   "headroom": 3.0}], ids=["one-size-growing-pool", "classes-rehoming"])
@pytest.mark.parametrize("keyside", [False, True], ids=["rows", "keys"])
def test_emulated_combined_edge_phases_match_array_program(order, opts, keyside, monkeypatch):
    """Both edge phases of a batch behind one read (``edge_phases_counted`` on the CUDA graph path's buffers,
    emulated: the delete's graph, then the insert's on the parity the delete's finish writes, then one read of
    both io buffers) against the array program's delete then insert: masks, counts and the whole state after
    every batch.  The stream has deletes that leave a hub classes below its blocks (the delete re-homes it, so
    the insert stops at once on the device and runs after the read), a workspace too small for the delete's
    rows (it stops and runs again, then the insert), inserts whose pops grow the pool (held, finished after
    the read), and batches that go through in exactly one read."""
    from vinestream.structures.backend import count_transfers
    launcher = emu.HostLauncher(order, 17)
    monkeypatch.setattr(gk, "launcher", launcher)
    rng = np.random.default_rng(order + 3)
    nv = 80
    with count_transfers() as t:
        fused = create("graphvine", np, graphs="emulate", keyside=keyside, keyside_small=keyside, **opts)
        ref = create("graphvine", np, **opts)
        fused.fused = True
        assert fused.combined_edge_phases and not ref.combined_edge_phases
        s0, d0 = (rng.zipf(1.4, 3000) % nv).astype(np.int32), rng.integers(0, 600, 3000).astype(np.int32)
        for g in (fused, ref):
            g.insert_edges(CSRBatch.from_edges(np, s0, d0))
        one_read = 0
        for step in range(12):
            ins, dele = phase_batches(np, rng, ref, 600, 300 + 40 * step, 120, hub_drop=step % 4 == 1)
            if step == 6:                           # rows past the workspace: the delete stops, runs again
                fused._ws, fused._ws_want = None, (1, 2)
            before = (dict(fused.one_sync), dict(fused.combined_phases))
            mark = t.mark()
            imask, n_new, dmask, n_gone = fused.edge_phases_counted(ins, dele)
            reads = t.since(mark)
            dref = ref.delete_edges(dele)
            iref = ref.insert_edges(ins)
            assert np.array_equal(dmask, dref) and np.array_equal(imask, iref)
            assert n_gone == int(dref.sum()) and n_new == int(iref.sum())
            assert_same_state(fused, ref)
            check_device_queue(fused)
            assert fused.combined_phases["one_read"] == before[1]["one_read"] + 1
            # neither phase stopped, the insert ran on the device behind the delete (held or not): one read
            if (fused.one_sync["stopped"] == before[0]["stopped"]
                    and fused.combined_phases["insert_after"] == before[1]["insert_after"]):
                assert reads == 1, reads
                one_read += 1
    check_invariants(fused)
    assert one_read >= 4 and fused.combined_phases["insert_after"] >= 1, fused.combined_phases
    assert fused.one_sync["workspace_grown"] >= 1 and fused.one_sync["graphs_captured"] >= 2, fused.one_sync
    if "block_size" in opts:
        assert fused.one_sync["held"] >= 1 and fused.stats["pool_grows"] > 0, fused.one_sync
    else:
        assert fused.stats["rehomed"] >= 2 and fused.one_sync["held"] < fused.one_sync["batches"] // 2, fused.one_sync


@needs_gpp
@emulation_only
@pytest.mark.parametrize("limit, value", [("SHIFT_TABLE_KEYS", 2000), ("SHIFT_ENTRIES", 4500)])
def test_batches_past_the_shift_limits_are_staged(monkeypatch, limit, value):
    """A large key-side batch of SHIFT_TABLE_KEYS keys or more (the one-pass shifts' tables hold a row as a key
    offset below GV_TDEL), or whose touched rows hold SHIFT_ENTRIES entries or more (gv_shift_row's 32-bit
    fields), is staged instead, with the same state as the array program; smaller ones take the one pass.  The
    limit is lowered here to 2,000 keys or 4,500 entries (the batches fall on both sides of either)."""
    launcher = emu.HostLauncher(0, 7)
    monkeypatch.setattr(gk, "launcher", launcher)
    monkeypatch.setattr(gk, "BLOCK_KEYS", 0)              # every batch on the large path
    monkeypatch.setattr(gk, "SHIFT_TILE", 7)
    monkeypatch.setattr(gk, limit, value)
    rng = np.random.default_rng(11)
    fused = create("graphvine", np, keyside=True, shift="tiles")
    ref = create("graphvine", np)
    fused.fused = True
    live, sides = set(), set()
    for m, insert in ((3000, True), (4000, True), (1500, True), (600, True), (2500, False), (300, False),
                      (1200, False)):
        s = (rng.zipf(1.6, m) % 200).astype(np.int32)
        d = rng.integers(0, 1500, m).astype(np.int32)
        w = rng.random(m).astype(np.float32)
        keys = set(zip(s.tolist(), d.tolist()))
        rows = {u for u, _ in keys}
        entries = sum(1 for u, _ in live if u in rows)       # the touched rows' entries before the batch
        before = dict(launcher.launches)
        for g in (fused, ref):
            b = CSRBatch.from_edges(np, s, d, w)
            out = (g.insert_edges if insert else g.delete_edges)(b)
            if g is fused:
                got = out
            else:
                assert np.array_equal(got, out)
        assert_same_state(fused, ref)
        live = live | keys if insert else live - keys
        if not entries:
            continue                                      # no rows to shift
        ran = {k for k, v in launcher.launches.items() if v > before.get(k, 0)}
        staged = "gv_stage" in ran
        assert staged == ((len(keys) if limit == "SHIFT_TABLE_KEYS" else entries) >= value)
        assert (("gv_insert_shift" if insert else "gv_delete_shift") in ran) != staged
        sides.add(staged)
    assert sides == {True, False}


def _skewed_batches(rng):
    """test_pools_past_the_shift_slots_are_staged's batches: (CSRBatch, insert) - four inserts, three deletes."""
    for m, insert in ((3000, True), (4000, True), (1500, True), (600, True), (2500, False), (300, False),
                      (1200, False)):
        s = (rng.zipf(1.6, m) % 200).astype(np.int32)
        d = rng.integers(0, 1500, m).astype(np.int32)
        yield CSRBatch.from_edges(np, s, d, rng.random(m).astype(np.float32)), insert


@needs_gpp
@emulation_only
def test_pools_past_the_shift_slots_are_staged(monkeypatch):
    """The one-pass shifts keep their entries' pool slots as 32-bit (SHIFT_POOL_ENTRIES): a batch into a pool of
    that many entries or more is staged, and so is an insert whose pops grow the pool to it (its tiles, queued
    before the growth, go unused), each with the array program's state.  The limit is set here to the pool's size
    after the second insert, which grows it."""
    launcher = emu.HostLauncher(0, 7)
    monkeypatch.setattr(gk, "launcher", launcher)
    monkeypatch.setattr(gk, "BLOCK_KEYS", 0)              # every batch on the large path
    monkeypatch.setattr(gk, "SHIFT_TILE", 7)
    sizes = []
    probe = create("graphvine", np, keyside=True, shift="tiles")
    probe.fused = True
    for b, insert in _skewed_batches(np.random.default_rng(11)):
        (probe.insert_edges if insert else probe.delete_edges)(b)
        sizes.append(int(probe.block_cols.shape[0]))
    assert sizes[0] < sizes[1]                            # the second insert grows the pool
    monkeypatch.setattr(gk, "SHIFT_POOL_ENTRIES", sizes[1])
    fused = create("graphvine", np, keyside=True, shift="tiles")
    ref = create("graphvine", np)
    fused.fused = True
    for k, (b, insert) in enumerate(_skewed_batches(np.random.default_rng(11))):
        before = dict(launcher.launches)
        got = (fused.insert_edges if insert else fused.delete_edges)(b)
        assert np.array_equal(got, (ref.insert_edges if insert else ref.delete_edges)(b))
        assert_same_state(fused, ref)
        ran = {name for name, v in launcher.launches.items() if v > before.get(name, 0)}
        if k == 0:
            continue                                      # no rows to shift yet
        assert "gv_stage" in ran and not ran & gk.SHIFT_KERNELS, (k, ran)
        assert ("gv_tile_keys" in ran) == (k == 1)        # the second insert: tiles queued before its growth


@needs_gpp
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3 * gk.SCAN_TILE + 7), st.integers(1, 2), st.sampled_from([np.int8, np.int64]),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_emulated_scan_rows_is_numpys_cumsum(n, rows, dtype, in_place, seed):
    """scan_rows (gv_scan: decoupled look-back) over rows of up to three tiles and a bit, emulated: each row's
    inclusive prefix sums and its total equal NumPy's cumsum, in place or not."""
    saved, gk.launcher = gk.launcher, emu.HostLauncher(2, seed)
    try:
        rng = np.random.default_rng(seed)
        hi = 2 if dtype is np.int8 else 2**40
        values = rng.integers(-hi if dtype is np.int64 else 0, hi, (rows, n)).astype(dtype)
        want = np.cumsum(values, axis=1, dtype=np.int64)
        arg = values[0] if rows == 1 else values
        out = arg if in_place and dtype is np.int64 else np.full(arg.shape, -7, dtype=np.int64)
        total = np.full(rows + 1, -7, dtype=np.int64)
        gk.scan_rows(np, arg, out, total)
        assert np.array_equal(out.reshape(rows, n), want)
        assert np.array_equal(total[:rows], want[:, -1] if n else np.zeros(rows)) and total[rows] == -7
    finally:
        gk.launcher = saved


@needs_gpp
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2 * gk.SCAN_TILE + 9), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_emulated_scan_columns_is_numpys_cumsum(nrows, width, seed):
    """scan_columns (the scan kernels down strided columns), emulated: each column's prefix sums down its rows (up
    to two tiles and a bit), in place, and its total."""
    saved, gk.launcher = gk.launcher, emu.HostLauncher(1, seed)
    try:
        values = np.random.default_rng(seed).integers(0, 1000, (nrows, width)).astype(np.int64)
        want = np.cumsum(values, axis=0)
        total = np.full(width, -7, dtype=np.int64)
        gk.scan_columns(np, values, total)
        assert np.array_equal(values, want)
        assert np.array_equal(total, want[-1] if nrows else np.zeros(width))
    finally:
        gk.launcher = saved


@needs_gpp
@emulation_only
def test_emulated_shift_rows_start_where_their_rows_change(monkeypatch):
    """gv_tile_keys' gv_shift_row: a row's first changed position is the least rank of its moving keys (new on an
    insert, found on a delete), -1 for an insert's re-homed row, and its count where none of its keys moves (an
    upsert's rows, a delete's absent keys: gv_rank leaves their rmin at its large start, which the 32-bit field must
    not wrap to -1, the re-homed rows' value).  Checked on every row with entries of batches that have such rows."""
    launcher = emu.HostLauncher(0, 3)
    monkeypatch.setattr(gk, "launcher", launcher)
    monkeypatch.setattr(gk, "BLOCK_KEYS", 0)              # every batch on the large path
    monkeypatch.setattr(gk, "SHIFT_TILE", 5)
    seen = []
    real = type(create("graphvine", np))._tile_keys

    def spy(self, table, total, ukeys, nk, cnt, cnt_ends, rank, live, mode, rows):
        out = real(self, table, total, ukeys, nk, cnt, cnt_ends, rank, live, mode, rows)
        seen.append((mode, np.array(cnt[:nk]), np.array(rows[0][:nk]), np.array(rows[4][:nk]),
                     np.array(out[3]).reshape(-1, 8)[:nk]))
        return out
    fused = create("graphvine", np, keyside=True, shift="tiles")
    monkeypatch.setattr(type(fused), "_tile_keys", spy)
    ref = create("graphvine", np)
    fused.fused = True
    rng = np.random.default_rng(5)
    s0 = (rng.zipf(1.5, 3000) % 120).astype(np.int32)
    d0 = rng.integers(0, 900, 3000).astype(np.int32)
    old = np.isin(s0, np.arange(0, 120, 2))               # even rows: only keys they hold (no move)
    batches = [(s0, d0, True), (s0, np.where(old, d0, d0 + 900).astype(np.int32), True),
               (s0, np.where(old, d0 + 2000, d0).astype(np.int32), False)]
    for s, d, insert in batches:
        w = rng.random(s.shape[0]).astype(np.float32)
        for g in (fused, ref):
            b = CSRBatch.from_edges(np, s, d, w)
            (g.insert_edges if insert else g.delete_edges)(b)
        assert_same_state(fused, ref)
    quiet = 0
    for mode, cnt, rmin, aux, fields in seen:
        rows = np.flatnonzero(cnt > 0)                      # the records the shifts read
        r0, count = fields[rows, 2], fields[rows, 3]
        assert np.array_equal(count, cnt[rows])
        still = rmin[rows] >= cnt[rows]                     # no moving key: rmin left at its start
        rehomed = (aux[rows] > 0) if mode == 0 else np.zeros(rows.shape[0], dtype=bool)
        assert np.array_equal(r0[rehomed], np.full(int(rehomed.sum()), -1))
        assert np.array_equal(r0[still & ~rehomed], count[still & ~rehomed])
        assert np.array_equal(r0[~still & ~rehomed], rmin[rows][~still & ~rehomed])
        quiet += int((still & ~rehomed).sum())
    assert len(seen) == 2 and quiet >= 20                   # the second insert and the delete had quiet rows
