"""The fused GPMA+ kernels: compiled by nvcc for sm_90 (skipped without nvcc), and run through the serial
host emulation (tests/gpma_emulation.py) side by side with the array program: same state after every batch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import gpma_emulation as emu
from tests.backends import HAS_GPU
from tests.oracle import Oracle
from tests.test_gpma import apply_op, check_against, check_invariants, streams
from vinestream.structures import gpma_kernels as pk
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

needs_gpp = pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation")
emulation_only = pytest.mark.skipif(HAS_GPU, reason="a GPU is present: the real kernels are tested instead")

STATE = ("slot_keys", "slot_weights", "leaf_count", "leaf_pivot", "alive", "out_degree")


def assert_same_state(a, b) -> None:
    """Every array and counter of two GPMA instances equal (host copies)."""
    from vinestream.structures.backend import to_numpy
    assert (a.capacity, a.segment_size, a.height, a.num_edges, a.num_vertices) == \
        (b.capacity, b.segment_size, b.height, b.num_edges, b.num_vertices)
    for name in STATE:
        assert np.array_equal(to_numpy(getattr(a, name)), to_numpy(getattr(b, name))), name
    assert a.stats == b.stats
    assert a.memory() == b.memory()


def _side_by_side(opts, ops, seed):
    fused, ref = create("gpma", np, **opts), create("gpma", np, **opts)
    fused.fused = True
    o, o_ref = Oracle(keep_self_loops=True), Oracle(keep_self_loops=True)
    for op in ops:
        apply_op(fused, o, op, np.random.default_rng(seed))
        apply_op(ref, o_ref, op, np.random.default_rng(seed))
        check_invariants(fused)
        check_against(fused, o, np.random.default_rng(seed))
        assert_same_state(fused, ref)


@needs_gpp
@emulation_only
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2]))
def test_emulated_fused_path_matches_array_path(stream, seed, order):
    opts, ops = stream
    saved, pk.launcher = pk.launcher, emu.HostLauncher(order, seed)
    try:
        _side_by_side(opts, ops, seed)
    finally:
        pk.launcher = saved


@needs_gpp
@emulation_only
@pytest.mark.parametrize("order", [0, 1, 2])
def test_emulated_fused_path_on_skewed_batches(order, monkeypatch):
    """Hub sources (bursts into few leaves), doublings, deletions down to halvings; every kernel runs."""
    launcher = emu.HostLauncher(order, 4321)
    monkeypatch.setattr(pk, "launcher", launcher)
    rng = np.random.default_rng(order)
    fused, ref = create("gpma", np, segment_size=8), create("gpma", np, segment_size=8)
    fused.fused = True
    for step in range(8):
        n = 3000
        s = (rng.zipf(1.6, n) % 300).astype(np.int32)
        d = rng.integers(0, 2000, n).astype(np.int32)
        w = rng.random(n).astype(np.float32)
        for g in (fused, ref):
            if step % 3 == 2:
                keys = np.asarray(g.slot_keys)
                keys = keys[keys != np.iinfo(np.int64).max]
                pick = keys[::2]
                m = g.delete_edges(CSRBatch.from_edges(np, pick >> 32, pick & 0xFFFFFFFF))
            else:
                m = g.insert_edges(CSRBatch.from_edges(np, s, d, w))
            if g is fused:
                mf = m
            else:
                assert np.array_equal(mf, m)
        if step == 5:
            for g in (fused, ref):
                g.delete_vertices(np.arange(0, 300, 7))
        assert_same_state(fused, ref)
        check_invariants(fused)
    qs, qd = rng.integers(-2, 2100, 5000), rng.integers(-2, 2100, 5000)
    assert np.array_equal(fused.contains(qs, qd), ref.contains(qs, qd))
    rows = rng.integers(-1, 400, 50)
    a, b = fused.adjacency(rows), ref.adjacency(rows)
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.cols, b.cols)
    assert np.array_equal(a.weights, b.weights)
    assert all(launcher.launches.get(k, 0) >= 2 for k in pk.KERNELS), launcher.launches
    assert max(fused.stats["redistributions"][1:]) > 0
