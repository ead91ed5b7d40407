"""Triangles on CuPy: the fused kernels (fused=True, the CuPy default) against the array program
(fused=False, also on the device) and networkx.

Run on a GPU box: ``python3 -m pytest tests/test_triangles_fused_gpu.py -m gpu``.
"""
from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.algo_support import Harness, check_triangles, event_batches, outputs_equal, random_batch, rmat_edges
from tests.backends import HAS_GPU, cupy
from vinestream.algorithms import create_job
from vinestream.algorithms.edge_index import SortedEdgeIndex
from vinestream.algorithms.triangles import (
    Triangles,
    count_static,
    count_static_fused,
    symmetric_keys,
    triangles_through,
    triangles_through_fused,
    undirected_keys,
)
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta
from vinestream.structures.array_ops import split_keys
from vinestream.structures.backend import to_numpy
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")]
FORCE = {"fallback_fraction": 1e9}


def networkx_counts(s, d, n) -> np.ndarray:
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((int(a), int(b)) for a, b in zip(s, d) if a != b)
    t = nx.triangles(G)
    return np.array([t[v] for v in range(n)], dtype=np.int64)


def test_cupy_default_is_fused():
    assert Triangles(cupy).fused and not Triangles(cupy, fused=False).fused
    assert create_job("triangles", cupy).fused


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 60), st.floats(0.0, 0.8), st.integers(0, 2**32 - 1), st.sampled_from([1, 4, 32]))
def test_static_random_graphs(n, p, seed, chunk):
    rng = np.random.default_rng(seed)
    s, d = np.nonzero(rng.random((n, n)) < p)              # directed, with reciprocal pairs and loops
    ref = networkx_counts(s, d, n)
    cs, cd = cupy.asarray(s), cupy.asarray(d)
    arr, _ = count_static(cupy, n, undirected_keys(cupy, cs, cd))
    fused, info = count_static_fused(cupy, n, symmetric_keys(cupy, cs, cd), chunk)
    assert np.array_equal(to_numpy(arr), ref)
    assert np.array_equal(to_numpy(fused), ref)
    assert info["triangles"] * 3 == int(ref.sum())


@pytest.mark.parametrize("chunk", [1, 8, 32, 1024])
def test_static_rmat_scale12(chunk):
    s, d = rmat_edges(np.random.default_rng(12), 12, 16)
    n = 1 << 12
    ref = networkx_counts(s, d, n)
    cs, cd = cupy.asarray(s), cupy.asarray(d)
    arr, _ = count_static(cupy, n, undirected_keys(cupy, cs, cd))
    fused, info = count_static_fused(cupy, n, symmetric_keys(cupy, cs, cd), chunk)
    assert np.array_equal(to_numpy(arr), ref) and np.array_equal(to_numpy(fused), ref)
    assert info["triangles"] * 3 == int(ref.sum()) > 0


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 50), st.floats(0.05, 0.9), st.integers(0, 2**32 - 1), st.sampled_from([1, 3, 32]),
       st.sampled_from([1, -1]))
def test_through_matches_array_program(n, p, seed, chunk, sign):
    """Kernel == arrays; and with the job's counts given, each triangle adds ``sign`` at its corners in place,
    nothing else changes."""
    rng = np.random.default_rng(seed)
    s, d = np.nonzero(np.triu(rng.random((n, n)) < p, 1))
    und = undirected_keys(cupy, cupy.asarray(s), cupy.asarray(d))
    a, b = split_keys(und)
    index = SortedEdgeIndex.from_edges(cupy, cupy.concatenate([a, b]), cupy.concatenate([b, a]))
    changed = und[cupy.asarray(rng.random(und.shape[0]) < rng.random())]
    ref = triangles_through(cupy, index, changed, n)
    got = triangles_through_fused(cupy, index, changed, n, chunk)
    assert np.array_equal(to_numpy(got[0]), to_numpy(ref[0])) and got[1:] == ref[1:]
    start = rng.integers(0, 1 << 40, n + 3).astype(np.int64)
    counts = cupy.asarray(start)
    got = triangles_through_fused(cupy, index, changed, n, chunk, counts=counts, sign=sign)
    assert got[0] is counts and got[1:] == ref[1:]
    host = to_numpy(counts)
    assert np.array_equal(host[:n], start[:n] + sign * to_numpy(ref[0])) and np.array_equal(host[n:], start[n:])


