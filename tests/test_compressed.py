"""Fixed-Length bit-packed CSR: exact decoding, BFS on it equal to BFS on the plain CSR, fewer bytes."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.algo_support import backends, rmat_edges
from vinestream.algorithms.bfs import bfs_arrays, csr_expander
from vinestream.algorithms.compressed import FixedLengthCSR, bfs_compressed, bits_for, compression_report
from vinestream.structures.csr_types import csr_from_edges


def test_bits_for():
    assert [bits_for(n) for n in (1, 2, 3, 4, 5, 1024, 1025, 2**31)] == [1, 1, 2, 2, 3, 10, 11, 31]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2**31 - 1).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.integers(0, n - 1), max_size=200))))
def test_decode_roundtrip(case):
    n, cols = case
    cols = np.asarray(cols, dtype=np.int32)
    offsets = np.array([0, cols.shape[0]], dtype=np.int64)
    from vinestream.structures.csr_types import CSR
    fl = FixedLengthCSR.from_csr(np, CSR(offsets, cols, None), num_vertices=n)
    assert fl.bits == bits_for(n)
    assert np.array_equal(fl.decode(), cols)
    if cols.shape[0]:
        pos = np.arange(cols.shape[0])[::-1].copy()
        assert np.array_equal(fl.column_at(pos), cols[pos])


@pytest.mark.parametrize("xp", backends())
def test_bfs_on_compressed_equals_plain(xp):
    s, d = rmat_edges(np.random.default_rng(2), 11, 8)
    n = 1 << 11
    csr = csr_from_edges(xp, xp.asarray(s), xp.asarray(d), None, n)
    fl = FixedLengthCSR.from_csr(xp, csr, n)
    sources = xp.asarray([0, 5], dtype=np.int64)
    d1, p1, lv1, e1 = bfs_arrays(xp, n, sources, csr_expander(xp, csr))
    d2, p2, lv2, e2 = bfs_compressed(xp, fl, sources, n)
    assert bool((d1 == d2).all()) and (lv1, e1) == (lv2, e2)
    # parents: any in-neighbour one hop closer (which one may differ between runs on a GPU)
    dist = np.asarray(d1.get() if hasattr(d1, "get") else d1)
    keys = set(zip(s.tolist(), d.tolist()))
    for par in (p1, p2):
        par = np.asarray(par.get() if hasattr(par, "get") else par)
        reached = np.flatnonzero(dist > 0)
        assert all((int(par[v]), int(v)) in keys and dist[par[v]] == dist[v] - 1 for v in reached)
        assert bool((par[dist <= 0] == -1).all())
    assert int((d1 >= 0).sum()) > n // 4
    report = compression_report(xp, csr, n)
    assert report["bits"] == 11
    assert report["compressed_column_bytes"] < report["plain_column_bytes"] * 11 / 32 + 8
