"""GPMA+ on CuPy: the fused kernels (fused=True) against the array program (fused=False).

Both run on the device from the same batches; after every batch the whole state
(slots, weights, leaf counts and pivots, vertex dictionary, counters) must be equal,
as must masks, queries and adjacency.
Run on a GPU box: ``VINESTREAM_BACKEND=gpu python3 -m pytest tests/test_gpma_fused_gpu.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.backends import cupy_or_skip
from tests.test_gpma_kernels_compile import assert_same_state
from vinestream.structures import backend
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

H = backend.to_numpy
GAP = np.iinfo(np.int64).max


def _pair(cp, **opts):
    fused = create("gpma", cp, **opts)
    ref = create("gpma", cp, fused=False, **opts)
    assert fused.fused and not ref.fused
    return fused, ref


@pytest.mark.gpu
@pytest.mark.parametrize("opts", [{}, {"segment_size": 2, "min_capacity": 2}, {"segment_size": 64}])
def test_fused_matches_array_program_on_random_batches(opts):
    cp = cupy_or_skip()
    rng = np.random.default_rng(11)
    fused, ref = _pair(cp, **opts)
    nv = 3000
    for step in range(14):
        n = int(rng.choice([1, 7, 500, 20000]))
        s = (rng.zipf(1.5, n) % nv).astype(np.int32)
        d = rng.integers(0, nv, n).astype(np.int32)
        w = rng.random(n).astype(np.float32)
        op = ["ins", "ins", "del", "ins", "delv", "ins", "del"][step % 7]
        if op == "delv":
            ids = cp.asarray(rng.integers(0, nv, 40).astype(np.int32))
            (fs, fd), (rs, rd) = fused.delete_vertices(ids), ref.delete_vertices(ids)
            assert cp.array_equal(fs, rs) and cp.array_equal(fd, rd)
        else:
            if op == "del" and ref.num_edges:
                keys = H(ref.slot_keys)
                keys = keys[keys != GAP]
                pick = rng.choice(len(keys), min(len(keys), n), replace=False)
                s = np.concatenate([s[: n // 2], keys[pick] >> 32]).astype(np.int32)
                d = np.concatenate([d[: n // 2], keys[pick] & 0xFFFFFFFF]).astype(np.int32)
            b = CSRBatch.from_edges(cp, cp.asarray(s), cp.asarray(d),
                                    cp.asarray(w[: len(s)]) if op == "ins" else None)
            fn = "insert_edges" if op == "ins" else "delete_edges"
            assert cp.array_equal(getattr(fused, fn)(b), getattr(ref, fn)(b))
        assert_same_state(fused, ref)
    qs = cp.asarray(rng.integers(-2, nv + 5, 30000))
    qd = cp.asarray(rng.integers(-2, nv + 5, 30000))
    assert cp.array_equal(fused.contains(qs, qd), ref.contains(qs, qd))
    assert np.array_equal(H(fused.edge_weights(qs, qd)), H(ref.edge_weights(qs, qd)), equal_nan=True)
    rows = cp.asarray(rng.integers(-1, nv + 3, 500))
    for r in (rows, None):
        a, b = fused.adjacency(r), ref.adjacency(r)
        assert cp.array_equal(a.offsets, b.offsets) and cp.array_equal(a.cols, b.cols)
        assert cp.array_equal(a.weights, b.weights)


@pytest.mark.gpu
def test_fused_large_batches_on_rmat():
    """Scale 16 R-MAT: a bulk load then 1e4-edge insert/delete rounds, fused vs array program."""
    cp = cupy_or_skip()
    from vinestream.stream.bench.structures import rmat_edges
    src, dst = rmat_edges(cp, 16, 16, seed=3)
    keep = src != dst
    src, dst = src[keep].astype(cp.int32), dst[keep].astype(cp.int32)
    fused, ref = _pair(cp)
    m = int(src.shape[0])
    init = m - 40000
    for g in (fused, ref):
        g.insert_edges(CSRBatch.from_edges(cp, src[:init], dst[:init]))
    for lo in range(init, m, 10000):
        b = CSRBatch.from_edges(cp, src[lo:lo + 10000], dst[lo:lo + 10000])
        assert cp.array_equal(fused.insert_edges(b), ref.insert_edges(b))
        half = CSRBatch.from_edges(cp, src[lo - 20000:lo - 15000], dst[lo - 20000:lo - 15000])
        assert cp.array_equal(fused.delete_edges(half), ref.delete_edges(half))
        assert_same_state(fused, ref)