@settings(max_examples=20, deadline=None)
@given(event_batches(), st.sampled_from([1, 32]))
def test_incremental_matches_networkx(batches, chunk):
    h = Harness(cupy)
    job = Triangles(cupy, fused_chunk=chunk, **FORCE)
    job.run_static(h.graph, h.vmap)
    for events in batches:
        job.update(h.graph, h.apply(events), h.vmap)
        assert job.work["mode"] == "incremental" and job.work["fused"]
        check_triangles(job, h)


def test_stream_fused_incremental_equals_static_and_array_path():
    rng = random.Random(21)
    h = Harness(cupy)
    h.apply(random_batch(rng, h.oracle, 60, 400))
    fused, ref = Triangles(cupy, **FORCE), Triangles(cupy, fused=False, **FORCE)
    for job in (fused, ref):
        job.run_static(h.graph, h.vmap)
    for _ in range(15):
        delta = h.apply(random_batch(rng, h.oracle, 60, 40))
        for job in (fused, ref):
            job.update(h.graph, delta, h.vmap)
        fresh = Triangles(cupy)
        fresh.run_static(h.graph, h.vmap)
        for other in (ref, fresh):
            assert outputs_equal(fused.output(h.vmap), other.output(h.vmap), "triangles")
            assert fused.total == other.total
        check_triangles(fused, h)


def test_rmat_scale12_batches_incremental_equals_static():
    """Random deltas (up to 1% of the edges) on R-MAT scale 12: fused incremental == fused static ==
    array static after every batch."""
    s, d = rmat_edges(np.random.default_rng(5), 12, 16)
    n = 1 << 12
    keep = s != d
    graph = build("csr", cupy, cupy.asarray(s[keep]), cupy.asarray(d[keep]), n)
    vm = IdentityVertexMap(cupy)
    job = Triangles(cupy, **FORCE)
    job.run_static(graph, vm)
    for i, frac in enumerate((1e-4, 1e-3, 1e-2, 1e-3)):
        delta = random_delta(cupy, graph, max(2, int(frac * graph.num_edges)), 100 + i)
        apply_delta(graph, delta)
        job.update(graph, delta, vm)
        assert job.work["mode"] == "incremental"
        fused_static, array_static = Triangles(cupy), Triangles(cupy, fused=False)
        for other in (fused_static, array_static):
            other.run_static(graph, vm)
            assert job.total == other.total
            assert outputs_equal(job.output(vm), other.output(vm), "triangles")


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 60), st.floats(0.0, 0.8), st.integers(0, 2**32 - 1), st.sampled_from([1, 4, 8, 32]))
def test_support_count_random_graphs(n, p, seed, lanes):
    """tri_support (the fused static job's count) on directed graphs with reciprocal pairs and loops."""
    from vinestream.algorithms.triangle_kernels import count_static_oriented
    rng = np.random.default_rng(seed)
    s, d = np.nonzero(rng.random((n, n)) < p)
    ref = networkx_counts(s, d, n)
    got, info = count_static_oriented(cupy, n, cupy.asarray(s), cupy.asarray(d), lanes)
    assert np.array_equal(to_numpy(got), ref)
    assert info["triangles"] * 3 == int(ref.sum())


