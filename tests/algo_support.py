"""Test doubles for the algorithm tests: a dict vertex map and a stream harness.

The harness applies batches of events (external ids) one at a time to the
oracle, derives the batch's net effect exactly as ``stream/delta.py`` defines a
``BatchDelta`` (vertices removed, then added -- a slot freed in the batch may be
reused at once --, then disjoint inserted / deleted edges), and replays that
delta on a :class:`algorithms.snapshot.KeyGraph`.  The lead re-runs the job
tests with the real vertex map and structures.
"""
from __future__ import annotations

import random

import networkx as nx
import numpy as np

from algorithms.snapshot import KeyGraph
from stream.delta import BatchDelta
from structures.backend import to_numpy
from tests.oracle import ADD_EDGE, ADD_VERTEX, DELETE_EDGE, DELETE_VERTEX, Oracle


class DictVertexMap:
    """external int64 <-> internal int32, freed slots reused last-in first-out."""

    def __init__(self, xp=np):
        self.xp = xp
        self.to_int: dict[int, int] = {}
        self.to_ext: dict[int, int] = {}
        self.free: list[int] = []
        self.next_id = 0

    def lookup(self, external):
        ext = to_numpy(external).astype(np.int64)
        out = np.array([self.to_int.get(int(e), -1) for e in ext], dtype=np.int32)
        return self.xp.asarray(out)

    def external(self, internal):
        ids = to_numpy(internal).astype(np.int64)
        return self.xp.asarray(np.array([self.to_ext[int(i)] for i in ids], dtype=np.int64))

    def assign(self, v: int) -> int:
        slot = self.free.pop() if self.free else self._fresh()
        self.to_int[v] = slot
        self.to_ext[slot] = v
        return slot

    def _fresh(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def release(self, v: int) -> int:
        slot = self.to_int.pop(v)
        del self.to_ext[slot]
        self.free.append(slot)
        return slot

    @property
    def num_vertices(self) -> int:
        return len(self.to_int)

    @property
    def capacity(self) -> int:
        return self.next_id


class Harness:
    """Oracle + vertex map + KeyGraph, advanced one batch of events at a time."""

    def __init__(self, xp=np):
        self.xp = xp
        self.oracle = Oracle()
        self.vmap = DictVertexMap(xp)
        self.graph = KeyGraph(xp)
        self.epoch = 0

    def apply(self, events) -> BatchDelta:
        xp = self.xp
        before_v = self.oracle.vertices
        before_e = self.oracle.edges
        removed = sorted({e[1] for e in events if e[0] == DELETE_VERTEX} & before_v)
        for ev in events:
            self.oracle.apply(*ev)
        after_v = self.oracle.vertices
        after_e = self.oracle.edges
        gone = set(removed)
        added = sorted(v for v in after_v if v not in before_v or v in gone)
        survived = {k for k in before_e if k[0] not in gone and k[1] not in gone and k in after_e}

        old_id = dict(self.vmap.to_int)
        deleted = sorted(k for k in before_e if k not in survived)
        del_s = [old_id[a] for a, _ in deleted]
        del_d = [old_id[b] for _, b in deleted]
        removed_slots = [self.vmap.release(v) for v in removed]
        added_slots = [self.vmap.assign(v) for v in added]
        new_id = self.vmap.to_int
        inserted = sorted(k for k in after_e if k not in survived)
        updated = sorted(k for k in survived if after_e[k] != before_e[k])

        i32 = lambda a: xp.asarray(np.asarray(a, dtype=np.int32))  # noqa: E731
        f32 = lambda a: xp.asarray(np.asarray(a, dtype=np.float32))  # noqa: E731
        self.epoch += 1
        delta = BatchDelta(
            epoch=self.epoch, vertices_added=i32(added_slots), vertices_removed=i32(removed_slots),
            inserted_src=i32([new_id[a] for a, _ in inserted]), inserted_dst=i32([new_id[b] for _, b in inserted]),
            inserted_weight=f32([after_e[k] for k in inserted]),
            deleted_src=i32(del_s), deleted_dst=i32(del_d),
            updated_src=i32([new_id[a] for a, _ in updated]), updated_dst=i32([new_id[b] for _, b in updated]),
            updated_weight=f32([after_e[k] for k in updated]))
        self.graph.apply_delta(delta)
        return delta

    def networkx(self) -> nx.DiGraph:
        return self.oracle.to_networkx()

    def check_graph(self) -> None:
        """The KeyGraph holds exactly the oracle's graph (in internal ids)."""
        csr = self.graph.adjacency()
        rows = to_numpy(csr.row_ids())
        cols = to_numpy(csr.cols)
        ext = self.vmap.to_ext
        got = {(ext[int(a)], ext[int(b)]) for a, b in zip(rows, cols)}
        assert got == set(self.oracle.edges)
        live = {ext[int(v)] for v in to_numpy(self.graph.vertices())}
        assert live == self.oracle.vertices


def random_batch(rng: random.Random, oracle: Oracle, id_space: int, size: int,
                 p_vertex_delete: float = 0.04, p_vertex_add: float = 0.03, p_delete: float = 0.3):
    """Random events over ids ``0 .. id_space-1``; deletions mostly name existing edges."""
    events = []
    edges = list(oracle.edges)
    for _ in range(size):
        x = rng.random()
        if x < p_vertex_delete:
            events.append((DELETE_VERTEX, rng.randrange(id_space), None, None))
        elif x < p_vertex_delete + p_vertex_add:
            events.append((ADD_VERTEX, rng.randrange(id_space), None, None))
        elif x < p_vertex_delete + p_vertex_add + p_delete and edges:
            a, b = edges[rng.randrange(len(edges))]
            events.append((DELETE_EDGE, a, b, None))
        else:
            a, b = rng.randrange(id_space), rng.randrange(id_space)
            events.append((ADD_EDGE, a, b, 1.0))
    return events


def table_dict(table, column):
    """{external vertex: value} from a job output table."""
    return dict(zip(table.column("vertex").to_pylist(), table.column(column).to_pylist()))


def rmat_edges(rng: np.random.Generator, scale: int, edge_factor: int, abc=(0.57, 0.19, 0.19)):
    """A small R-MAT edge list on NumPy (tests only), self-loops and duplicates dropped."""
    m = edge_factor << scale
    src = np.zeros(m, dtype=np.int64)
    dst = np.zeros(m, dtype=np.int64)
    a, b, c = abc
    for _ in range(scale):
        r = rng.random(m)
        down = r >= a + b                    # quadrants c, d: lower half for src
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)
        src = (src << 1) | down
        dst = (dst << 1) | right
    keep = src != dst
    key = np.unique((src[keep] << 32) | dst[keep])
    return (key >> 32), (key & 0xFFFFFFFF)


# Re-exported op codes for the tests
__all__ = ["ADD_EDGE", "DELETE_EDGE", "ADD_VERTEX", "DELETE_VERTEX", "DictVertexMap", "Harness",
           "random_batch", "table_dict", "rmat_edges"]


def _cupy_or_none():
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception:
        return None
    return None


def backends():
    """pytest params: numpy always, cupy (marked gpu) when a CUDA device answers."""
    import pytest
    cp = _cupy_or_none()
    return [pytest.param(np, id="numpy"),
            pytest.param(cp, id="cupy", marks=[pytest.mark.gpu,
                         pytest.mark.skipif(cp is None, reason="needs CuPy and a CUDA device")])]
