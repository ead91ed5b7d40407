"""The structure contract: what every DynamicGraph must do, checked against a reference model.

A structure joins the suite by adding its registry name to ``STRUCTURES``.
The suite drives a structure directly with internal ids (no pipeline, no vertex
map) through streams of batches, and after every batch compares everything the
interface exposes with :class:`ReferenceGraph`, a dict-of-dicts that applies the
interface semantics of ``structures/base.py`` literally:

* ``insert_vertices``: ids become live; an id that is already live keeps its edges;
  repeated ids in one call are fine;
* ``delete_vertices``: live ids die with every edge into or out of them; dead or
  repeated ids are ignored; returns the removed edges, each exactly once;
* ``insert_edges`` / ``delete_edges``: batches name live vertices only; inserting an
  existing edge upserts its weight (mask False); deleting an absent edge does
  nothing (mask False);
* queries name ids below ``vertex_capacity`` (live or not); ``degree()`` and
  ``adjacency()`` have one row per id below ``vertex_capacity``.

Self-loops are allowed at this level (the pipeline drops them unless
``keep_self_loops``), so the streams contain some.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import strategies as st

from tests.backends import HAS_GPU
from vinestream.structures import CSRBatch, DynamicGraph, create
from vinestream.structures.backend import to_numpy

#: registry names of the structures under contract: a new structure adds ONE entry here
STRUCTURES = ["csr", "coo", "graphvine", "slabhash", "hornet", "custinger", "faimgraph", "aimgraph",
              "ourograph", "gpma", "diffcsr"]


# -- backends --------------------------------------------------------------------
BACKENDS = [
    pytest.param("numpy", id="numpy"),
    pytest.param("cupy", id="cupy", marks=[
        pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")]),
]


def array_namespace(name: str):
    if name == "numpy":
        return np
    import cupy
    return cupy


# -- the reference model -----------------------------------------------------------
@dataclass
class ReferenceGraph:
    """Live vertex set and out-adjacency ``{src: {dst: float32 weight}}`` on internal ids."""
    live: set = field(default_factory=set)
    out: dict = field(default_factory=dict)

    def insert_vertices(self, ids) -> None:
        for v in ids:
            if v not in self.live:
                self.live.add(v)
                self.out[v] = {}

    def delete_vertices(self, ids) -> set:
        dying = set(ids) & self.live
        removed = set()
        for s in list(self.out):
            for d in list(self.out[s]):
                if s in dying or d in dying:
                    removed.add((s, d))
                    del self.out[s][d]
        for v in dying:
            self.live.discard(v)
            del self.out[v]
        return removed

    def insert_edges(self, src, dst, weights) -> list:
        new = []
        for s, d, w in zip(src, dst, weights):
            assert s in self.live and d in self.live, "the stream generator named a dead vertex"
            new.append(d not in self.out[s])
            self.out[s][d] = np.float32(w)
        return new

    def delete_edges(self, src, dst) -> list:
        removed = []
        for s, d in zip(src, dst):
            hit = s in self.out and d in self.out[s]
            removed.append(hit)
            if hit:
                del self.out[s][d]
        return removed

    def edges(self) -> dict:
        return {(s, d): w for s, row in self.out.items() for d, w in row.items()}

    def sorted_edges(self) -> list:
        return sorted(self.edges())

    def degree(self, v) -> int:
        return len(self.out.get(v, ()))


# -- streams ----------------------------------------------------------------------
# Hypothesis favours small examples; the minimum sizes below keep most streams
# busy enough (several edge batches after some deletions) to reach slot reuse.
# An operation is a recipe that does not depend on the state; it is resolved
# against the reference model when it runs, so that edge batches name only live
# vertices however hypothesis shrinks the stream.  ``seed`` drives the queries
# checked after the batch.
weights_st = st.one_of(st.sampled_from([1.0, 0.5, -2.0, 0.0]),
                       st.floats(-1e3, 1e3, width=32, allow_nan=False))
picks_st = st.integers(0, 10_000)
ids_st = st.lists(picks_st, max_size=8)
insert_edges_st = st.tuples(
    st.just("insert_edges"),
    st.lists(st.tuples(picks_st, picks_st, weights_st, st.booleans()), min_size=1, max_size=24),
    picks_st)
delete_edges_st = st.tuples(
    st.just("delete_edges"),
    st.lists(st.tuples(picks_st, picks_st, st.booleans()), min_size=1, max_size=16),
    picks_st)
operation_st = st.one_of(
    st.tuples(st.just("insert_vertices"), ids_st, picks_st),
    st.tuples(st.just("delete_vertices"), st.lists(picks_st, max_size=4), picks_st),
    insert_edges_st, insert_edges_st, insert_edges_st,   # edge batches are the common case
    delete_edges_st, delete_edges_st,
)
#: the ids a stream may use: a few small ones and some far apart (forces capacity growth)
id_pool_st = st.lists(st.one_of(st.integers(0, 15), st.integers(0, 5000)),
                      min_size=2, max_size=16, unique=True)
#: a stream opens by creating some vertices, so that most later batches have edges to work on
opening_st = st.tuples(st.just("insert_vertices"), st.lists(picks_st, min_size=2, max_size=12), picks_st)
stream_st = st.tuples(id_pool_st,
                      st.builds(lambda first, rest: [first, *rest],
                                opening_st, st.lists(operation_st, min_size=4, max_size=16)))


@dataclass
class StreamRun:
    """A structure and its reference model, advanced one batch at a time and checked after each."""
    graph: DynamicGraph
    model: ReferenceGraph
    xp: object
    touched: set = field(default_factory=set)   # ids ever inserted (all below vertex_capacity)

    @classmethod
    def start(cls, name: str, xp) -> StreamRun:
        return cls(graph=create(name, xp), model=ReferenceGraph(), xp=xp)

    # each method applies one batch to both and checks the batch's own result
    def insert_vertices(self, ids) -> None:
        self.graph.insert_vertices(self.xp.asarray(np.asarray(ids, dtype=np.int32)))
        self.model.insert_vertices(ids)
        self.touched.update(ids)

    def delete_vertices(self, ids) -> None:
        src, dst = self.graph.delete_vertices(self.xp.asarray(np.asarray(ids, dtype=np.int32)))
        src, dst = to_numpy(src), to_numpy(dst)
        expected = self.model.delete_vertices(ids)
        got = list(zip(src.tolist(), dst.tolist()))
        assert len(got) == len(set(got)), f"delete_vertices({ids}) returned an edge twice: {got}"
        assert set(got) == expected, f"delete_vertices({ids}) removed {sorted(got)}, expected {sorted(expected)}"

    def insert_edges(self, src, dst, weights) -> None:
        batch = CSRBatch.from_edges(self.xp, np.asarray(src, dtype=np.int32),
                                    np.asarray(dst, dtype=np.int32), np.asarray(weights, dtype=np.float32))
        new = to_numpy(self.graph.insert_edges(batch))
        bs, bd, bw = host_edges(batch)
        expected = self.model.insert_edges(bs, bd, bw)
        assert new.dtype == bool and new.shape == (batch.num_edges,)
        assert new.tolist() == expected, f"insert_edges new-mask {new.tolist()} != {expected} for {list(zip(bs, bd))}"

    def delete_edges(self, src, dst) -> None:
        batch = CSRBatch.from_edges(self.xp, np.asarray(src, dtype=np.int32), np.asarray(dst, dtype=np.int32))
        removed = to_numpy(self.graph.delete_edges(batch))
        bs, bd, _ = host_edges(batch)
        expected = self.model.delete_edges(bs, bd)
        assert removed.dtype == bool and removed.shape == (batch.num_edges,)
        assert removed.tolist() == expected, f"delete_edges mask {removed.tolist()} != {expected}"

    # resolving a recipe against the model
    def apply(self, op, pool) -> int:
        kind, payload, seed = op
        live = sorted(self.model.live)
        if kind == "insert_vertices":
            self.insert_vertices([pool[p % len(pool)] for p in payload])
        elif kind == "delete_vertices":
            # ids ever inserted (live or dead); an id never seen may lie beyond the capacity
            seen = sorted(self.touched)
            self.delete_vertices([seen[p % len(seen)] for p in payload] if seen else [])
        elif kind == "insert_edges":
            edges = self.model.sorted_edges()
            src, dst, w = [], [], []
            for a, b, weight, upsert in payload if live else ():
                s, d = edges[a % len(edges)] if upsert and edges else (live[a % len(live)], live[b % len(live)])
                src.append(s)
                dst.append(d)
                w.append(weight)
            self.insert_edges(src, dst, w)
        elif kind == "delete_edges":
            edges = self.model.sorted_edges()
            src, dst = [], []
            for a, b, present in payload if live else ():
                s, d = edges[a % len(edges)] if present and edges else (live[a % len(live)], live[b % len(live)])
                src.append(s)
                dst.append(d)
            self.delete_edges(src, dst)
        else:
            raise ValueError(kind)
        return seed

    # -- the full comparison, after every batch ---------------------------------------
    def check(self, seed: int = 0, max_queries: int = 64) -> None:
        g, m, xp = self.graph, self.model, self.xp
        rng = np.random.default_rng(seed)
        cap = g.vertex_capacity
        assert cap > max(self.touched, default=-1), "vertex_capacity below an inserted id"

        assert to_numpy(g.vertices()).tolist() == sorted(m.live)
        assert g.num_vertices == len(m.live)
        expected = m.edges()
        assert g.num_edges == len(expected)

        # the whole adjacency: one row per id below the capacity
        adj = g.adjacency()
        assert adj.num_rows == cap
        offsets = to_numpy(adj.offsets)
        cols = to_numpy(adj.cols).astype(np.int64)
        assert adj.weights is not None, "adjacency() must carry the weights"
        weights = to_numpy(adj.weights)
        assert weights.dtype == np.float32
        rows = np.repeat(np.arange(cap), np.diff(offsets))
        got = {}
        for s, d, w in zip(rows.tolist(), cols.tolist(), weights.tolist()):
            assert (s, d) not in got, f"adjacency() lists edge {(s, d)} twice"
            got[(s, d)] = np.float32(w)
        assert got == expected, _diff(got, expected)

        # degrees: all ids, then a subset in a random order (repeats and dead ids included)
        deg = to_numpy(g.degree())
        assert deg.shape == (cap,) and np.issubdtype(deg.dtype, np.integer)
        ref_deg = np.zeros(cap, dtype=np.int64)
        for v, row in m.out.items():
            ref_deg[v] = len(row)
        assert np.array_equal(deg, ref_deg)
        pool = np.array(sorted(self.touched) or [0], dtype=np.int32)
        subset = rng.choice(pool, size=min(len(pool) + 2, max_queries))
        sub_deg = to_numpy(g.degree(xp.asarray(subset)))
        assert sub_deg.tolist() == [m.degree(int(v)) for v in subset]

        # adjacency of the subset: rows in the requested order
        sub = g.adjacency(xp.asarray(subset))
        assert sub.num_rows == len(subset)
        so, sc, sw = to_numpy(sub.offsets), to_numpy(sub.cols).tolist(), to_numpy(sub.weights)
        for i, v in enumerate(subset.tolist()):
            row = {c: np.float32(w) for c, w in zip(sc[so[i]:so[i + 1]], sw[so[i]:so[i + 1]].tolist())}
            assert so[i + 1] - so[i] == len(row)
            assert row == m.out.get(v, {}), f"adjacency([...]) row {i} (vertex {v})"

        # point queries: present edges, their reversals and random pairs of touched ids
        present = list(expected)
        if present:
            picked = rng.choice(len(present), size=min(len(present), max_queries // 2), replace=False)
            present = [present[i] for i in picked]
        randoms = [tuple(p) for p in rng.choice(pool, size=(max_queries // 2, 2)).tolist()]
        queries = present + [(d, s) for s, d in present] + randoms
        qs = np.array([q[0] for q in queries], dtype=np.int32)
        qd = np.array([q[1] for q in queries], dtype=np.int32)
        hit = to_numpy(g.contains(xp.asarray(qs), xp.asarray(qd)))
        assert hit.tolist() == [q in expected for q in queries]
        w = to_numpy(g.edge_weights(xp.asarray(qs), xp.asarray(qd)))
        assert w.dtype == np.float32
        ref_w = np.array([expected.get(q, np.nan) for q in queries], dtype=np.float32)
        assert np.array_equal(w, ref_w, equal_nan=True)

        # memory accounting
        mem = g.memory()
        for key in ("reserved_bytes", "used_bytes"):
            assert isinstance(mem[key], (int, np.integer)) and mem[key] >= 0, (key, mem[key])
        assert mem["used_bytes"] <= mem["reserved_bytes"], mem


def host_edges(batch: CSRBatch) -> tuple:
    """(sources, cols, weights or None) of a batch as Python lists, in batch order."""
    rows, offsets = to_numpy(batch.rows), to_numpy(batch.offsets)
    src = np.repeat(rows, np.diff(offsets)).tolist()   # on the host: cupy.repeat wants int repeats
    w = to_numpy(batch.weights).tolist() if batch.weights is not None else None
    return src, to_numpy(batch.cols).tolist(), w


def _diff(got: dict, expected: dict) -> str:
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    wrong = sorted((k, got[k], expected[k]) for k in set(got) & set(expected) if got[k] != expected[k])
    return f"missing {missing[:10]}, extra {extra[:10]}, wrong weight {wrong[:10]}"


def run_stream(name: str, xp, stream) -> StreamRun:
    """Apply a generated stream to a fresh structure ``name``, checking after every batch."""
    pool, ops = stream
    run = StreamRun.start(name, xp)
    run.check()
    for op in ops:
        seed = run.apply(op, pool)
        run.check(seed)
    return run