@pytest.mark.parametrize("lanes", [1, 8, 32])
def test_support_count_rmat_scale12_and_16(lanes):
    """R-MAT scale 12 against networkx, scale 16 (hubs: long shorter lists) against the array program."""
    from vinestream.algorithms.triangle_kernels import count_static_oriented
    s, d = rmat_edges(np.random.default_rng(12), 12, 16)
    got, info = count_static_oriented(cupy, 1 << 12, cupy.asarray(s), cupy.asarray(d), lanes)
    ref = networkx_counts(s, d, 1 << 12)
    assert np.array_equal(to_numpy(got), ref) and info["triangles"] * 3 == int(ref.sum()) > 0
    s, d = rmat_edges(np.random.default_rng(16), 16, 16)
    cs, cd = cupy.asarray(s), cupy.asarray(d)
    got, info = count_static_oriented(cupy, 1 << 16, cs, cd, lanes)
    arr, _ = count_static(cupy, 1 << 16, undirected_keys(cupy, cs, cd))
    assert cupy.array_equal(got, arr) and info["triangles"] * 3 == int(arr.sum()) > 0


HASHED_PARAMS = [
    {},
    {"light": 0, "block_slot_bits": 5, "grab": 32},   # every vertex block-wide; N+(v) past 8 searched
    {"light": 256, "per_warp_task": 3, "table_shift": 1},        # every vertex per warp where out-degrees allow
    {"light": 4, "per_block_task": 5, "per_warp_task": 2, "grab": 3, "table_shift": 1, "blocks_per_sm": 1},
    {"light": 16, "per_block_task": 40, "per_warp_task": 7, "grab": 1},
]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 70), st.floats(0.0, 0.8), st.integers(0, 2**32 - 1), st.sampled_from(HASHED_PARAMS))
def test_hashed_count_random_graphs(n, p, seed, params):
    """count_static_hashed (the fused static job's count) on directed graphs with reciprocal pairs and
    loops: per-vertex and global counts equal networkx's."""
    from vinestream.algorithms.triangle_kernels import count_static_hashed
    rng = np.random.default_rng(seed)
    s, d = np.nonzero(rng.random((n, n)) < p)
    ref = networkx_counts(s, d, n)
    got, info = count_static_hashed(cupy, n, cupy.asarray(s), cupy.asarray(d), **params)
    assert np.array_equal(to_numpy(got), ref)
    assert info["triangles"] * 3 == int(ref.sum())


@pytest.mark.parametrize("params", HASHED_PARAMS)
def test_hashed_count_rmat(params):
    """R-MAT 12 against networkx; R-MAT 16 (hubs with 10^3-10^4 in-edges: many tasks per vertex)
    against the array program and tri_support, as an edge list and as a CSR."""
    from vinestream.algorithms.triangle_kernels import count_static_hashed, count_static_oriented
    s, d = rmat_edges(np.random.default_rng(12), 12, 16)
    got, info = count_static_hashed(cupy, 1 << 12, cupy.asarray(s), cupy.asarray(d), **params)
    ref = networkx_counts(s, d, 1 << 12)
    assert np.array_equal(to_numpy(got), ref) and info["triangles"] * 3 == int(ref.sum()) > 0
    s, d = rmat_edges(np.random.default_rng(16), 16, 16)
    n = 1 << 16
    cs, cd = cupy.asarray(s), cupy.asarray(d)
    got, info = count_static_hashed(cupy, n, cs, cd, **params)
    arr, _ = count_static(cupy, n, undirected_keys(cupy, cs, cd))
    assert cupy.array_equal(got, arr) and info["triangles"] * 3 == int(arr.sum()) > 0
    assert cupy.array_equal(got, count_static_oriented(cupy, n, cs, cd)[0])
    keys = cupy.unique((cs << 32) | cd)
    offsets = cupy.zeros(n + 1, dtype=np.int64)
    offsets[1:] = cupy.cumsum(cupy.bincount(keys >> 32, minlength=n))
    by_csr, _ = count_static_hashed(cupy, n, None, keys & 0xFFFFFFFF, offsets=offsets, **params)
    assert cupy.array_equal(by_csr, arr)
