"""slabhash on CuPy: the CUDA kernels (fused=True), for BOTH insert strategies, against the array
program (fused=False).

Both run on the device from the same batches.  Slot positions inside a chain depend on which
thread wins an atomicCAS, so the comparison is of what the structure means, after every batch:
the edge set with weights, out- and in-degrees, buckets per vertex, the fill of every bucket (hence
the slab counts and memory counters), the masks, queries and the removed-edge lists - plus the
chain invariants walked on the fused structure's real slabs.
Run on a GPU box: ``VINESTREAM_BACKEND=gpu python3 -m pytest tests/test_slabhash_fused_gpu.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.backends import cupy_or_skip
from tests.structure_ops import edges_of
from tests.test_slabhash import check_invariants
from vinestream.structures import backend
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

H = backend.to_numpy
STRATEGIES = ["thread", "warp"]


def _pair(cp, strategy, **opts):
    fused = create("slabhash", cp, insert_strategy=strategy, **opts)
    ref = create("slabhash", cp, fused=False, **opts)
    assert fused.fused and not ref.fused
    return fused, ref


def assert_same_meaning(fused, ref):
    assert edges_of(fused) == edges_of(ref)
    for name in ("edge_count", "in_degree", "tombstones", "num_buckets", "alive"):
        assert np.array_equal(H(getattr(fused, name)), H(getattr(ref, name))), name
    live = H(ref.num_buckets) > 0          # bucket ranges may sit elsewhere; compare per vertex
    for g in (fused, ref):
        assert g.num_edges == int(H(g.edge_count).sum())

    def fill(g):
        return [H(g.bucket_fill)[int(s):int(s) + int(n)].tolist()
                for s, n in zip(H(g.bucket_start)[live], H(g.num_buckets)[live])]

    assert fill(fused) == fill(ref)
    assert fused.memory() == ref.memory()


@pytest.mark.gpu
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("opts", [{}, {"weighted": False}, {"max_chain": 1, "initial_slabs": 1},
                                  {"auto_flush": False, "load_factor": 0.5}])
def test_fused_matches_array_program_after_every_batch(strategy, opts):
    cp = cupy_or_skip()
    rng = np.random.default_rng(17)
    fused, ref = _pair(cp, strategy, **opts)
    nv = 3000
    for step in range(14):
        n = int(rng.choice([1, 7, 33, 500, 20000]))
        s = (rng.zipf(1.5, n) % nv).astype(np.int32)           # hubs: long chains, resizes
        d = rng.integers(0, nv, n).astype(np.int32)
        w = rng.random(n).astype(np.float32)
        op = ["ins", "ins", "del", "ins", "delv", "phases", "del"][step % 7]
        if op == "delv":
            ids = cp.asarray(rng.integers(0, nv, 40).astype(np.int32))
            (fs, fd), (rs, rd) = fused.delete_vertices(ids), ref.delete_vertices(ids)
            assert sorted(zip(H(fs).tolist(), H(fd).tolist())) == sorted(zip(H(rs).tolist(), H(rd).tolist()))
        elif op == "phases":
            ins = CSRBatch.from_edges(cp, s, d, w)
            keys = set(zip(H(ins.sources()).tolist(), H(ins.cols).tolist()))
            csr = ref.adjacency()
            old = [(int(a), int(b)) for a, b in zip(H(csr.row_ids()), H(csr.cols))][: n // 2]
            dels = [e for e in old if e not in keys]
            dl = CSRBatch.from_edges(cp, np.asarray([a for a, _ in dels], np.int32),
                                     np.asarray([b for _, b in dels], np.int32))
            streams = (cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True))
            fi, fd_ = fused.apply_edge_phases(ins, dl, streams=streams)
            ri, rd_ = ref.apply_edge_phases(ins, dl)
            assert np.array_equal(H(fi), H(ri)) and np.array_equal(H(fd_), H(rd_))
        else:
            if op == "del" and ref.num_edges:
                csr = ref.adjacency()
                rows, cols = H(csr.row_ids()), H(csr.cols)
                pick = rng.choice(len(cols), min(len(cols), n), replace=False)
                s = np.concatenate([s[: n // 2], rows[pick]]).astype(np.int32)
                d = np.concatenate([d[: n // 2], cols[pick]]).astype(np.int32)
                w = None
            b = CSRBatch.from_edges(cp, s, d, w)
            call = "insert_edges" if op == "ins" else "delete_edges"
            assert np.array_equal(H(getattr(fused, call)(b)), H(getattr(ref, call)(b)))
        assert_same_meaning(fused, ref)
        qs, qd = rng.integers(-2, nv + 5, 3000), rng.integers(-2, nv + 5, 3000)
        assert np.array_equal(H(fused.contains(qs, qd)), H(ref.contains(qs, qd)))
        assert np.array_equal(H(fused.edge_weights(qs, qd)), H(ref.edge_weights(qs, qd)), equal_nan=True)
    check_invariants(fused)
    assert fused.stats["resizes"] > 0


@pytest.mark.gpu
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_contention_one_hub_many_threads(strategy):
    """Tens of thousands of CASes into the chains of one vertex at once, then more into full chains."""
    cp = cupy_or_skip()
    fused, ref = _pair(cp, strategy, max_chain=50)
    rng = np.random.default_rng(2)
    for n in (40_000, 40_000, 1_000):
        d = rng.integers(0, 10**6, n).astype(np.int32)
        b = CSRBatch.from_edges(cp, np.zeros(n, np.int32), d, rng.random(n).astype(np.float32))
        assert np.array_equal(H(fused.insert_edges(b)), H(ref.insert_edges(b)))
        assert_same_meaning(fused, ref)
    check_invariants(fused)


@pytest.mark.gpu
def test_strategies_agree_on_luxembourg_like_road_graph():
    """Low-degree graph (the slides' case): both strategies give the array program's graph."""
    cp = cupy_or_skip()
    rng = np.random.default_rng(4)
    n = 50_000
    s = rng.integers(0, 20_000, n).astype(np.int32)
    d = ((s + rng.integers(1, 30, n)) % 20_000).astype(np.int32)
    ref = create("slabhash", cp, fused=False, weighted=False)
    ref.insert_edges(CSRBatch.from_edges(cp, s, d))
    for strategy in STRATEGIES:
        g = create("slabhash", cp, insert_strategy=strategy, weighted=False)
        g.insert_edges(CSRBatch.from_edges(cp, s, d))
        assert_same_meaning(g, ref)
