"""slabhash's CUDA kernels: compiled by nvcc for sm_90 (skipped without nvcc), and the one-thread
kernels run through the serial host emulation (tests/slabhash_emulation.py) against the array
program and the oracle.  The warp-cooperative insert is compiled here and run on the GPU only."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import slabhash_emulation as emu
from tests.backends import HAS_GPU
from tests.oracle import Oracle
from tests.structure_ops import apply_op, check_against, edges_of
from tests.test_slabhash import check_invariants, streams
from vinestream.structures import slabhash_kernels as sk
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

needs_gpp = pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation")
emulation_only = pytest.mark.skipif(HAS_GPU, reason="a GPU is present: the real kernels are tested instead")


def _same(fused, ref):
    """Same edges, weights, degrees, tombstones and slab counts (slot positions may differ)."""
    assert edges_of(fused) == edges_of(ref)
    assert np.array_equal(fused.degree(), ref.degree())
    assert np.array_equal(fused.in_degree, ref.in_degree)
    assert np.array_equal(fused.num_buckets, ref.num_buckets)
    assert np.array_equal(fused.bucket_fill, ref.bucket_fill)
    assert fused.memory() == ref.memory()


@needs_gpp
@emulation_only
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2]))
def test_emulated_kernels_match_oracle_and_array_path(stream, seed, order):
    opts, ops = stream
    saved, sk.launcher = sk.launcher, emu.HostLauncher(order, seed)
    try:
        fused, ref = create("slabhash", np, **opts), create("slabhash", np, **opts)
        fused.fused = True
        o, o_ref = Oracle(keep_self_loops=True), Oracle(keep_self_loops=True)
        for op in ops:
            apply_op(fused, o, op, np.random.default_rng(seed))
            apply_op(ref, o_ref, op, np.random.default_rng(seed))
            check_invariants(fused, o)
            check_against(fused, o, np.random.default_rng(seed))
            _same(fused, ref)
    finally:
        sk.launcher = saved


@needs_gpp
@emulation_only
@pytest.mark.parametrize("order", [0, 1, 2])
def test_emulated_kernels_on_a_skewed_graph(order, monkeypatch):
    """Hubs with long chains and resizes, inserts, deletes with flushes, vertex deletion."""
    launcher = emu.HostLauncher(order, 4321)
    monkeypatch.setattr(sk, "launcher", launcher)
    rng = np.random.default_rng(order)
    fused, ref = create("slabhash", np), create("slabhash", np)
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
            a, b_ = fused.delete_vertices(np.arange(0, 300, 7)), ref.delete_vertices(np.arange(0, 300, 7))
            assert sorted(zip(*[x.tolist() for x in a])) == sorted(zip(*[x.tolist() for x in b_]))
        _same(fused, ref)
        check_invariants(fused)
    assert fused.stats["resizes"] > 0 and fused.stats["flushes"] > 0
    qs, qd = rng.integers(-2, 2100, 5000), rng.integers(-2, 2100, 5000)
    assert np.array_equal(fused.contains(qs, qd), ref.contains(qs, qd))
    assert np.array_equal(fused.edge_weights(qs, qd), ref.edge_weights(qs, qd), equal_nan=True)
    assert launcher.launches["sh_insert_thread"] >= 4 and launcher.launches["sh_delete"] >= 2


def test_warp_strategy_is_not_emulated(monkeypatch):
    monkeypatch.setattr(sk, "launcher", emu.HostLauncher())
    g = create("slabhash", np, insert_strategy="warp")
    g.fused = True
    with pytest.raises(NotImplementedError):
        g.insert_edges(CSRBatch.from_edges(np, np.asarray([0], np.int32), np.asarray([1], np.int32)))
