"""The scipy row-merge static count (and its NumPy fallback) against networkx, and the job's index
keeping its compactions (passes over all keys) off small batches."""
import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.algo_support import Harness, IdentityMap, check_triangles, event_batches, rmat_edges
from vinestream.algorithms import triangles as tri
from vinestream.algorithms.edge_index import SortedEdgeIndex
from vinestream.algorithms.triangles import TriangleIndex, Triangles
from vinestream.structures.array_ops import unique_sorted
from vinestream.structures.registry import build


def _reference(n, s, d):
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from((int(a), int(b)) for a, b in zip(s, d) if a != b)
    t = nx.triangles(g)
    return np.array([t[v] for v in range(n)], dtype=np.int64)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 40), st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=200),
       st.integers(1, 3), st.sampled_from([1, 7, 1 << 22]))
def test_scipy_counts_match_networkx(n, pairs, threads, chunk):
    """Self-loops, reciprocal pairs, unsorted rows and isolated vertices; any thread count."""
    pairs = [(a % n, b % n) for a, b in pairs]
    s = np.array([a for a, _ in pairs], dtype=np.int64)
    d = np.array([b for _, b in pairs], dtype=np.int64)
    keep = s != d
    g = build("csr", np, s[keep], d[keep], n)
    csr = g.adjacency()
    cap = n + 3                                       # capacity past the CSR's rows
    sym, rows = tri.symmetric_csr(csr, cap)
    counts, info = tri.count_static_scipy(cap, sym, rows, threads=threads, chunk=chunk)
    ref = _reference(n, s, d)
    assert (counts[:n] == ref).all() and (counts[n:] == 0).all()
    assert info["triangles"] == int(ref.sum()) // 3
    assert info["edges"] == sym.nnz // 2


def test_scipy_equals_array_program_on_rmat():
    s, d = rmat_edges(np.random.default_rng(4), 11, 8)
    n = 1 << 11
    g = build("csr", np, s, d, n)
    sym, rows = tri.symmetric_csr(g.adjacency(), n)
    one, info1 = tri.count_static_scipy(n, sym, rows, threads=1)
    two, info2 = tri.count_static_scipy(n, sym, rows, threads=2, chunk=1000)
    ref, _ = tri.count_static(np, n, tri.undirected_keys(np, s, d))
    assert (one == ref).all() and (two == ref).all() and int(ref.sum()) > 1000
    assert info1 == info2 and info1["merged"] > info1["edges"]


@settings(max_examples=25, deadline=None)
@given(event_batches(max_batches=3, max_events=30))
def test_job_without_scipy_uses_the_array_program(batches):
    """The NumPy fallback (no scipy) gives the same counts, statically and incrementally."""
    h = Harness()
    h.apply(batches[0])
    real = tri._scipy_sparse
    tri._scipy_sparse = lambda: None
    try:
        job = Triangles(np, fallback_fraction=1e9)
        job.run_static(h.graph, h.vmap)
        check_triangles(job, h)
        for events in batches[1:]:
            job.update(h.graph, h.apply(events), h.vmap)
            check_triangles(job, h)
    finally:
        tri._scipy_sparse = real


def _keys(rng, k, n=1 << 16):
    return np.unique((rng.integers(0, n, k).astype(np.int64) << 32) | rng.integers(0, n, k))


def test_small_batch_after_a_large_one_does_not_compact():
    """SortedEdgeIndex compacts on the small batch that follows a large one; TriangleIndex does not,
    and reads the same set."""
    rng = np.random.default_rng(0)
    base = _keys(rng, 200_000)
    big = _keys(rng, 20_000)                     # 10% of the keys: a large batch
    small = _keys(rng, 10)
    for cls, compacts in ((SortedEdgeIndex, True), (TriangleIndex, False)):
        ix = cls(np, base.copy())
        ix.add_keys(big)
        before = ix.compactions
        ix.take_work()
        ix.add_keys(small)
        assert (ix.compactions > before) == compacts
        if not compacts:
            assert ix.take_work() < base.shape[0] // 4      # no pass over the index
        want = np.union1d(np.union1d(base, big), small)
        assert ix.contains_keys(want).all()
        assert (ix.keys == want).all()


def test_many_small_batches_compact_at_the_pending_bound():
    rng = np.random.default_rng(1)
    base = _keys(rng, 50_000)
    ix = TriangleIndex(np, base.copy())
    added = [base]
    for _ in range(400):
        batch = _keys(rng, 40)                   # < 0.1% of the keys each
        ix.add_keys(batch)
        added.append(batch)
        assert ix.pending <= max(ix.min_pending, ix.max_pending_fraction * ix.base.shape[0]) + 40
    assert (ix.keys == np.unique(np.concatenate(added))).all()      # the union, taken once


