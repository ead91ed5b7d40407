"""The counting-sort transpose kernels (algorithms/transpose_kernels): nvcc compiles them for sm_90; the host
emulation (threads forward, reversed, shuffled) and, on a GPU, the real kernels give the array program's in-CSR
(offsets and every row's sources ascending) on random graphs whose rows reach every size class; the BFS job
built on them gives networkx's distances, statically and through updates, and counts the transpose's edges."""
from __future__ import annotations

import os
import subprocess

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import bfs_emulation as bemu
from tests import transpose_emulation as emu
from tests.algo_support import Harness, check_bfs, event_batches
from tests.backends import HAS_GPU, cupy
from tests.test_kernels_compile import NVCC
from vinestream.algorithms import transpose_kernels as tk
from vinestream.algorithms.bfs import BFS
from vinestream.algorithms.edge_index import transpose
from vinestream.stream.bench.algorithms import IdentityVertexMap
from vinestream.structures.csr_types import CSR
from vinestream.structures.registry import build

needs_gpp = pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation")
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")


@pytest.mark.skipif(NVCC is None, reason="needs nvcc")
def test_source_compiles_for_sm90(tmp_path):
    cu = tmp_path / "transpose.cu"
    cu.write_text(tk.SOURCE)
    res = subprocess.run([NVCC, "-arch=sm_90", "-Werror", "all-warnings", "-c", "-o", os.devnull, str(cu)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    for kernel in tk.KERNELS:
        assert f"void {kernel}(" in tk.SOURCE


def out_csr(xp, n, src, dst, dedup=True, shuffle_rows=None):
    """An out-CSR over n rows of the pairs (rows grouped by source); ``dedup`` False keeps repeated pairs,
    ``shuffle_rows`` (a seed) leaves each row's columns in a random order."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    if dedup:
        key = np.unique(src * n + dst)
        src, dst = key // n, key % n
    order = np.lexsort((dst, src))
    if shuffle_rows is not None:
        order = np.lexsort((np.random.default_rng(shuffle_rows).random(src.shape[0]), src))
    src, dst = src[order], dst[order]
    off = np.zeros(n + 1, dtype=np.int64)
    off[1:] = np.cumsum(np.bincount(src, minlength=n))
    return CSR(offsets=xp.asarray(off), cols=xp.asarray(dst.astype(np.int32)), weights=None)


def reference(n, csr, rows):
    """The in-CSR as the array program gives it (a sort of the reversed keys), on the host."""
    host = CSR(offsets=_np(csr.offsets), cols=_np(csr.cols), weights=None)
    return transpose(np, host, rows, use_library=False)


def _np(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def assert_same(got, want):
    np.testing.assert_array_equal(_np(got.offsets), want.offsets)
    np.testing.assert_array_equal(_np(got.cols), want.cols)
    assert _np(got.offsets).dtype == np.int64 and _np(got.cols).dtype == np.int32


# rows skewed towards a few destinations (so some in-rows are long), repeats and extra rows optional
graphs = st.integers(1, 90).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=6 * n),
    st.lists(st.integers(0, min(n - 1, 3)), max_size=3 * n), st.integers(0, 3), st.booleans(), st.booleans()))
CLASSES = [(2, 4, 8), (3, 3, 40), (1, 16, 16), (tk.SMALL, tk.MEDIUM, tk.LARGE)]


@needs_gpp
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs, st.sampled_from([0, 1, 2]), st.sampled_from(CLASSES))
def test_emulated_kernels_equal_the_array_program(case, order, classes):
    """Random graphs (extra hub in-edges, extra rows, rows unsorted or with repeats) in three thread orders,
    with size classes low enough that the thread sort, both block sorts and the hubs' library sort run."""
    n, pairs, hub_srcs, extra_rows, dedup, shuffled = case
    src = [a for a, _ in pairs] + list(range(len(hub_srcs)))
    dst = [b for _, b in pairs] + hub_srcs
    src = [s % n for s in src]
    csr = out_csr(np, n, src, dst, dedup=dedup, shuffle_rows=1 if shuffled else None)
    small, medium, large = classes
    launch = emu.HostLauncher(order, seed=5)
    parts = {}
    got = tk.transpose_fused(np, csr, n + extra_rows, small=small, medium=medium, large=large, launch=launch,
                             launch_blocks=launch.blocks, parts=parts)
    assert_same(got, reference(n, csr, n + extra_rows))
    deg = np.diff(got.offsets)
    assert parts == {"medium_rows": int(((deg > small) & (deg <= medium)).sum()),
                     "large_rows": int(((deg > medium) & (deg <= large)).sum()),
                     "huge_rows": int((deg > large).sum())}


@needs_gpp
def test_emulated_kernels_on_a_power_law_graph_reach_every_class():
    from vinestream.connectors.synthetic import rmat_simple_edges
    s, d = rmat_simple_edges(np, 10, 8, seed=3)
    n = 1 << 10
    csr = out_csr(np, n, s, d)
    launch = emu.HostLauncher(2, seed=11)
    parts = {}
    got = tk.transpose_fused(np, csr, n, small=4, medium=16, large=64, launch=launch, launch_blocks=launch.blocks,
                             parts=parts)
    assert_same(got, reference(n, csr, n))
    assert min(parts.values()) > 0, parts
    assert launch.launches == {"tp_count": 1, "tp_scatter": 1, "tp_rows": 1, "tp_sort_block": 2}


@needs_gpp
def test_unsorted_rows_hold_the_same_sources():
    """``sort_rows=False`` stops after the scatter: the same offsets, every row the same set of sources."""
    rng = np.random.default_rng(4)
    n = 300
    csr = out_csr(np, n, rng.integers(0, n, 3000), (rng.zipf(1.4, 3000) - 1) % n)
    launch = emu.HostLauncher(2, seed=9)
    got = tk.transpose_fused(np, csr, n, sort_rows=False, launch=launch, launch_blocks=launch.blocks)
    want = reference(n, csr, n)
    np.testing.assert_array_equal(got.offsets, want.offsets)
    rows = np.repeat(np.arange(n), np.diff(want.offsets))
    assert sorted(zip(rows.tolist(), got.cols.tolist())) == list(zip(rows.tolist(), want.cols.tolist()))
    assert (got.cols != want.cols).any()          # the atomics' order is not the sorted one: the sort matters
    assert "tp_rows" not in launch.launches


@needs_gpp
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs, st.sampled_from([0, 1, 2]))
def test_emulated_order_check_finds_every_unsorted_row(case, order):
    """``rows_sorted``: True exactly when no row holds a descending pair (a descent between rows is none)."""
    n, pairs, hub_srcs, _, dedup, shuffled = case
    src = [a % n for a, _ in pairs] + [i % n for i in range(len(hub_srcs))]
    dst = [b for _, b in pairs] + hub_srcs
    csr = out_csr(np, n, src, dst, dedup=dedup, shuffle_rows=7 if shuffled else None)
    rows = np.repeat(np.arange(n), np.diff(csr.offsets))
    same_row = rows[1:] == rows[:-1]
    want = not bool((same_row & (csr.cols[1:] < csr.cols[:-1])).any())
    assert tk.rows_sorted(np, csr.offsets, csr.cols, launch=emu.HostLauncher(order, seed=2)) == want


def test_size_classes_are_checked():
    csr = out_csr(np, 3, [0, 1], [1, 2])
    for bad in ((0, 4, 8), (33, 40, 50), (4, 2, 8), (2, 4, tk.LARGE + 1)):
        with pytest.raises(ValueError):
            tk.transpose_fused(np, csr, 3, small=bad[0], medium=bad[1], large=bad[2], launch=lambda *a: None)


def emulated_job(sources, order=0, **kw):
    launch = emu.HostLauncher(order, seed=3)
    return BFS(np, sources=sources, fused=True, library_bfs=False, launch=bemu.HostLauncher(order, seed=7),
               fused_transpose=True, transpose_launch=(launch, launch.blocks), fallback_fraction=1e9, **kw), launch


@needs_gpp
@pytest.mark.parametrize("order", [0, 2])
@settings(max_examples=20, deadline=None)
@given(event_batches(), st.lists(st.integers(0, 9), min_size=1, max_size=2))
def test_bfs_job_on_the_emulated_transpose_matches_networkx(order, batches, sources):
    """The job's static run and its index rebuilds take the kernels' transpose; exact after every batch."""
    h = Harness()
    job, launch = emulated_job(sources, order)
    for i, events in enumerate(batches):
        delta = h.apply(events)
        if i == 0:
            job.run_static(h.graph, h.vmap)
            assert launch.launches.get("tp_count", 0) == (1 if h.graph.num_edges else 0)
        else:
            job.update(h.graph, delta, h.vmap)
        check_bfs(job, h, sources)


@needs_gpp
def test_static_job_counts_the_transpose_and_uses_the_kernels():
    from vinestream.connectors.synthetic import rmat_simple_edges
    s, d = rmat_simple_edges(np, 9, 8, seed=1)
    n = 1 << 9
    g = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    job, launch = emulated_job([int(s[0])])
    plain = BFS(np, sources=[int(s[0])], fused=True, library_bfs=False, launch=bemu.HostLauncher(0, seed=7),
                fused_transpose=False)
    job.run_static(g, vm)
    plain.run_static(g, vm)
    assert launch.launches["tp_count"] == 1
    np.testing.assert_array_equal(job.dist, plain.dist)
    np.testing.assert_array_equal(job.parent, plain.parent)
    assert job.work["index_edges"] == g.num_edges == plain.work["index_edges"]
    want = reference(n, g.adjacency(), n)
    np.testing.assert_array_equal(job.in_edges.cols, want.cols)
    np.testing.assert_array_equal(job.in_edges.offsets, want.offsets)
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(s.tolist(), d.tolist()))
    exact = nx.single_source_shortest_path_length(G, int(s[0]))
    assert {v: int(job.dist[v]) for v in range(n) if job.dist[v] >= 0} == exact


