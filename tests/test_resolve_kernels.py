"""The small-batch kernels (stream/batching/resolve_kernels.py), run on the host by their g++ emulation,
against the array program they replace: ``net_effect``, ``CSRBatch.from_edges``, ``Pipeline._delta``,
field by field, and the whole pipeline against the oracle.  ``test_resolve_kernels_gpu.py`` runs the
same comparisons on CuPy."""
from __future__ import annotations

import threading
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import resolve_emulation as emu
from tests.oracle import Oracle
from tests.strategies import events, f32, to_table
from tests.test_pipeline_contract import check_delta, graph_state
from vinestream.stream.batching import resolve_kernels as rk
from vinestream.stream.batching.resolve import EventArrays, NetEffect, net_effect
from vinestream.stream.batching.vertex_map import VertexMap
from vinestream.stream.events.device import DeviceEvents
from vinestream.stream.pipeline.pipeline import Pipeline
from vinestream.structures import registry
from vinestream.structures.array_ops import pow2_at_least
from vinestream.structures.backend import count_transfers
from vinestream.structures.csr_types import CSRBatch

pytestmark = pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation")

EXTREMES = [-(2**63), 2**63 - 1, -1, 2**40]
IDS = st.one_of(st.integers(0, 12), st.sampled_from(EXTREMES))
ORDERS = st.tuples(st.sampled_from([0, 1, 2]), st.integers(1, 1000))     # (thread order, shuffle seed)


@st.composite
def vertex_maps(draw):
    """A VertexMap with base keys, extra keys and tombstones in both (or compacted), over IDS."""
    vm = VertexMap(np, min_pending=draw(st.sampled_from([1, 3, 10**6])))
    mapped: set[int] = set()
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()) or not mapped:
            new = sorted(set(draw(st.lists(IDS, max_size=8))) - mapped)
            vm.assign(np.array(new, dtype=np.int64))
            mapped |= set(new)
            if draw(st.booleans()):
                vm._compact()
        else:
            gone = sorted(draw(st.sets(st.sampled_from(sorted(mapped)), max_size=4)))
            vm.release(np.array(gone, dtype=np.int64), all_mapped=True)
            mapped -= set(gone)
    return vm


def assert_same(ref, got, what=""):
    """Two dataclasses (NetEffect, CSRBatch, BatchDelta) equal field by field, dtypes included."""
    for name in ref.__dataclass_fields__:
        a, b = getattr(ref, name), getattr(got, name)
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            assert a.dtype == b.dtype, (what, name, a.dtype, b.dtype)
            assert np.array_equal(np.asarray(a), np.asarray(b)), (what, name, a, b)
        elif name != "stats":
            assert a == b, (what, name, a, b)


def reference_net_effect(table, vm, undirected, keep):
    return net_effect(np, EventArrays.from_table(np, table), lambda ids: vm.lookup(ids) >= 0,
                      undirected=undirected, keep_self_loops=keep, released_before=vm.released)


def vertex_phase(vm, net):
    """The pipeline's vertex-map share of the vertex phase (release, then assign)."""
    vm.release(net.deleted_vertices, all_mapped=True)
    vm.assign(net.created_vertices, revived=net.revived)


def sorts_in_block(pairs: int):
    """The largest sort the kernels run in their block (larger ones: the parts around library sorts)."""
    return mock.patch.object(rk, "SORT_IN_BLOCK", pairs)


@settings(max_examples=300, deadline=None)
@given(evs=events(max_size=60, ids=IDS), vm=vertex_maps(), undirected=st.booleans(), keep=st.booleans(),
       order=ORDERS, in_block=st.sampled_from([2048, 8]))
