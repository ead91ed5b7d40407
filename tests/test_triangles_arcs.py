"""The CPU static count from raw arcs (:func:`count_static_arcs`): rank-space ``L`` from two counting
sorts, suffix merges, corners; against networkx on arcs with duplicates, unsorted rows, self-loops,
reciprocal pairs and hubs, for any thread count and run size."""
from concurrent.futures import ThreadPoolExecutor

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.algo_support import IdentityMap, rmat_edges
from vinestream.algorithms import triangles as tri
from vinestream.algorithms.triangles import Triangles
from vinestream.structures.registry import build


def _reference(n, s, d):
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from((int(a), int(b)) for a, b in zip(s, d) if a != b)
    t = nx.triangles(g)
    return np.array([t[v] for v in range(n)], dtype=np.int64), g.number_of_edges()


def _raw_csr(rng, n, s, d):
    """An int32 CSR of the arcs as given: rows grouped, each row's entries in a random order (duplicates kept)."""
    order = np.lexsort((rng.random(s.shape[0]), s))          # grouped by source, shuffled within
    s, d = s[order], d[order]
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(s, minlength=n), out=indptr[1:])
    return indptr, d.astype(np.int32)


def _check(n, s, d, threads, chunk, seed=0):
    indptr, indices = _raw_csr(np.random.default_rng(seed), n, np.asarray(s, dtype=np.int64),
                               np.asarray(d, dtype=np.int64))
    counts, info = tri.count_static_arcs(n, indptr, indices, threads=threads, chunk=chunk)
    ref, edges = _reference(n, s, d)
    assert (counts == ref).all()
    assert info["triangles"] == int(ref.sum()) // 3 and info["edges"] == edges
    return counts, info


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=250),
       st.integers(1, 3), st.sampled_from([1, 5, 1 << 18]), st.integers(0, 2**32 - 1))
def test_arcs_with_duplicates_loops_and_unsorted_rows(n, pairs, threads, chunk, seed):
    s = np.array([a % n for a, _ in pairs], dtype=np.int64)
    d = np.array([b % n for _, b in pairs], dtype=np.int64)
    _check(n, s, d, threads, chunk, seed)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(6, 9), st.integers(1, 4), st.sampled_from([1, 64, 4096]),
       st.integers(1, 4))
def test_hubs_and_cliques(seed, scale, hubs, chunk, threads):
    """R-MAT plus hubs joined to every vertex (the highest ranks: their rows are short, their
    in-lists long) and a clique (long suffixes): each branch of the runs and corners."""
    rng = np.random.default_rng(seed)
    n = 1 << scale
    s, d = rmat_edges(rng, scale, 4)
    hub_ids = rng.choice(n, hubs, replace=False)
    hs = np.repeat(hub_ids, n)
    hd = np.tile(np.arange(n), hubs)
    clique = rng.choice(n, 12, replace=False)
    cs, cd = np.meshgrid(clique, clique)
    s = np.concatenate([s, hs, hd[::3], cs.ravel()])
    d = np.concatenate([d, hd, hs[::3], cd.ravel()])
    _check(n, s, d, threads, chunk, seed)


def test_merged_entries_are_the_suffixes_and_the_rows_t():
    """info["merged"] is sum over oriented edges s -> t of |row s after t| + |N+(t)| (only where neither
    is empty: an empty side closes nothing), with the order
    (arcs at the vertex, id): recomputed here from networkx's edges, and below the full-row merge."""
    rng = np.random.default_rng(3)
    n = 1 << 9
    s, d = rmat_edges(rng, 9, 8)
    _, info = _check(n, s, d, 2, 1000)
    keep = s != d
    arcs = np.bincount(s[keep], minlength=n) + np.bincount(d[keep], minlength=n)
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), arcs))] = np.arange(n)
    g = nx.Graph()
    g.add_edges_from((int(a), int(b)) for a, b in zip(s, d) if a != b)
    out = {v: sorted(rank[u] for u in g[v] if rank[u] > rank[v]) for v in g}
    by_rank = {int(rank[v]): row for v, row in out.items()}
    pairs = [(len(row) - i - 1, len(by_rank.get(t, []))) for row in by_rank.values() for i, t in enumerate(row)]
    merged = sum(a + b if a and b else 0 for a, b in pairs)   # nothing copied where a side is empty
    full = sum(len(row) ** 2 for row in by_rank.values()) + sum(b for _, b in pairs)
    assert 0 < info["merged"] == merged < full
    assert info["oriented"] >= 3 * int(keep.sum())