# -- on a GPU ------------------------------------------------------------------------------------------
@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gpu_kernels_equal_the_array_program(seed):
    """Random and R-MAT graphs, every size class (low thresholds and the defaults); a graph whose hubs pass
    LARGE in-edges (the library sort of their keys)."""
    from vinestream.connectors.synthetic import rmat_simple_edges
    rng = np.random.default_rng(seed)
    cases = [(3000, rng.integers(0, 3000, 9000), rng.integers(0, 3000, 9000))]
    s, d = rmat_simple_edges(np, 14, 8, seed=seed)
    cases.append((1 << 14, s, d))
    n = 40000                                          # two hubs of 20,000 and 13,000 in-edges
    hs = np.concatenate([rng.permutation(n)[:20000], rng.permutation(n)[:13000], rng.integers(0, n, 50000)])
    hd = np.concatenate([np.full(20000, 7), np.full(13000, n - 1), rng.integers(0, n, 50000)])
    cases.append((n, hs, hd))
    for n, s, d in cases:
        for shuffled in (False, True):
            csr = out_csr(cupy, n, s, d, shuffle_rows=seed if shuffled else None)
            want = reference(n, csr, n + 2)
            for classes in ((2, 4, 8), (tk.SMALL, tk.MEDIUM, tk.LARGE)):
                parts = {}
                got = tk.transpose_fused(cupy, csr, n + 2, small=classes[0], medium=classes[1], large=classes[2],
                                         parts=parts)
                assert_same(got, want)
            info = {}
            assert_same(transpose(cupy, csr, n + 2, fused=True, info=info), want)
            assert info["form"] == "kernels"
            assert tk.rows_sorted(cupy, csr.offsets, csr.cols) == (not shuffled or _rows_sorted(csr))
    assert parts["huge_rows"] == 2