def test_fused_net_effect_and_csr_batches_equal_the_array_program(evs, vm, undirected, keep, order, in_block):
    """Both forms: the whole step in one block (sorts in the block), and its parts around the library's
    sorts (what a batch past one shared-memory tile takes; here forced by a tiny tile)."""
    table = to_table(evs)
    ref = reference_net_effect(table, vm, undirected, keep)
    if not evs:
        return                                        # an empty batch never reaches the kernel
    rows = len(evs) * (2 if undirected else 1)
    with sorts_in_block(in_block), emu.emulated(*order) as launcher:
        got = rk.fused_net_effect(np, table, vm, undirected=undirected, keep_self_loops=keep)
    split = pow2_at_least(2 * rows) > in_block
    assert launcher.launches == ({"rs_resolve_names": 1, "rs_resolve_ranks": 1, "rs_resolve_decide": 1}
                                 if split else {"rs_resolve": 1})
    assert_same(ref, got, "net effect")
    vertex_phase(vm, ref)
    ins = CSRBatch.from_edges(np, vm.lookup(ref.insert_src), vm.lookup(ref.insert_dst), ref.insert_weight,
                              assume_unique=True, num_rows=ref.insert_rows)
    dels = CSRBatch.from_edges(np, vm.lookup(ref.delete_src), vm.lookup(ref.delete_dst), None,
                               assume_unique=True, num_rows=ref.delete_rows)
    with sorts_in_block(in_block), emu.emulated(*order) as launcher:
        fins, fdels = rk.fused_csr_batches(np, got, vm)
    split = max(pow2_at_least(ins.num_edges), pow2_at_least(dels.num_edges)) > in_block
    assert launcher.launches == ({"rs_csr_keys": 1, "rs_csr_rows": 1} if split else {"rs_csr": 1})
    assert_same(ins, fins, "inserts")
    assert_same(dels, fdels, "deletes")


def graphs_on():
    """resolve's padded graph path on (off by default: ``rk.GRAPHS``)."""
    return mock.patch.object(rk, "GRAPHS", True)


@settings(max_examples=150, deadline=None)
@given(evs=events(max_size=90, ids=IDS), vm=vertex_maps(), undirected=st.booleans(), keep=st.booleans(),
       order=ORDERS)
def test_padded_net_effect_equals_the_array_program(evs, vm, undirected, keep, order):
    """``reuse=True`` (the pipeline's call) with ``GRAPHS``: the batch padded with no-op rows to its size's power of two
    (at least ``GRAPH_MIN_EVENTS``) on the thread's fixed buffers, the map through the parameter block
    (``rs_resolve_map``, what the CUDA graph replays): the same net effect as the array program; and the
    next call of that size reuses the buffers."""
    if not evs:
        return                                        # an empty batch never reaches the kernel
    table = to_table(evs)
    ref = reference_net_effect(table, vm, undirected, keep)
    with emu.emulated(*order) as launcher, graphs_on():
        got = rk.fused_net_effect(np, table, vm, undirected=undirected, keep_self_loops=keep, reuse=True)
    assert launcher.launches == {"rs_resolve_map": 1}
    assert_same(ref, got, "padded net effect")
    bucket = max(pow2_at_least(len(evs)), rk.GRAPH_MIN_EVENTS)
    slot = rk._STAGING.graphs[(-1, bucket, undirected, keep)]           # the buffers kept for the next call
    assert not np.shares_memory(got.insert_src, slot["out"])           # ... which may overwrite them


def test_a_padded_net_effect_outlives_the_next_batch():
    """The pipeline may keep a batch's delta past the next batch (``jobs_every`` > 1): a padded net effect is not
    overwritten by the next call of the same padded size (on the GPU, the pipeline's jobs test with the graph on
    found jobs reading the next batch's net effect)."""
    vm = VertexMap(np)
    first = to_table([(1, 1, 2, 1.0), (1, 2, 3, 2.0), (2, 4, 5, None)])
    second = to_table([(1, 7, 8, 3.0), (1, 8, 9, 4.0), (1, 9, 7, 5.0), (3, 6, None, None)])
    with emu.emulated(), graphs_on():
        net = rk.fused_net_effect(np, first, vm, reuse=True)
        fields = [f for f in NetEffect.__dataclass_fields__ if isinstance(getattr(net, f), np.ndarray)]
        kept = {f: getattr(net, f).copy() for f in fields}
        rk.fused_net_effect(np, second, vm, reuse=True)
    assert len(rk._STAGING.graphs) >= 1 and fields
    for f in fields:
        assert np.array_equal(getattr(net, f), kept[f]), f


