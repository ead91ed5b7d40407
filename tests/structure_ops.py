"""Random operation streams for the structure tests, applied to a structure and to the oracle in step.

The structure files (test_graphvine, test_faimgraph, test_slabhash, ...) draw their own options and check
their own invariants; the operations, their expected masks and the queries checked against the oracle are
the same for all of them and live here.  ``XP`` is the backend under test (VINESTREAM_BACKEND=gpu runs the
structure tests on CuPy).
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import strategies as st

from tests.oracle import Oracle
from vinestream.structures import backend
from vinestream.structures.csr_types import CSRBatch

XP = backend.get_backend(os.environ.get(backend.ENV_VAR, "cpu"))
H = backend.to_numpy
WEIGHTS = st.sampled_from([0.5, 1.0, 2.0, 3.25])


def batch(src, dst, w=None):
    return CSRBatch.from_edges(XP, np.asarray(src, np.int32), np.asarray(dst, np.int32),
                               None if w is None else np.asarray(w, np.float32))


def edges_of(g) -> dict:
    """{(u, v): weight} read through adjacency()."""
    csr = g.adjacency()
    off, cols, w = H(csr.offsets), H(csr.cols), H(csr.weights)
    rows = np.repeat(np.arange(len(off) - 1), np.diff(off))
    return {(int(u), int(v)): float(x) for u, v, x in zip(rows, cols, w)}


def edge_list(nv):
    return st.lists(st.tuples(st.integers(0, nv - 1), st.integers(0, nv - 1), WEIGHTS),
                    min_size=0, max_size=40)


@st.composite
def operations(draw):
    """A list of operations on up to 70 vertex ids: edge inserts (sorted batches, and raw ones that break
    CSRBatch's promise), edge deletes (absent pairs, and some present edges), vertex inserts and deletes."""
    nv = draw(st.sampled_from([6, 20, 70]))
    ops = []
    for _ in range(draw(st.integers(1, 9))):
        kind = draw(st.sampled_from(["ins", "ins", "ins", "del", "del", "addv", "delv", "raw"]))
        if kind in ("ins", "raw"):
            ops.append((kind, draw(edge_list(nv))))
        elif kind == "del":
            ops.append((kind, draw(st.lists(st.tuples(st.integers(0, nv + 2), st.integers(0, nv + 2)),
                                            max_size=40)),
                        draw(st.booleans())))   # delete some present edges too
        else:
            ops.append((kind, draw(st.lists(st.integers(0, nv + 5), max_size=6))))
    return ops


def raw_batch(edges):
    """A batch that breaks CSRBatch's promise: unsorted columns and repeated keys within a row."""
    edges = sorted(edges, key=lambda e: e[0])          # rows ascending, columns in input order
    src = np.array([e[0] for e in edges], np.int32)
    rows, counts = np.unique(src, return_counts=True)
    offsets = np.zeros(len(rows) + 1, np.int64)
    offsets[1:] = np.cumsum(counts)
    return CSRBatch(rows=XP.asarray(rows.astype(np.int32)), offsets=XP.asarray(offsets),
                    cols=XP.asarray(np.array([e[1] for e in edges], np.int32)),
                    weights=XP.asarray(np.array([e[2] for e in edges], np.float32))), edges

def apply_op(g, o, op, rng):
    kind = op[0]
    if kind == "ins" and op[1]:
        src, dst, w = zip(*op[1])
        b = batch(src, dst, w)
        before = set(o.edges)
        for s, d, x in op[1]:
            o.apply(1, s, d, x)
        mask = H(g.insert_edges(b))
        bs_, bd = H(b.sources()), H(b.cols)
        assert mask.tolist() == [(int(s), int(d)) not in before for s, d in zip(bs_, bd)]
    elif kind == "raw" and op[1]:
        b, edges = raw_batch(op[1])
        seen = set(o.edges)
        exp = []
        for s, d, x in edges:
            exp.append((s, d) not in seen)
            seen.add((s, d))
            o.apply(1, s, d, x)
        assert H(g.insert_edges(b)).tolist() == exp
    elif kind == "del":
        pairs = list(op[1])
        if op[2]:
            pairs += list(o.edges)[: max(1, len(o.edges) // 3)]
        if not pairs:
            return
        src, dst = zip(*pairs)
        b = batch(src, dst)
        before = set(o.edges)
        mask = H(g.delete_edges(b))
        bs_, bd = H(b.sources()), H(b.cols)
        assert mask.tolist() == [(int(s), int(d)) in before for s, d in zip(bs_, bd)]
        for s, d in pairs:
            o.apply(2, s, d)
    elif kind == "addv":
        g.insert_vertices(XP.asarray(np.array(op[1], np.int32)))
        for v in op[1]:
            o.apply(3, v)
    elif kind == "delv":
        ids = set(op[1])
        exp = {(u, v) for (u, v) in o.edges if u in ids or v in ids}
        s, d = g.delete_vertices(XP.asarray(np.array(op[1], np.int32)))
        got = list(zip(H(s).tolist(), H(d).tolist()))
        assert len(got) == len(set(got)) and set(got) == exp, "removed edges reported once each"
        for v in op[1]:
            o.apply(4, v)

def check_against(g, o: Oracle, rng: np.random.Generator) -> None:
    """Everything a structure answers (edges, vertices, degrees, batched queries with unknown ids, rows in
    request order) equals the oracle's."""
    assert edges_of(g) == pytest.approx(o.edges)
    assert set(H(g.vertices()).tolist()) == o.vertices
    assert g.num_vertices == len(o.vertices) and g.num_edges == len(o.edges)
    deg = H(g.degree())
    for v in range(g.vertex_capacity):
        assert deg[v] == o.degree(v)
    check_queries(g, o, rng)


def check_queries(g, o: Oracle, rng: np.random.Generator) -> None:
    """Batched queries against the oracle: random pairs, present edges and out-of-range ids through
    ``contains`` and ``edge_weights``; rows in request order (repeats and unknown ids) through ``adjacency``
    and ``degree``."""
    n = max(g.vertex_capacity, 1)
    qs = rng.integers(-1, n + 3, 60)
    qd = rng.integers(-1, n + 3, 60)
    present = list(o.edges)[:20]
    qs = np.concatenate([qs, [u for u, _ in present]]).astype(np.int64)
    qd = np.concatenate([qd, [v for _, v in present]]).astype(np.int64)
    got = H(g.contains(XP.asarray(qs), XP.asarray(qd)))
    assert got.tolist() == [(int(u), int(v)) in o.edges for u, v in zip(qs, qd)]
    w = H(g.edge_weights(XP.asarray(qs), XP.asarray(qd)))
    ew = np.array([o.edges.get((int(u), int(v)), np.nan) for u, v in zip(qs, qd)], dtype=np.float32)
    assert np.array_equal(w, ew, equal_nan=True)
    rows = rng.integers(-1, n + 2, 7)
    csr = g.adjacency(XP.asarray(rows))
    off, cols, ws = H(csr.offsets), H(csr.cols), H(csr.weights)
    for i, v in enumerate(rows.tolist()):
        got_row = {int(c): float(x) for c, x in zip(cols[off[i]:off[i + 1]], ws[off[i]:off[i + 1]])}
        assert got_row == pytest.approx(o.out.get(v, {}))
    assert H(g.degree(XP.asarray(rows))).tolist() == [o.degree(v) for v in rows.tolist()]
