"""The fused triangle kernels: compiled by nvcc for sm_90 (skipped without nvcc), and run through a
serial host emulation (tests/triangle_emulation.py) against the array program and networkx."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import triangle_emulation as emu
from tests.algo_support import Harness, check_triangles, event_batches, long_stream, outputs_equal, rmat_edges
from tests.backends import HAS_GPU
from vinestream.algorithms import triangle_kernels as tk
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
from vinestream.structures.array_ops import row_ids, split_keys

needs_gpp = pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation")
# the emulation stands in for a GPU; where there is one, test_triangles_fused_gpu.py runs the real kernels
emulation_only = pytest.mark.skipif(HAS_GPU, reason="a GPU is present: the real kernels are tested instead")
FORCE = {"fallback_fraction": 1e9}


@pytest.fixture
def emulated(monkeypatch):
    """Kernels run serially on the host, threads in a shuffled order."""
    launcher = emu.HostLauncher(2, 12345)
    monkeypatch.setattr(tk, "launcher", launcher)
    monkeypatch.setattr(tk, "block_launcher", launcher.blocks)
    return launcher


def test_fused_on_numpy_needs_a_launcher():
    """Without the emulation, the default launcher refuses NumPy instead of failing obscurely."""
    job = Triangles(np, fused=True)
    s = np.array([0, 1, 2], dtype=np.int64)
    with pytest.raises(RuntimeError, match="CuPy"):
        count_static_fused(np, 3, symmetric_keys(np, s, np.roll(s, 1)))
    assert job.fused and not Triangles(np).fused


@needs_gpp
@emulation_only
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("chunk", [1, 3, 32])
def test_emulated_static_on_rmat(order, chunk, monkeypatch):
    """R-MAT scale 10 (hubs whose lists span many items): counts and total equal the array program."""
    launcher = emu.HostLauncher(order, 99)
    monkeypatch.setattr(tk, "launcher", launcher)
    s, d = rmat_edges(np.random.default_rng(order + 3), 10, 8)
    ref, _ = count_static(np, 1 << 10, undirected_keys(np, s, d))
    got, info = count_static_fused(np, 1 << 10, symmetric_keys(np, s, d), chunk)
    assert np.array_equal(got, ref) and got.dtype == ref.dtype
    assert info["triangles"] * 3 == int(ref.sum()) > 0
    assert launcher.items["tri_static"] >= info["searches"] / chunk


@needs_gpp
@emulation_only
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(2, 40), st.floats(0.05, 0.9), st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 5, 32]))
def test_emulated_through_matches_array_program(emulated, n, p, seed, chunk):
    """Triangles through a random set of changed edges, with the ownership rule: kernel == arrays."""
    rng = np.random.default_rng(seed)
    s, d = np.nonzero(np.triu(rng.random((n, n)) < p, 1))
    und = undirected_keys(np, s, d)
    a, b = split_keys(und)
    index = SortedEdgeIndex.from_edges(np, np.concatenate([a, b]), np.concatenate([b, a]))
    assert np.array_equal(index.keys, symmetric_keys(np, s, d))
    changed = und[rng.random(und.shape[0]) < rng.random()]
    ref = triangles_through(np, index, changed, n)
    got = triangles_through_fused(np, index, changed, n, chunk)
    assert np.array_equal(got[0], ref[0]) and got[1:] == ref[1:]


@needs_gpp
@emulation_only
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(2, 40), st.floats(0.05, 0.9), st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 32]),
       st.booleans(), st.sampled_from([1, -1]))
def test_emulated_through_adds_into_given_counts(emulated, n, p, seed, chunk, pending, sign):
    """Given the job's counts, the kernel adds ``sign`` at each triangle's corners in place (both index forms):
    the same array back, ``start + sign * corners`` in it, and nothing else changed; an update thereby
    allocates no vertex-sized array."""
    rng = np.random.default_rng(seed)
    s, d = np.nonzero(np.triu(rng.random((n, n)) < p, 1))
    und = undirected_keys(np, s, d)
    a, b = split_keys(und)
    live = und
    if pending and und.shape[0] >= 2:           # the last key added after the build, the first removed: pending
        index = SortedEdgeIndex.from_edges(np, np.concatenate([a[:-1], b[:-1]]), np.concatenate([b[:-1], a[:-1]]),
                                           min_pending=1 << 30)
        index.add(np.concatenate([a[-1:], b[-1:]]), np.concatenate([b[-1:], a[-1:]]))
        index.remove(np.concatenate([a[:1], b[:1]]), np.concatenate([b[:1], a[:1]]))
        assert index.pending
        live = und[1:]
    else:
        index = SortedEdgeIndex.from_edges(np, np.concatenate([a, b]), np.concatenate([b, a]))
    changed = live[rng.random(live.shape[0]) < rng.random()]
    ref = triangles_through(np, index, changed, n)
    start = rng.integers(0, 1 << 40, n + 3).astype(np.int64)      # a few slots past n: never touched
    counts = start.copy()
    got = triangles_through_fused(np, index, changed, n, chunk, counts=counts, sign=sign)
    assert got[0] is counts and got[1:] == ref[1:]
    assert np.array_equal(counts[:n], start[:n] + sign * ref[0]) and np.array_equal(counts[n:], start[n:])


@needs_gpp
@emulation_only
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(event_batches(max_batches=1, max_events=30), st.sampled_from([1, 2, 32]))
def test_emulated_static_job_matches_networkx(emulated, batches, chunk):
    h = Harness()
    h.apply(batches[0])
    job = Triangles(np, fused=True, fused_chunk=chunk)
    job.run_static(h.graph, h.vmap)
    check_triangles(job, h)


@needs_gpp
@emulation_only
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(event_batches(), st.sampled_from([1, 2, 32]))
def test_emulated_incremental_job_matches_networkx(emulated, batches, chunk):
    h = Harness()
    job = Triangles(np, fused=True, fused_chunk=chunk, **FORCE)
    job.run_static(h.graph, h.vmap)
    for events in batches:
        before = job.counts
        job.update(h.graph, h.apply(events), h.vmap)
        assert job.work["mode"] == "incremental" and job.work["fused"]
        # in place unless the vertex capacity grew: no vertex-sized array made per update
        assert job.counts is before or job.counts.shape[0] > before.shape[0]
        check_triangles(job, h)


@needs_gpp
@emulation_only
def test_emulated_long_stream_equals_array_path(emulated):
    """Fused incremental, fused static and the array program agree after every batch."""
    fused = Triangles(np, fused=True, fused_chunk=2, **FORCE)
    ref = Triangles(np, **FORCE)
    for n, (h, delta) in enumerate(long_stream(4, batches=25)):
        for job in (fused, ref):
            (job.run_static(h.graph, h.vmap) if n == 0 else job.update(h.graph, delta, h.vmap))
        fresh = Triangles(np, fused=True)
        fresh.run_static(h.graph, h.vmap)
        for other in (ref, fresh):
            assert outputs_equal(fused.output(h.vmap), other.output(h.vmap), "triangles")
            assert fused.total == other.total
        assert np.array_equal(fused.index.keys, ref.index.keys)
    check_triangles(fused, h)
    assert emulated.launches["tri_changed"] > 0


@needs_gpp
@emulation_only
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("lanes", [1, 4, 32])
def test_emulated_support_count_on_rmat(order, lanes, monkeypatch):
    """tri_support on R-MAT scale 10 (directed, with reciprocal pairs): counts equal the array program."""
    launcher = emu.HostLauncher(order, 7)
    monkeypatch.setattr(tk, "launcher", launcher)
    s, d = rmat_edges(np.random.default_rng(order + 11), 10, 8)
    s, d = np.concatenate([s, d[:500]]), np.concatenate([d, s[:500]])        # some reciprocal pairs
    ref, _ = count_static(np, 1 << 10, undirected_keys(np, s, d))
    got, info = tk.count_static_oriented(np, 1 << 10, s, d, lanes)
    assert np.array_equal(got, ref) and got.dtype == ref.dtype
    assert info["triangles"] * 3 == int(ref.sum()) > 0
    assert info["edges"] == len(undirected_keys(np, s, d))
    assert launcher.items["tri_support"] == info["edges"] * lanes


def _random_graph(n: int, p: float, seed: int):
    """``(src, dst, G)``: a random directed graph on ``n`` vertices (reciprocal pairs and self-loops
    included) and its undirected simple graph in networkx."""
    rng = np.random.default_rng(seed)
    s, d = np.nonzero(rng.random((n, n)) < p)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((int(a), int(b)) for a, b in zip(s, d) if a != b)
    return s, d, G


@needs_gpp
@emulation_only
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 40), st.floats(0.0, 0.9), st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 8, 32]))
def test_emulated_support_count_matches_networkx(emulated, n, p, seed, lanes):
    s, d, G = _random_graph(n, p, seed)
    exp = nx.triangles(G)
    got, info = tk.count_static_oriented(np, n, s, d, lanes)
    assert got.tolist() == [exp[v] for v in range(n)]
    assert info["triangles"] == sum(exp.values()) // 3 and info["edges"] == G.number_of_edges()


def test_support_count_rejects_bad_lanes():
    with pytest.raises(ValueError):
        tk.count_static_oriented(np, 3, np.array([0]), np.array([1]), lanes=3)


@needs_gpp
@emulation_only
def test_deferred_index_sorts_on_first_use(emulated):
    """The fused static job leaves its symmetric index unsorted until an update (or a checkpoint) reads it."""
    s, d = rmat_edges(np.random.default_rng(2), 8, 8)
    h = Harness()
    h.apply([(1, int(a), int(b), 1.0) for a, b in zip(s, d)])
    job = Triangles(np, fused=True)
    job.run_static(h.graph, h.vmap)
    assert isinstance(job.index, tk.DeferredSymmetricIndex) and job.index._edges is not None
    csr = h.graph.adjacency()
    assert np.array_equal(job.index.keys, symmetric_keys(np, row_ids(np, csr.offsets), csr.cols))
    assert job.index._edges is None
    check_triangles(job, h)


# -- the hashed static count (count_static_hashed: tri_hash_block / tri_hash_warp) ----------------------
HASHED_PARAMS = [
    {},                                                                    # the defaults
    {"light": 0, "block_slot_bits": 5},                   # every vertex block-wide; big N+(v) searched
    {"light": 256, "per_warp_task": 3, "table_shift": 1},      # every vertex per warp (out-degrees < 256)
    {"light": 4, "per_block_task": 5, "per_warp_task": 2, "table_shift": 2},
]


def oriented_reference(s, d, n):
    """The oriented CSR of the hashed count (rank = (directed degree, id)) and its suffix probes."""
    keep = s != d
    s, d = s[keep], d[keep]
    deg = np.bincount(s, minlength=n) + np.bincount(d, minlength=n)
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), deg))] = np.arange(n)
    a, b = np.minimum(rank[s], rank[d]), np.maximum(rank[s], rank[d])
    keys = np.unique((a << 32) | b)
    r, c = keys >> 32, keys & 0xFFFFFFFF
    off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=n), out=off[1:])
    out_deg = np.diff(off)
    probes = int(np.where(out_deg[c] > 0, off[r + 1] - np.arange(keys.shape[0]) - 1, 0).sum())
    return out_deg, probes


@needs_gpp
@emulation_only
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 45), st.floats(0.0, 0.9), st.integers(0, 2**32 - 1), st.sampled_from(HASHED_PARAMS))
def test_emulated_hashed_count_matches_networkx(emulated, n, p, seed, params):
    s, d, G = _random_graph(n, p, seed)
    exp = nx.triangles(G)
    got, info = tk.count_static_hashed(np, n, s, d, **params)
    assert got.tolist() == [exp[v] for v in range(n)] and got.dtype == np.int64
    assert info["triangles"] == sum(exp.values()) // 3 and info["edges"] == G.number_of_edges()
    assert info["probes"] == oriented_reference(s, d, n)[1]


@needs_gpp
@emulation_only
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("params", HASHED_PARAMS)
def test_emulated_hashed_count_on_rmat(order, params, monkeypatch):
    """R-MAT scale 10 with reciprocal pairs, self-loops and repeats: counts equal the array program's,
    the input as an edge list and as a CSR; both kernels ran, and the searched path where asked."""
    launcher = emu.HostLauncher(order, 17)
    monkeypatch.setattr(tk, "launcher", launcher)
    monkeypatch.setattr(tk, "block_launcher", launcher.blocks)
    s, d = rmat_edges(np.random.default_rng(order + 5), 10, 8)
    s = np.concatenate([s, d[:400], s[:50], np.arange(20)])                 # reverses, repeats, loops
    d = np.concatenate([d, s[:400], d[:50], np.arange(20)])
    n = 1 << 10
    ref, _ = count_static(np, n, undirected_keys(np, s, d))
    got, info = tk.count_static_hashed(np, n, s, d, **params)
    assert np.array_equal(got, ref) and info["triangles"] * 3 == int(ref.sum()) > 0
    out_deg, probes = oriented_reference(s, d, n)
    assert info["probes"] == probes and info["edges"] == len(undirected_keys(np, s, d))
    assert launcher.launches["tri_hash_block"] == launcher.launches["tri_hash_warp"] == 1
    if params.get("block_slot_bits") == 5:
        assert out_deg.max() > 16                        # some N+(v) is searched, not hashed
    assert out_deg.max() < 256
    keys = np.unique((s.astype(np.int64) << 32) | d)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys >> 32, minlength=n), out=offsets[1:])
    by_csr, info_csr = tk.count_static_hashed(np, n, None, keys & 0xFFFFFFFF, offsets=offsets, **params)
    assert np.array_equal(by_csr, ref) and info_csr["triangles"] == info["triangles"]


@needs_gpp
@emulation_only
def test_emulated_hashed_count_edge_cases(emulated):
    """No edges, only self-loops, one triangle with isolated vertices past it; bad parameters."""
    z = np.zeros(0, dtype=np.int64)
    assert tk.count_static_hashed(np, 5, z, z)[0].tolist() == [0] * 5
    loops = np.arange(4)
    got, info = tk.count_static_hashed(np, 4, loops, loops)
    assert got.tolist() == [0] * 4 and info == {"edges": 0, "probes": 0, "triangles": 0}
    got, info = tk.count_static_hashed(np, 9, np.array([5, 6, 7, 6]), np.array([6, 7, 5, 5]))
    assert got.tolist() == [0] * 5 + [1, 1, 1, 0] and info["triangles"] == 1 and info["edges"] == 3
    for bad in ({"light": 257}, {"per_block_task": 0}, {"block_slot_bits": 13}, {"light": 256, "table_shift": 2}):
        with pytest.raises(ValueError):
            tk.count_static_hashed(np, 9, np.array([5]), np.array([6]), **bad)


@needs_gpp
@emulation_only
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(4, 40), st.floats(0.1, 0.9), st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 32]))
def test_emulated_through_reads_pending_keys_without_compacting(emulated, n, p, seed, chunk):
    """With keys pending in the index (removed ones in ``dead``, added ones in ``extra``), the kernel runs on
    the changed edges' rows alone: the same triangles as the array program, and no compaction."""
    rng = np.random.default_rng(seed)
    s, d = np.nonzero(np.triu(rng.random((n, n)) < p, 1))
    und = undirected_keys(np, s, d)
    a, b = split_keys(und)
    first = rng.random(und.shape[0]) < 0.7
    index = SortedEdgeIndex.from_edges(np, np.concatenate([a[first], b[first]]), np.concatenate([b[first], a[first]]),
                                       min_pending=1 << 30)
    index.add(np.concatenate([a[~first], b[~first]]), np.concatenate([b[~first], a[~first]]))
    gone = und[first][rng.random(int(first.sum())) < 0.2]
    ga, gb = split_keys(gone)
    index.remove(np.concatenate([ga, gb]), np.concatenate([gb, ga]))
    live = np.setdiff1d(und, gone)
    changed = live[rng.random(live.shape[0]) < rng.random()]
    compactions = index.compactions
    got = triangles_through_fused(np, index, changed, n, chunk)
    assert index.compactions == compactions
    ref = triangles_through(np, index, changed, n)
    assert np.array_equal(got[0], ref[0]) and got[1:] == ref[1:]
    la, lb = split_keys(live)
    g = nx.Graph(list(zip(la.tolist(), lb.tolist())))
    assert got[1] == sum(1 for tri in nx.enumerate_all_cliques(g) if len(tri) == 3
                         and any((min(x, y) << 32 | max(x, y)) in set(changed.tolist())
                                 for x, y in ((tri[0], tri[1]), (tri[0], tri[2]), (tri[1], tri[2]))))