def test_symmetric_input_gives_the_same_counts():
    """count_static_scipy (the symmetric CSR's arcs, every edge twice) equals the count from the arcs."""
    s, d = rmat_edges(np.random.default_rng(5), 10, 8)
    n = 1 << 10
    g = build("csr", np, s, d, n)
    sym, rows = tri.symmetric_csr(g.adjacency(), n)
    one, info1 = tri.count_static_scipy(n, sym, rows, threads=2, chunk=333)
    two, info2 = _check(n, s, d, 1, 1 << 18)
    assert (one == two).all() and info1["triangles"] == info2["triangles"] and info1["edges"] == info2["edges"]


def test_job_index_and_work_after_the_arcs_count():
    """The job's static run: counts, work that counts the merges and building L, and the index (both
    orientations, no loops; A + A^T, built when it is first read)."""
    rng = np.random.default_rng(8)
    n = 1 << 9
    s, d = rmat_edges(rng, 9, 6)
    loops = np.arange(0, n, 7)
    s, d = np.concatenate([s, loops]), np.concatenate([d, loops])
    keys = np.unique((s.astype(np.int64) << 32) | d)
    s, d = keys >> 32, keys & 0xFFFFFFFF
    g = build("csr", np, s, d, n)
    job = Triangles(np)
    job.run_static(g, IdentityMap())
    ref, edges = _reference(n, s, d)
    assert (np.asarray(job.counts)[:n] == ref).all() and job.total == int(ref.sum()) // 3
    lo, hi = np.minimum(s, d), np.maximum(s, d)
    und = np.unique((lo[lo != hi] << 32) | hi[lo != hi])
    both = np.unique(np.concatenate([und, ((und & 0xFFFFFFFF) << 32) | (und >> 32)]))
    assert (np.asarray(job.index.keys) == both).all()
    assert job.work["undirected_edges"] == edges
    assert job.work["edges_touched"] >= 2 * edges + 3 * int(s.shape[0])


def test_int32_corner_counts_flush_into_int64(monkeypatch):
    """The threads' int32 corner counts flushed after every few wedges (as past 2**31) still add up."""
    monkeypatch.setattr(tri, "_FLUSH_WEDGES", 7)
    s, d = rmat_edges(np.random.default_rng(11), 9, 8)
    for threads in (1, 2):
        _check(1 << 9, s, d, threads, 50)


def test_index_keys_leave_the_shared_arcs_alone():
    """The background A + A^T reads the arcs the count reads: unsorted rows with duplicates are
    canonicalised on a copy, and the keys are both orientations of every edge, loops dropped."""
    rng = np.random.default_rng(9)
    n = 64
    s, d = rng.integers(0, n, 400), rng.integers(0, n, 400)
    s, d = np.concatenate([s, s[:40], np.arange(0, n, 9)]), np.concatenate([d, d[:40], np.arange(0, n, 9)])
    indptr, indices = _raw_csr(rng, n, s, d)
    before = indptr.copy(), indices.copy()
    keys, count = tri._symmetric_keys_of((indptr, indices), n)
    assert (indptr == before[0]).all() and (indices == before[1]).all()
    lo, hi = np.minimum(s, d), np.maximum(s, d)
    und = np.unique((lo[lo != hi] << 32) | hi[lo != hi])
    both = np.unique(np.concatenate([und, ((und & 0xFFFFFFFF) << 32) | (und >> 32)]))
    assert count == both.shape[0] and (keys == both).all()


