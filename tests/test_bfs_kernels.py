"""Direction-optimizing BFS kernels: nvcc compiles them for sm_90; the host emulation and (on a GPU)
the real kernels give the array program's distances and the smallest valid parents, on plain and
Fixed-Length CSRs."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import bfs_emulation as emu
from tests.backends import HAS_GPU, cupy
from vinestream.algorithms import bfs_kernels as bk
from vinestream.algorithms.bfs import bfs_arrays, csr_expander
from vinestream.algorithms.compressed import FixedLengthCSR
from vinestream.structures.csr_types import csr_from_edges

needs_gpp = pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation")


def graphs(xp, n, src, dst, compressed):
    """Out- and in-adjacency CSRs over n rows (optionally Fixed-Length packed)."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    key = np.unique(src * n + dst)                           # simple graph, small test inputs
    s, d = key // n, key % n
    out = csr_from_edges(xp, xp.asarray(s), xp.asarray(d), None, n)
    inn = csr_from_edges(xp, xp.asarray(d), xp.asarray(s), None, n)
    if compressed:
        out, inn = FixedLengthCSR.from_csr(xp, out, n), FixedLengthCSR.from_csr(xp, inn, n)
    return s, d, out, inn


def reference(xp, n, out, sources):
    dist, parent, _, _ = bfs_arrays(xp, n, xp.asarray(sources), csr_expander(
        xp, out, column_at=getattr(out, "column_at", None)))
    return np.asarray(dist.get() if hasattr(dist, "get") else dist), \
        np.asarray(parent.get() if hasattr(parent, "get") else parent)


def check(xp, n, src, dst, sources, compressed, launch, alpha=bk.ALPHA, beta=bk.BETA, sorted_rows=False):
    s, d, out, inn = graphs(xp, n, src, dst, compressed)           # rows sorted: both parent passes apply
    dist, parent, _levels, info = bk.bfs_direction_optimizing(xp, out, inn, xp.asarray(sources), n,
                                                               alpha=alpha, beta=beta, launch=launch,
                                                               sorted_rows=sorted_rows)
    dist = dist.get() if hasattr(dist, "get") else dist
    parent = parent.get() if hasattr(parent, "get") else parent
    want_d, _ = reference(xp, n, out, sources)
    np.testing.assert_array_equal(dist, want_d)
    # the kernels' parent: the smallest in-neighbour one hop closer (-1 for sources and unreached)
    best = np.full(n, np.iinfo(np.int32).max, dtype=np.int64)
    closer = (dist[s] >= 0) & (dist[d] == dist[s] + 1)
    np.minimum.at(best, d[closer], s[closer])
    want_p = np.where(dist > 0, best, -1)
    np.testing.assert_array_equal(parent, want_p)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(zip(s.tolist(), d.tolist()))
    valid = [v for v in sources if v >= 0]
    exact = {}
    for v in valid:
        for w, k in nx.single_source_shortest_path_length(g, v).items():
            exact[w] = min(k, exact.get(w, k))
    assert {v: int(dist[v]) for v in range(n) if dist[v] >= 0} == exact
    return info


edges = st.integers(2, 60).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=4 * n),
    st.lists(st.integers(-1, n - 1), min_size=1, max_size=3)))


@needs_gpp
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edges, st.booleans(), st.sampled_from([0, 1, 2]), st.sampled_from([(14.0, 24.0), (0.01, 1e9), (1e9, 0.01)]),
       st.booleans())
def test_emulated_kernels_equal_the_array_program(case, compressed, order, switch, sorted_rows):
    """Top-down only, bottom-up from the second level on, and Beamer's switch, in three thread orders;
    parents by the full min pass and by the first match of sorted in-lists."""
    n, pairs, sources = case
    src = [a for a, _ in pairs]
    dst = [b for _, b in pairs]
    check(np, n, src, dst, sources, compressed, emu.HostLauncher(order, seed=n), *switch, sorted_rows=sorted_rows)


@needs_gpp
def test_emulated_search_switches_direction_on_a_power_law_graph():
    from vinestream.connectors.synthetic import rmat_simple_edges
    s, d = rmat_simple_edges(np, 12, 16, seed=2)
    n = 1 << 12
    s, d = np.concatenate([s, d]), np.concatenate([d, s])                 # undirected, as Graph500
    launch = emu.HostLauncher()
    info = check(np, n, s, d, [int(s[0])], False, launch)
    assert info["top_down_levels"] >= 1 and info["bottom_up_levels"] >= 1
    assert info["syncs"] <= info["top_down_levels"] + info["bottom_up_levels"] + 4   # one per level
    assert launch.launches["bfs_bottom_up"] == info["bottom_up_levels"]


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gpu_kernels_equal_the_array_program(compressed, seed):
    from vinestream.connectors.synthetic import rmat_simple_edges
    s, d = rmat_simple_edges(np, 12, 8, seed=seed)
    n = 1 << 12
    for sorted_rows in (False, True):
        check(cupy, n, s, d, [int(s[0]), int(d[3]), -1], compressed, None, sorted_rows=sorted_rows)
        rng = np.random.default_rng(seed)
        m = 3000
        check(cupy, m, rng.integers(0, m, 9000), rng.integers(0, m, 9000), [0, 17], compressed, None,
              sorted_rows=sorted_rows)