def test_small_update_after_a_large_one_touches_no_whole_index():
    """The job's work on a 0.01% batch right after a 5% batch stays far below |E| (index included)."""
    from tests.algo_support import work_graph_and_delta
    from vinestream.structures.delta import apply_delta
    g, big = work_graph_and_delta(scale=13, fraction=0.05, seed=2)
    vm = IdentityMap()
    job = Triangles(np, fallback_fraction=1.0)
    job.run_static(g, vm)
    edges = job.work["undirected_edges"]
    apply_delta(g, big)
    job.update(g, big, vm)
    assert job.work["mode"] == "incremental"
    from vinestream.stream.bench.algorithms import random_delta
    small = random_delta(np, g, max(2, g.num_edges // 10_000), seed=5)
    apply_delta(g, small)
    compactions, pending = job.index.compactions, job.index.pending
    job.update(g, small, vm)
    assert job.index.compactions == compactions
    # searches of the batch (k log E) plus rewriting the pending arrays it changes: no pass over the index
    keys = 2 * job.work["changed_undirected"]
    assert job.work["index_edges"] <= 3 * pending + 64 * keys * int(np.log2(2 * edges))
    assert job.work["index_edges"] < edges // 2
    fresh = Triangles(np)
    fresh.run_static(g, vm)
    assert job.total == fresh.total and (job.counts[: fresh.counts.shape[0]] == fresh.counts).all()


def test_small_batches_after_a_large_one_never_compact():
    """A 10% batch leaves at most |base| / 32 pending, so the next ~90 batches of 0.1% run without a pass."""
    rng = np.random.default_rng(2)
    base = _keys(rng, 200_000)
    ix = TriangleIndex(np, base.copy())
    added = [base, big := _keys(rng, 20_000)]
    ix.add_keys(big)
    assert ix.pending <= ix.base.shape[0] // 32
    compactions = ix.compactions
    for _ in range(80):
        batch = _keys(rng, 200)
        ix.add_keys(batch)
        added.append(batch)
    assert ix.compactions == compactions
    assert (ix.keys == np.unique(np.concatenate(added))).all()      # the union, taken once


def test_degree_order_is_the_rank_of_degree_then_id():
    """The 16-bit radix argsort with the clipped tail re-sorted equals argsort of (degree, id)."""
    rng = np.random.default_rng(7)
    for high in (40, 70_000, 1 << 20):                # below, across and far past the 16-bit clip
        deg = rng.integers(0, high, 5_000).astype(np.int32)
        deg[rng.integers(0, 5_000, 50)] = 65535       # ties exactly at the clip
        rank = tri.degree_order(deg)
        ref = np.empty(deg.shape[0], dtype=np.int64)
        ref[np.argsort((deg.astype(np.int64) << 32) | np.arange(deg.shape[0]), kind="stable")] = np.arange(5_000)
        assert (rank == ref).all()


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(5, 9), st.sampled_from([1, 3, 64]), st.integers(1, 4))
def test_runs_threads_and_corner_buffers_do_not_change_counts(seed, scale, chunk, threads):
    """R-MAT graphs (hubs, reciprocal pairs, loops) with tiny runs, so that each thread's corner
    buffer fills and is counted many times, against networkx per vertex and in total."""
    s, d = rmat_edges(np.random.default_rng(seed), scale, 6)
    n = 1 << scale
    loops = np.arange(0, n, 5)
    s, d = np.concatenate([s, loops, d[:50]]), np.concatenate([d, loops, s[:50]])   # loops, reciprocal arcs
    keys = unique_sorted(np, (s.astype(np.int64) << 32) | d)
    s, d = keys >> 32, keys & 0xFFFFFFFF               # distinct arcs for the CSR
    g = build("csr", np, s, d, n)
    sym, rows = tri.symmetric_csr(g.adjacency(), n)
    counts, info = tri.count_static_scipy(n, sym, rows, threads=threads, chunk=chunk)
    ref = _reference(n, s, d)
    assert (counts == ref).all()
    assert info["triangles"] == int(ref.sum()) // 3
    assert info["edges"] == sym.nnz // 2 and not (rows == sym.indices).any()


def test_without_the_library_kernels_the_job_uses_the_array_program():
    """A scipy without the compiled kernels this path calls falls back to the array program."""
    s, d = rmat_edges(np.random.default_rng(2), 8, 6)
    real = tri._scipy_kernels
    g = build("csr", np, s, d, 1 << 8)
    ref = _reference(1 << 8, s, d)
    tri._scipy_kernels = lambda: None
    try:
        assert tri.symmetric_csr(g.adjacency(), 1 << 8) is None
        job = Triangles(np)
        job.run_static(g, IdentityMap())
        assert (np.asarray(job.counts)[: 1 << 8] == ref).all() and job.total == int(ref.sum()) // 3
        assert "merged" not in job.work and job.work["edges_touched"] > 0
    finally:
        tri._scipy_kernels = real


def test_index_is_built_by_the_first_update_that_reads_it():
    """The CPU static run counts from the arcs and leaves the index to the first update: the static run's work
    has no index keys, the first update's has the build (both orientations of every undirected edge), the
    next update's does not; the index then equals one built from the graph, and the counts networkx's."""
    from vinestream.stream.bench.algorithms import random_delta
    from vinestream.structures.delta import apply_delta
    s, d = rmat_edges(np.random.default_rng(2), 10, 8)
    g = build("csr", np, s, d, 1 << 10)
    job = Triangles(np)
    job.run_static(g, IdentityMap())
    assert isinstance(job.index, tri.DeferredArcsIndex) and job.work["index_edges"] == 0
    und = int(job.work["undirected_edges"])
    works = []
    for seed in (1, 2):
        delta = random_delta(np, g, 8, seed)
        apply_delta(g, delta)
        job.update(g, delta, IdentityMap())
        works.append(job.work["index_edges"])
        csr = g.adjacency()
        rows = np.repeat(np.arange(csr.offsets.shape[0] - 1), np.diff(csr.offsets))
        want = _reference(1 << 10, rows, csr.cols)
        assert np.array_equal(np.asarray(job.counts)[: 1 << 10], want) and job.total == int(want.sum()) // 3
    assert works[0] >= 2 * und > works[1]
    keep = rows != csr.cols
    want = SortedEdgeIndex.from_edges(np, np.concatenate([rows[keep], csr.cols[keep]]),
                                      np.concatenate([csr.cols[keep], rows[keep]]))
    assert np.array_equal(job.index.keys, want.keys)