@settings(max_examples=150, deadline=None)
@given(evs=events(max_size=50), undirected=st.booleans(), order=ORDERS, data=st.data())
def test_fused_delta_equals_the_array_program(evs, undirected, order, data):
    """``Pipeline._delta`` with ``fused`` against itself without: random phase masks and removed edges."""
    vm = VertexMap(np)
    vm.assign(np.arange(0, 13, dtype=np.int64))          # old vertices: deletes of their edges count
    net = reference_net_effect(to_table(evs), vm, undirected, False)
    vertex_phase(vm, net)
    ins = CSRBatch.from_edges(np, vm.lookup(net.insert_src), vm.lookup(net.insert_dst), net.insert_weight,
                              assume_unique=True)
    dels = CSRBatch.from_edges(np, vm.lookup(net.delete_src), vm.lookup(net.delete_dst), None, assume_unique=True)
    masks = [np.array(data.draw(st.lists(st.booleans(), min_size=k, max_size=k)), dtype=bool)
             for k in (ins.num_edges, dels.num_edges)]
    removed = data.draw(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50)), max_size=6))
    removed_src = np.array([a for a, _ in removed], dtype=np.int32)
    removed_dst = np.array([b for _, b in removed], dtype=np.int32)
    new_ids, old_ids = np.arange(3, dtype=np.int32), np.arange(2, dtype=np.int32)
    p = Pipeline(registry.create("coo", np))
    args = (ins, dels, masks[0], masks[1], new_ids, old_ids, removed_src, removed_dst)
    ref = p._delta(*args)
    with emu.emulated(*order) as launcher:
        got = p._delta(*args, None, None, True)
    assert launcher.launches == {"rs_delta": 1}
    assert_same(ref, got, "delta")


def test_device_events_and_extreme_ids():
    """A DeviceEvents batch takes the same path; ids at the ends of int64 sort and pad correctly."""
    evs = [(1, 2**63 - 1, -(2**63), 2.0), (1, -(2**63), 2**63 - 1, 3.0), (3, 2**63 - 1, None, None),
           (1, 5, 5, 1.0), (2, -1, 2**63 - 1, None), (4, -(2**63), None, None), (1, -(2**63), 7, 4.0)]
    table = to_table(evs)
    vm = VertexMap(np)
    vm.assign(np.array([-1, 2**63 - 1], dtype=np.int64))
    for undirected in (False, True):
        ref = reference_net_effect(table, vm, undirected, False)
        with emu.emulated():
            got = rk.fused_net_effect(np, DeviceEvents.from_arrow(table, np), vm, undirected=undirected)
        assert_same(ref, got, "device events")
        assert got.self_loops == 1