def _oriented_reference(n, s, d, rank):
    """``L`` by sorting: the distinct (lower rank, higher rank) pairs of the arcs, self-loops dropped."""
    rs, rd = rank[s], rank[d]
    keep = rs != rd
    lo, hi = np.minimum(rs, rd)[keep], np.maximum(rs, rd)[keep]
    keys = np.unique((lo.astype(np.int64) << 32) | hi)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys >> 32, minlength=n), out=ptr[1:])
    return ptr, keys & 0xFFFFFFFF


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=250),
       st.integers(1, 5), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_oriented_in_ranges_equals_the_sorted_pairs(n, pairs, threads, part_arcs, seed):
    """L built in ranges of rows (one a thread, sorted apart, then merged pairwise: an edge whose two arcs
    fall in different ranges is found twice) is the sorted distinct (lower, higher) rank pairs, its values
    ones, whatever the ranges; and the count from it equals networkx."""
    s = np.array([a % n for a, _ in pairs], dtype=np.int64)
    d = np.array([b % n for _, b in pairs], dtype=np.int64)
    rng = np.random.default_rng(seed)
    indptr, indices = _raw_csr(rng, n, s, d)
    rank = rng.permutation(n).astype(np.int32)
    saved = tri._ORIENT_PART_ARCS
    tri._ORIENT_PART_ARCS = part_arcs              # ranges of a few arcs (the default: 2**16 at least)
    try:
        with ThreadPoolExecutor(threads) as pool:
            ptr, cols, ones, moved = tri._oriented_from_arcs(tri._scipy_kernels(), n, indptr, indices, rank,
                                                             threads, pool.map)
        ref_ptr, ref_cols = _oriented_reference(n, s, d, rank)
        assert (ptr == ref_ptr).all() and (cols == ref_cols).all()
        assert (ones == 1).all() and ones.shape == cols.shape
        assert moved >= 3 * int(s.shape[0]) + 2 * int(cols.shape[0])
        _check(n, s, d, threads, 7, seed)
    finally:
        tri._ORIENT_PART_ARCS = saved


def test_oriented_ranges_on_rmat_with_reciprocal_arcs():
    """Large enough for the default ranges (2 threads, 2**16 arcs each at least): the same L as one range,
    and the counts of networkx."""
    rng = np.random.default_rng(12)
    n = 1 << 13
    s, d = rmat_edges(rng, 13, 16)
    s, d = np.concatenate([s, d[::2]]), np.concatenate([d, s[::2]])     # half the arcs reciprocated
    assert s.shape[0] >= 2 * tri._ORIENT_PART_ARCS
    indptr, indices = _raw_csr(rng, n, s, d)
    rank = tri.degree_order(np.bincount(s, minlength=n) + np.bincount(d, minlength=n))
    kernels = tri._scipy_kernels()
    one = tri._oriented_from_arcs(kernels, n, indptr, indices, rank, 1, map)
    with ThreadPoolExecutor(2) as pool:
        two = tri._oriented_from_arcs(kernels, n, indptr, indices, rank, 2, pool.map)
    ref_ptr, ref_cols = _oriented_reference(n, s, d, rank)
    for ptr, cols, ones, _ in (one, two):
        assert (ptr == ref_ptr).all() and (cols == ref_cols).all() and (ones == 1).all()
    assert two[3] > one[3]                      # the merge of the ranges is counted
    _check(n, s, d, 2, 1 << 14)


def test_many_copies_of_an_arc_in_two_ranges():
    """An edge given by 128 arcs u -> v in one range and 128 arcs v -> u in another (int8 copy counts that
    would add up to 256 = 0 in the ranges' sum, which keeps non-zero values only) stays in L."""
    n = 6
    s = np.array([0] * 128 + [1] * 128 + [1, 2, 3, 4, 5, 3], dtype=np.int64)
    d = np.array([1] * 128 + [0] * 128 + [2, 0, 4, 5, 3, 0], dtype=np.int64)
    saved = tri._ORIENT_PART_ARCS
    tri._ORIENT_PART_ARCS = 8
    try:
        for threads in (2, 3, 4):
            indptr, indices = _raw_csr(np.random.default_rng(threads), n, s, d)
            with ThreadPoolExecutor(threads) as pool:
                ptr, cols, ones, _ = tri._oriented_from_arcs(tri._scipy_kernels(), n, indptr, indices,
                                                             np.arange(n, dtype=np.int32), threads, pool.map)
            ref_ptr, ref_cols = _oriented_reference(n, s, d, np.arange(n))
            assert (ptr == ref_ptr).all() and (cols == ref_cols).all() and (ones == 1).all()
            _check(n, s, d, threads, 3)
    finally:
        tri._ORIENT_PART_ARCS = saved
