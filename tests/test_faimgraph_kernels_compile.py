"""The fused faimGraph kernels: compiled by nvcc for sm_90 (skipped without nvcc), and run through the
serial host emulation (tests/faimgraph_emulation.py) against the array program and the oracle, for
faimgraph, aimgraph and ourograph, with the whole state compared after every operation."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import faimgraph_emulation as emu
from tests.backends import HAS_GPU
from tests.oracle import Oracle
from tests.structure_ops import apply_op
from tests.test_faimgraph import check_invariants, check_queries, streams
from vinestream.structures import faimgraph_kernels as fk
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

needs_gpp = pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation")
emulation_only = pytest.mark.skipif(HAS_GPU, reason="a GPU is present: the real kernels are tested instead")


def state(g) -> dict:
    """Every word of the pool / region, the id map, every queue's contents and the counters."""
    from vinestream.structures.backend import to_numpy as h
    out = {"words": np.array(h(g.words)), "slot_of": np.array(h(g.slot_of)),
           "counters": (g.num_vertices, g.num_edges, g.vertex_top, tuple(sorted(g.stats.items())))}
    if g.vertex_queue is not None:
        out["vertex_queue"] = np.array(h(g.vertex_queue.contents()))
    if g.name == "ourograph":
        a = g.allocator
        out["class_queues"] = [np.array(h(q.contents())) for q in a.queues]
        out["alloc"] = (a.chunk_top, a.linear_words, tuple(a.pages_created), tuple(sorted(a.stats.items())))
        out["chunk_reuse"] = np.array(h(a.chunk_reuse.contents()))
    else:
        out["pages"] = (g.page_top, g.pool_words)
        if g.page_queue is not None:
            out["page_queue"] = np.array(h(g.page_queue.contents()))
    return out


def assert_same_state(a, b) -> None:
    sa, sb = state(a), state(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        if isinstance(sa[k], np.ndarray):
            assert np.array_equal(sa[k], sb[k]), k
        elif isinstance(sa[k], list):
            assert len(sa[k]) == len(sb[k]) and all(np.array_equal(x, y) for x, y in zip(sa[k], sb[k])), k
        else:
            assert sa[k] == sb[k], k


@needs_gpp
@emulation_only
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2]))
def test_emulated_fused_path_matches_oracle_and_array_path(stream, seed, order):
    (name, opts), ops = stream
    saved, fk.launcher = fk.launcher, emu.HostLauncher(order, seed)
    try:
        fused, ref = create(name, np, **opts), create(name, np, **opts)
        fused.fused = True
        o, o_ref = Oracle(keep_self_loops=True), Oracle(keep_self_loops=True)
        for op in ops:
            apply_op(fused, o, op, np.random.default_rng(seed))
            apply_op(ref, o_ref, op, np.random.default_rng(seed))
            check_invariants(fused, o)
            check_queries(fused, o, np.random.default_rng(seed))
            assert_same_state(fused, ref)
    finally:
        fk.launcher = saved


@needs_gpp
@emulation_only
@pytest.mark.parametrize("name,opts", [("faimgraph", {"page_bytes": 20}), ("aimgraph", {}),
                                       ("ourograph", {"queue": "va", "chunk_bytes": 512}),
                                       ("faimgraph", {"sorted": True})])
def test_emulated_fused_path_on_a_skewed_graph(name, opts, monkeypatch):
    """Hub vertices with long page lists, insert / delete / vertex-delete rounds, fused vs array."""
    launcher = emu.HostLauncher(2, 12345)
    monkeypatch.setattr(fk, "launcher", launcher)
    rng = np.random.default_rng(4)
    fused, ref = create(name, np, **opts), create(name, np, **opts)
    fused.fused = True
    for step in range(6):
        s = (rng.zipf(1.6, 4000) % 300).astype(np.int32)
        d = rng.integers(0, 2000, 4000).astype(np.int32)
        w = rng.random(4000).astype(np.float32)
        for g in (fused, ref):
            b = CSRBatch.from_edges(np, s, d, w)
            m = (g.insert_edges if step % 3 != 2 else g.delete_edges)(b)
            if g is fused:
                mf = m
            else:
                assert np.array_equal(mf, m)
        if step == 4:
            for g in (fused, ref):
                g.delete_vertices(np.arange(0, 300, 7))
        assert_same_state(fused, ref)
    check_invariants(fused)
    qs, qd = rng.integers(-2, 2100, 5000), rng.integers(-2, 2100, 5000)
    assert np.array_equal(fused.contains(qs, qd), ref.contains(qs, qd))
    assert np.array_equal(fused.edge_weights(qs, qd), ref.edge_weights(qs, qd), equal_nan=True)
    rows = rng.integers(-1, 400, 50)
    a, b = fused.adjacency(rows), ref.adjacency(rows)
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.cols, b.cols)
    assert np.array_equal(a.weights, b.weights)
    assert launcher.launches.get("fg_find", 0) >= 6
    if name != "ourograph":
        assert launcher.launches.get("fg_walk", 0) >= 6
