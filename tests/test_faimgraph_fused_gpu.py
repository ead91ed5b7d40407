"""faimGraph, aimGraph and ouroGraph on CuPy: fused kernels (fused=True) against the array program (fused=False).

Both run on the device from the same batches; after every batch the whole state
(every word of the pool / Ouroboros region, id map, page / vertex / class queue
contents, counters) must be equal, as must masks, removed edges, queries and
adjacency.  Run on a GPU box:
``VINESTREAM_BACKEND=gpu python3 -m pytest tests/test_faimgraph_fused_gpu.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.backends import cupy_or_skip
from tests.test_faimgraph_kernels_compile import assert_same_state
from vinestream.structures import backend
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

H = backend.to_numpy

CONFIGS = [("faimgraph", {}), ("faimgraph", {"page_bytes": 20, "sorted": True}), ("aimgraph", {}),
           ("ourograph", {}), ("ourograph", {"queue": "va"}), ("ourograph", {"queue": "vl", "chunk_bytes": 1024})]


def _pair(cp, name, opts):
    fused = create(name, cp, **opts)
    ref = create(name, cp, fused=False, **opts)
    assert fused.fused and not ref.fused
    return fused, ref


@pytest.mark.gpu
@pytest.mark.parametrize("name,opts", CONFIGS)
def test_fused_matches_array_program_on_random_batches(name, opts):
    cp = cupy_or_skip()
    rng = np.random.default_rng(11)
    fused, ref = _pair(cp, name, opts)
    nv = 3000
    for step in range(14):
        n = int(rng.choice([1, 7, 500, 20000]))
        s = (rng.zipf(1.5, n) % nv).astype(np.int32)          # skewed: long page lists for hubs
        d = rng.integers(0, nv, n).astype(np.int32)
        w = rng.random(n).astype(np.float32)
        op = ["ins", "ins", "del", "ins", "delv", "ins", "del"][step % 7]
        if op == "delv":
            ids = cp.asarray(rng.integers(0, nv, 40).astype(np.int32))
            (fs, fd), (rs, rd) = fused.delete_vertices(ids), ref.delete_vertices(ids)
            assert sorted(zip(H(fs).tolist(), H(fd).tolist())) == sorted(zip(H(rs).tolist(), H(rd).tolist()))
        else:
            if op == "del" and ref.num_edges:
                csr = ref.adjacency()
                rows, cols = H(csr.row_ids()), H(csr.cols)
                pick = rng.choice(len(cols), min(len(cols), n), replace=False)
                s = np.concatenate([s[: n // 2], rows[pick]]).astype(np.int32)
                d = np.concatenate([d[: n // 2], cols[pick]]).astype(np.int32)
            b = CSRBatch.from_edges(cp, cp.asarray(s), cp.asarray(d), cp.asarray(w[: len(s)]) if op == "ins" else None)
            fn = "insert_edges" if op == "ins" else "delete_edges"
            assert cp.array_equal(getattr(fused, fn)(b), getattr(ref, fn)(b))
        assert_same_state(fused, ref)
        assert fused.memory() == ref.memory()
    qs = cp.asarray(rng.integers(-2, nv + 5, 30000))
    qd = cp.asarray(rng.integers(-2, nv + 5, 30000))
    assert cp.array_equal(fused.contains(qs, qd), ref.contains(qs, qd))
    assert np.array_equal(H(fused.edge_weights(qs, qd)), H(ref.edge_weights(qs, qd)), equal_nan=True)
    rows = cp.asarray(rng.integers(-1, nv + 3, 500))
    for r in (rows, None):
        a, b = fused.adjacency(r), ref.adjacency(r)
        assert cp.array_equal(a.offsets, b.offsets) and cp.array_equal(a.cols, b.cols)
        assert cp.array_equal(a.weights, b.weights)
    assert cp.array_equal(fused.degree(rows), ref.degree(rows))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["faimgraph", "aimgraph", "ourograph"])
def test_fused_large_batch_on_rmat(name):
    """Scale 16 R-MAT: a bulk load then 1e4-edge insert / delete rounds, fused vs array program."""
    cp = cupy_or_skip()
    from vinestream.stream.bench.structures import rmat_edges
    src, dst = rmat_edges(cp, 16, 16, seed=3)
    keep = src != dst
    src, dst = src[keep].astype(cp.int32), dst[keep].astype(cp.int32)
    fused, ref = _pair(cp, name, {})
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
    assert fused.memory() == ref.memory()
