"""vinestream.connectors.synthetic: R-MAT, deletion mixing, random events."""
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from vinestream.connectors.synthetic import mix_deletions, random_events, rmat_edges
from vinestream.stream.events.schema import EVENT_SCHEMA


def test_rmat_shape_range_and_skew():
    src, dst = rmat_edges(np, 12, 8, seed=1)
    assert len(src) == len(dst) == 8 * 4096 and src.dtype == np.int64
    assert src.min() >= 0 and max(src.max(), dst.max()) < 4096
    # quadrant a (both high bits clear) gets about a = 0.57 of the top-level choices
    top = ((src >> 11) & 1, (dst >> 11) & 1)
    assert abs(np.mean((top[0] == 0) & (top[1] == 0)) - 0.57) < 0.02
    assert abs(np.mean((top[0] == 1) & (top[1] == 1)) - 0.05) < 0.01
    s2, d2 = rmat_edges(np, 12, 8, seed=1)
    assert np.array_equal(src, s2) and np.array_equal(dst, d2)
    deg = np.bincount(src, minlength=4096)
    assert deg.max() > 10 * deg.mean()                       # heavy-tailed
    with pytest.raises(ValueError):
        rmat_edges(np, 4, 2, a=0.6, b=0.3, c=0.3)


def test_rmat_uniform_when_quarters():
    src, _dst = rmat_edges(np, 6, 64, a=0.25, b=0.25, c=0.25, seed=3)
    counts = np.bincount(src, minlength=64)
    assert counts.min() > 0.6 * counts.mean()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2 ** 31), st.floats(0, 1), st.floats(0, 1))
def test_mix_deletions_places_deletes_after_their_inserts(seed, fe, fv):
    log = random_events(200, 30, seed=seed % 1000, op_probs=(1, 0, 0, 0))
    mixed = mix_deletions(log, edge_delete_fraction=fe, vertex_delete_fraction=fv, seed=seed)
    assert mixed.schema == EVENT_SCHEMA
    op = mixed.column("op").to_numpy()
    assert (op == 1).sum() == 200
    assert (op == 2).sum() == round(fe * 200)
    # the original rows keep their order
    assert mixed.filter(pa.compute.equal(mixed.column("op"), 1)).equals(log)
    rows = mixed.to_pylist()
    seen_edges, seen_vertices = set(), set()
    for r in rows:
        if r["op"] == 1:
            seen_edges.add((r["src"], r["dst"]))
            seen_vertices |= {r["src"], r["dst"]}
        elif r["op"] == 2:
            assert (r["src"], r["dst"]) in seen_edges and r["dst"] is not None
        elif r["op"] == 4:
            assert r["src"] in seen_vertices and r["dst"] is None
    n_vertices = len(set(log.column("src").to_pylist()) | set(log.column("dst").to_pylist()))
    assert (op == 4).sum() == round(fv * n_vertices)
    ts = mixed.column("ts").cast(pa.int64()).to_numpy()
    assert np.all(np.diff(ts) >= 0)                          # a sorted log stays sorted


def test_mixed_log_really_deletes_in_the_oracle():
    log = random_events(2000, 100, seed=5, op_probs=(1, 0, 0, 0))
    mixed = mix_deletions(log, edge_delete_fraction=0.3, vertex_delete_fraction=0.1, seed=2)
    plain, with_del = Oracle(), Oracle()
    for r in log.to_pylist():
        plain.apply(r["op"], r["src"], r["dst"], r["weight"])
    for r in mixed.to_pylist():
        with_del.apply(r["op"], r["src"], r["dst"], r["weight"])
    n_plain = sum(len(v) for v in plain.out.values())
    n_del = sum(len(v) for v in with_del.out.values())
    assert n_del < n_plain


def test_random_events_shape():
    t = random_events(5000, 40, seed=9, op_probs=(0.5, 0.2, 0.2, 0.1))
    assert t.schema == EVENT_SCHEMA and t.num_rows == 5000
    op = t.column("op").to_numpy()
    assert abs((op == 1).mean() - 0.5) < 0.03
    vertex_ops = t.filter(pa.compute.greater(t.column("op"), 2))
    assert vertex_ops.column("dst").null_count == vertex_ops.num_rows
    assert t.column("src").to_numpy().max() < 40
    assert random_events(5000, 40, seed=9, op_probs=(0.5, 0.2, 0.2, 0.1)).equals(t)