def _rows_sorted(csr):
    off, cols = _np(csr.offsets), _np(csr.cols)
    rows = np.repeat(np.arange(off.shape[0] - 1), np.diff(off))
    return not bool(((rows[1:] == rows[:-1]) & (cols[1:] < cols[:-1])).any())


@pytest.mark.gpu
@needs_gpu
def test_gpu_library_transpose_checked_by_the_kernel(monkeypatch):
    """From LIBRARY_TRANSPOSE_MIN_EDGES_GPU edges (lowered here) the fused form is cuSPARSE's conversion whose
    rows' order the kernel checks (sorted only if unsorted): the array program's in-CSR either way."""
    from vinestream.algorithms import edge_index
    from vinestream.connectors.synthetic import rmat_simple_edges
    monkeypatch.setattr(edge_index, "LIBRARY_TRANSPOSE_MIN_EDGES_GPU", 1)
    s, d = rmat_simple_edges(np, 14, 8, seed=4)
    n = 1 << 14
    for shuffled in (False, True):
        csr = out_csr(cupy, n, s, d, shuffle_rows=3 if shuffled else None)
        want = reference(n, csr, n + 1)
        info = {}
        assert_same(transpose(cupy, csr, n + 1, fused=True, info=info), want)
        assert info["form"].startswith("library")
        info = {}
        assert_same(transpose(cupy, csr, n + 1, fused=False, info=info), want)
        assert info["form"] == "library, rows sorted"


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("seed", [0, 1])
def test_gpu_bfs_job_distances_equal_networkx(seed):
    """The job on CuPy (fused transpose and kernels, the default) on random directed graphs: networkx's
    distances, valid parents, the same state as the job on the library transpose; then batches, exact."""
    rng = np.random.default_rng(seed)
    n = 2000
    s, d = rng.integers(0, n, 12000), rng.integers(0, n, 12000)
    keep = s != d
    s, d = s[keep], d[keep]
    key = np.unique(s * n + d)
    s, d = key // n, key % n
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), n)
    vm = IdentityVertexMap(cupy)
    job = BFS(cupy, sources=[0, 5])
    lib = BFS(cupy, sources=[0, 5], fused_transpose=False)
    assert job.fused_transpose and not lib.fused_transpose
    job.run_static(g, vm)
    lib.run_static(g, vm)
    dist, parent = job.dist.get(), job.parent.get()
    np.testing.assert_array_equal(dist, lib.dist.get())
    np.testing.assert_array_equal(parent, lib.parent.get())
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(s.tolist(), d.tolist()))
    exact = {}
    for v in (0, 5):
        for w, k in nx.single_source_shortest_path_length(G, v).items():
            exact[w] = min(k, exact.get(w, k))
    assert {v: int(dist[v]) for v in range(n) if dist[v] >= 0} == exact
    far = np.nonzero(dist > 0)[0]
    assert (dist[parent[far]] == dist[far] - 1).all()
    assert all(G.has_edge(int(parent[v]), int(v)) for v in far)
    h = Harness(cupy)
    job = BFS(cupy, sources=[0, 3], fallback_fraction=1e9)
    for i, events in enumerate(_stream(seed)):
        delta = h.apply(events)
        job.run_static(h.graph, h.vmap) if i == 0 else job.update(h.graph, delta, h.vmap)
        check_bfs(job, h, [0, 3])


def _stream(seed, batches=8):
    from tests.algo_support import ADD_EDGE, DELETE_EDGE
    rng = np.random.default_rng(seed)
    live = set()
    out = []
    for b in range(batches):
        events = []
        for _ in range(300 if b == 0 else 25):
            u, v = (int(x) for x in rng.integers(0, 60, 2))
            if live and rng.random() < 0.3:
                u, v = sorted(live)[int(rng.integers(0, len(live)))]
                events.append((DELETE_EDGE, u, v, 1.0))
                live.discard((u, v))
            else:
                events.append((ADD_EDGE, u, v, 1.0))
                live.add((u, v))
        out.append(events)
    return out
