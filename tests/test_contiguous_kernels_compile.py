"""The fused Hornet / cuSTINGER kernels (structures/contiguous_kernels.py): compiled by nvcc for
sm_90 (skipped without nvcc), and run through the serial host emulation against the array program:
identical state after every batch, threads in several orders."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import contiguous_support as cs
from tests import graphvine_emulation as gv_emu
from tests.backends import HAS_GPU
from vinestream.structures import contiguous_kernels as ck
from vinestream.structures.registry import create

needs_gpp = pytest.mark.skipif(not gv_emu.available(), reason="needs g++ for the host emulation")
emulation_only = pytest.mark.skipif(HAS_GPU, reason="a GPU is present: the real kernels are tested instead")

OPTIONS = {
    "hornet": [{"block_array_entries": 4}, {"block_array_entries": 64, "min_block_size": 4, "linear_scan_max": 3}],
    "custinger": [{"initial_pool_entries": 2, "min_capacity": 1, "factor": 1.0},
                  {"factor": 1.5, "initial_pool_entries": 64, "linear_scan_max": 0}],
}


def _side_by_side(name, opts, ops, launcher, monkeypatch):
    monkeypatch.setattr(ck, "launcher", launcher)
    fused, ref = create(name, np, **opts), create(name, np, **opts)
    fused.fused = True
    for sc in getattr(fused, "classes", {}).values():
        sc.fused = True
    for op in ops:
        mf, mr = cs.apply(fused, op), cs.apply(ref, op)
        if isinstance(mf, tuple):
            assert sorted(zip(*[m.tolist() for m in mf])) == sorted(zip(*[m.tolist() for m in mr]))
        elif mf is not None:
            assert np.array_equal(mf, mr)
        cs.assert_same_state(fused, ref)
        cs.check_invariants(fused)
    return fused, ref


@needs_gpp
@emulation_only
@pytest.mark.parametrize("name", ["hornet", "custinger"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), order=st.sampled_from([0, 1, 2]), which=st.integers(0, 1))
def test_emulated_fused_path_matches_array_program(name, seed, order, which, monkeypatch):
    rng = np.random.default_rng(seed)
    ops = cs.random_ops(rng, nv=int(rng.integers(4, 120)), steps=10, max_batch=300)
    _side_by_side(name, OPTIONS[name][which], ops, cs.HostLauncher(order, seed), monkeypatch)


@needs_gpp
@emulation_only
@pytest.mark.parametrize("name", ["hornet", "custinger"])
def test_emulated_fused_path_on_hubs_and_queries(name, monkeypatch):
    """Hub rows grown through many sizes; queries, degrees and adjacency agree too; every kernel ran."""
    launcher = cs.HostLauncher(2, 777)
    rng = np.random.default_rng(5)
    ops = cs.random_ops(rng, nv=300, steps=28, max_batch=3000)
    fused, ref = _side_by_side(name, OPTIONS[name][0], ops, launcher, monkeypatch)
    assert int(np.asarray(fused.degree_).max()) > 200
    qs, qd = rng.integers(-2, 310, 4000), rng.integers(-2, 310, 4000)
    assert np.array_equal(fused.contains(qs, qd), ref.contains(qs, qd))
    assert np.array_equal(fused.edge_weights(qs, qd), ref.edge_weights(qs, qd), equal_nan=True)
    rows = rng.integers(-1, 320, 60)
    for r in (rows, None):
        a, b = fused.adjacency(r), ref.adjacency(r)
        assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.cols, b.cols)
        assert np.array_equal(a.weights, b.weights)
    used = {k for k, v in launcher.launches.items() if v}
    expected = set(ck.KERNELS) - ({"hn_select_free"} if name == "custinger" else set())
    assert used == expected, expected - used