def test_capacity_and_switch():
    """Batches above CAPACITY, empty ones and ``small_batch_kernels=False`` keep the array program."""
    rng = np.random.default_rng(1)
    p = Pipeline(registry.create("coo", np), small_batch_kernels=True)
    q = Pipeline(registry.create("coo", np), small_batch_kernels=False)
    assert not Pipeline(registry.create("coo", np)).small_batch_kernels         # NumPy: off by default
    # at capacity the sorts pass one tile: resolve in three parts, the CSR batches in two, the delta
    for n, launches in ((rk.CAPACITY + 1, 0), (0, 0), (rk.CAPACITY, 6)):
        evs = [(1, int(a), int(b), 1.0) for a, b in rng.integers(0, 3000, (n, 2))]
        with emu.emulated() as launcher:
            p.apply(to_table(evs))
            q.apply(to_table(evs))
        assert sum(launcher.launches.values()) == launches, (n, launcher.launches)
        assert graph_state(p) == graph_state(q)
    # an undirected event is two rows: half the capacity in events
    u = Pipeline(registry.create("coo", np), undirected=True, small_batch_kernels=True)
    for n, launches in ((rk.CAPACITY // 2 + 1, 0), (rk.CAPACITY // 2, 6)):
        evs = [(1, int(a), int(b), 1.0) for a, b in rng.integers(0, 3000, (n, 2))]
        with emu.emulated() as launcher:
            u.apply(to_table(evs))
        assert sum(launcher.launches.values()) == launches, (n, launcher.launches)


def run_fused_stream(name, stream, undirected, order=(0, 1), ahead=None):
    """The pipeline on NumPy with the kernels emulated, against the oracle (graph and delta) per batch.

    ``ahead``: each batch is applied with the next one's table as ``next_events`` ("same": the table then
    applied, so its resolve runs ahead; "copy": an equal but other table, which the pipeline must drop)."""
    oracle = Oracle(undirected=undirected)
    pipeline = Pipeline(registry.create(name, np), undirected=undirected, small_batch_kernels=True)
    tables = [to_table(evs) for evs in stream]
    with emu.emulated(*order) as launcher:
        for i, evs in enumerate(stream):
            before_v, before_e = oracle.vertices, oracle.edges
            oracle.apply_all(evs)
            following = tables[i + 1] if ahead and i + 1 < len(tables) else None
            if following is not None and ahead == "copy":
                following = to_table(stream[i + 1])
            result = pipeline.apply(tables[i], next_events=following)
            vertices, edges = graph_state(pipeline)
            expect = {k: f32(w) for k, w in oracle.edges.items()}
            assert vertices == oracle.vertices and edges == expect
            removed = {e[1] for e in evs if e[0] == 4} & before_v
            check_delta(pipeline, result.delta, {k: f32(w) for k, w in before_e.items()}, expect, before_v,
                        oracle.vertices, removed)
    return launcher


@pytest.mark.parametrize("name", ["coo", "graphvine", "csr"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stream=st.lists(events(max_id=10, max_size=40), min_size=1, max_size=5), undirected=st.booleans(),
       order=ORDERS)
def test_fused_pipeline_matches_oracle(name, stream, undirected, order):
    launcher = run_fused_stream(name, stream, undirected, order)
    assert launcher.launches.get("rs_resolve", 0) == sum(1 for evs in stream if evs)


@pytest.mark.parametrize("name", ["coo", "graphvine"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stream=st.lists(events(max_id=10, max_size=40), min_size=2, max_size=6), undirected=st.booleans(),
       order=ORDERS, ahead=st.sampled_from(["same", "copy"]))
def test_resolve_ahead_matches_oracle(name, stream, undirected, order, ahead):
    """Each batch's resolve launched during the batch before (``apply(next_events=...)``), on a vertex map that
    changes from batch to batch: graph and delta per batch against the oracle; a next table that is not
    the one applied is dropped and resolved again."""
    launcher = run_fused_stream(name, stream, undirected, order, ahead=ahead)
    nonempty = [i for i, evs in enumerate(stream) if evs]
    ahead_ok = sum(1 for i in nonempty if i > 0)
    launched = launcher.launches.get("rs_resolve", 0)
    if ahead == "same":
        assert launched == len(nonempty)          # each batch resolved once, ahead or not
    else:
        assert launched == len(nonempty) + ahead_ok     # each dropped launch resolved again


@pytest.mark.parametrize("name", ["coo", "graphvine"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stream=st.lists(events(max_id=10, max_size=40).filter(lambda e: len(e) >= 3), min_size=2, max_size=5),
       undirected=st.booleans(),
       order=ORDERS)
def test_resolve_ahead_sorts_in_its_block(name, stream, undirected, order):
    """A resolve launched ahead sorts in its block up to ``AHEAD_SORT_IN_BLOCK`` (no library sort, whose thrust
    call waits for the stream) where one in turn runs the parts around the library's sorts (forced here by a
    tiny ``SORT_IN_BLOCK``): the same graphs and deltas as the oracle, and each form launched where expected."""
    with sorts_in_block(4):
        launcher = run_fused_stream(name, stream, undirected, order, ahead="same")
    assert launcher.launches.get("rs_resolve", 0) == len(stream) - 1           # every batch after the first
    assert launcher.launches.get("rs_resolve_names", 0) == 1                    # the first, in turn


def test_batches_sort_in_their_block_until_the_library_sort_is_loaded(monkeypatch):
    """On CuPy a fresh process's first library sort loads thrust's kernels (tens of milliseconds): until one has
    run, every fused batch sorts in its block; NumPy's emulation always takes the given bound."""
    monkeypatch.setattr(rk, "_LIBRARY_SORT_LOADED", threading.Event())
    device = object()                                     # any array module but NumPy
    assert rk._sort_bound(device, rk.SORT_IN_BLOCK) == rk.AHEAD_SORT_IN_BLOCK >= pow2_at_least(2 * rk.CAPACITY)
    assert rk._sort_bound(np, rk.SORT_IN_BLOCK) == rk.SORT_IN_BLOCK
    key, val = np.array([3, 1, 2, 1]), np.arange(4)
    rk._sort_pairs(np, key, val)                          # the library's sort ran: loaded from now on
    assert key.tolist() == [1, 1, 2, 3] and val.tolist() == [1, 3, 2, 0]
    assert rk._sort_bound(device, rk.SORT_IN_BLOCK) == rk.SORT_IN_BLOCK


def test_resolve_ahead_is_used_and_dropped_when_the_map_changes():
    """The launch ahead is used for the table it was launched for; a restored state (another map) and a
    changed map drop it."""
    rng = np.random.default_rng(3)
    from tests.test_sync_budget import _events
    batches = [_events(rng, 200, vertex_deletes=0.05) for _ in range(4)]
    with emu.emulated():
        p = Pipeline(registry.create("coo", np), small_batch_kernels=True)
        q = Pipeline(registry.create("coo", np), small_batch_kernels=True)
        for i, b in enumerate(batches):
            following = batches[i + 1] if i + 1 < len(batches) else None
            # the next batch as a table, or as the function the application loop passes (asked after the update)
            p.apply(b, next_events=following if i % 2 else (lambda t=following: t))
            q.apply(b)
        assert p.resolved_ahead == len(batches) - 1
        assert graph_state(p) == graph_state(q)
        p.apply(batches[0], next_events=batches[1])
        p.vertex_map.assign(np.array([10**12], dtype=np.int64))    # the map changed after the launch
        p.apply(batches[1])
        q.apply(batches[0])
        q.vertex_map.assign(np.array([10**12], dtype=np.int64))
        q.apply(batches[1])
        assert p.resolved_ahead == len(batches) - 1 and graph_state(p) == graph_state(q)
        p.apply(batches[2], next_events=batches[3])
        q.apply(batches[2])
        p.load_state(q.state())                                    # another map: dropped
        assert p._resolve_ahead is None


@settings(max_examples=40, deadline=None)
@given(stream=st.lists(events(max_id=10, max_size=70), min_size=2, max_size=6), undirected=st.booleans(),
       order=ORDERS)
def test_pipeline_on_the_graph_path_matches_oracle(stream, undirected, order):
    """The pipeline with resolve's padded graph path (``GRAPHS``; the launch itself on NumPy): batch after
    batch on the same fixed buffers, graph and delta against the oracle."""
    with graphs_on():
        launcher = run_fused_stream("coo", stream, undirected, order)
    assert launcher.launches.get("rs_resolve_map", 0) == sum(1 for evs in stream if evs)
    assert "rs_resolve" not in launcher.launches


def test_fused_pipeline_large_stream_with_churn():
    """Thousands of events per batch, vertex deletions, re-creations and id reuse, tombstones in the map."""
    rng = np.random.default_rng(7)
    ids = rng.choice(np.arange(-(2**40), 2**40, 2**28), size=300, replace=False)
    stream = []
    for _ in range(5):
        n = 3000
        op = rng.choice([1, 2, 3, 4], size=n, p=[0.6, 0.3, 0.05, 0.05])
        src, dst = rng.choice(ids, size=n), rng.choice(ids, size=n)
        stream.append([(int(o), int(s), None if o > 2 else int(d), float(rng.integers(1, 9)) if o == 1 else None)
                       for o, s, d in zip(op, src, dst)])
    for undirected in (False, True):
        run_fused_stream("coo", stream, undirected, order=(2, 17))


def test_fused_path_keeps_the_sync_budget():
    """resolve: one transfer (the header); vertex map and CSR: none; the delta: none where the structure
    reports its masks' sizes (coo)."""
    from tests.test_sync_budget import _events, phase_counts
    rng = np.random.default_rng(1)
    # a 2,048-pair sort in the block (the tests' batches stay small): 1,000 events sort in the block,
    # 3,000 run the parts around library sorts
    with sorts_in_block(2048), emu.emulated() as launcher, count_transfers(trace=True) as c:
        p = Pipeline(registry.create("coo", np), small_batch_kernels=True)
        p.apply(_events(rng, 3000))
        for batch in (_events(rng, 1000), _events(rng, 1000, vertex_deletes=0.02), _events(rng, 3000)):
            with phase_counts(p, c) as counts:
                p.apply(batch)
            # one read; a batch whose sorts outgrow the block runs the parts around two library sorts, and
            # its CSR batches sort by the library too (each a wait for the device on CuPy)
            in_block = batch.num_rows <= 1000
            assert counts.get("resolve", 0) == (1 if in_block else 3), (counts, c.sites)
            assert counts.get("csr", 0) == (0 if in_block else 2), (counts, c.sites)
            # the vertex map's array program (NumPy's; CuPy's assigns in one kernel) sorts the ids it adds
            assert counts.get("vertex_map", 0) <= 1, (counts, c.sites)
            assert counts.get("delta", 0) == 0, (counts, c.sites)
    parts = {"rs_resolve_names": 2, "rs_resolve_ranks": 2, "rs_resolve_decide": 2, "rs_csr_keys": 2, "rs_csr_rows": 2}
    assert launcher.launches == {"rs_resolve": 2, "rs_csr": 2, "rs_delta": 4, **parts}


def test_net_effect_fields_are_views_of_one_buffer():
    """The NetEffect's arrays share one device buffer (no copies after the one header read)."""
    evs = [(1, 1, 2, 1.0), (1, 2, 3, 2.0), (2, 5, 6, None), (4, 9, None, None)]
    vm = VertexMap(np)
    vm.assign(np.array([5, 6, 9], dtype=np.int64))
    with emu.emulated():
        net = rk.fused_net_effect(np, to_table(evs), vm)
    arrays = [getattr(net, f) for f in NetEffect.__dataclass_fields__ if isinstance(getattr(net, f), np.ndarray)]

    def root(a):
        while a.base is not None:
            a = a.base
        return a
    assert len(arrays) == 7 and len({id(root(a)) for a in arrays}) == 1


def test_resolve_ahead_out_of_memory_is_only_a_lost_head_start(monkeypatch):
    """No memory for the next batch's launch: this batch's apply still succeeds, and the next one resolves in
    turn to the same graph."""
    from tests.test_sync_budget import _events
    rng = np.random.default_rng(9)
    batches = [_events(rng, 300, vertex_deletes=0.05) for _ in range(3)]

    real = rk.launch_net_effect

    def no_memory(*args, staging=rk._STAGING, **kwargs):      # the pipeline's launch ahead (own staging) only
        if staging is not rk._STAGING:
            raise MemoryError("planted")
        return real(*args, staging=staging, **kwargs)

    with emu.emulated():
        p = Pipeline(registry.create("coo", np), small_batch_kernels=True)
        q = Pipeline(registry.create("coo", np), small_batch_kernels=True)
        with monkeypatch.context() as m:
            m.setattr(rk, "launch_net_effect", no_memory)
            p.apply(batches[0], next_events=batches[1])
        for b in batches[1:]:
            p.apply(b)
        for b in batches:
            q.apply(b)
    assert p.resolved_ahead == 0 and p._resolve_ahead is None
    assert graph_state(p) == graph_state(q)
