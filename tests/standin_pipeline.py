"""Test-only stand-ins for the lead's ``stream.pipeline.Pipeline`` and a structure.

They follow the API in HELPERS.md closely enough for the worker and checkpoint
tests: ``apply(events) -> BatchResult``, ``structure`` (a real ``DynamicGraph``
subclass, dict-backed), ``epoch``, ``state()`` / ``load_state()``.  Events are
applied one at a time exactly like ``tests.oracle.Oracle`` (they are tiny test
logs); the lead switches these tests to the real Pipeline.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from stream.delta import BatchDelta
from structures.base import DynamicGraph
from structures.csr_types import CSR, CSRBatch


class DictGraph(DynamicGraph):
    """A dict-of-dicts structure on internal ids (test only: not data-parallel)."""
    name = "dict-standin"

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        self.out: dict[int, dict[int, float]] = {}

    def insert_vertices(self, ids):
        for v in np.asarray(ids).tolist():
            self.out.setdefault(v, {})

    def delete_vertices(self, ids):
        gone = set(np.asarray(ids).tolist())
        rs, rd = [], []
        for v in gone:
            for d in self.out.pop(v, {}):
                rs.append(v)
                rd.append(d)
        for u, nbrs in self.out.items():
            for d in [d for d in nbrs if d in gone]:
                del nbrs[d]
                rs.append(u)
                rd.append(d)
        return np.array(rs, np.int32), np.array(rd, np.int32)

    def insert_edges(self, batch: CSRBatch):
        src = batch.sources().tolist()
        w = batch.weights.tolist() if batch.weights is not None else [1.0] * len(src)
        new = []
        for u, v, x in zip(src, batch.cols.tolist(), w):
            new.append(v not in self.out[u])
            self.out[u][v] = x
        return np.array(new, bool)

    def delete_edges(self, batch: CSRBatch):
        gone = []
        for u, v in zip(batch.sources().tolist(), batch.cols.tolist()):
            gone.append(self.out.get(u, {}).pop(v, None) is not None)
        return np.array(gone, bool)

    def contains(self, src, dst):
        return np.array([d in self.out.get(s, {}) for s, d in zip(np.asarray(src).tolist(),
                                                                   np.asarray(dst).tolist())], bool)

    def degree(self, vertices=None):
        vs = self.vertices() if vertices is None else np.asarray(vertices)
        return np.array([len(self.out.get(v, {})) for v in vs.tolist()], np.int64)

    def adjacency(self, vertices=None):
        vs = self.vertices() if vertices is None else np.asarray(vertices)
        rows = [sorted(self.out.get(v, {}).items()) for v in vs.tolist()]
        offsets = np.zeros(len(rows) + 1, np.int64)
        offsets[1:] = np.cumsum([len(r) for r in rows])
        cols = np.array([c for r in rows for c, _ in r], np.int32)
        w = np.array([x for r in rows for _, x in r], np.float32)
        return CSR(offsets, cols, w)

    @property
    def num_vertices(self):
        return len(self.out)

    @property
    def num_edges(self):
        return sum(len(n) for n in self.out.values())

    @property
    def vertex_capacity(self):
        return max(self.out, default=-1) + 1

    def vertices(self):
        return np.array(sorted(self.out), np.int32)

    def memory(self):
        used = 16 * self.num_edges + 8 * self.num_vertices
        return {"reserved_bytes": 2 * used, "used_bytes": used}


@dataclass
class BatchResult:
    epoch: int
    delta: BatchDelta
    counts: dict
    seconds: dict
    job_summaries: dict = field(default_factory=dict)
    job_outputs: dict = field(default_factory=dict)


class StandInPipeline:
    """Applies events one at a time to a DictGraph through an external<->internal vertex map."""

    def __init__(self, structure=None, *, keep_self_loops: bool = False, jobs=(), slow_seconds: float = 0.0):
        self.structure = structure or DictGraph()
        self.keep_self_loops = keep_self_loops
        self.ext_to_int: dict[int, int] = {}
        self.int_to_ext: dict[int, int] = {}
        self.free: list[int] = []
        self.next_id = 0
        self.epoch = 0
        self.slow_seconds = slow_seconds    # lets tests catch the worker mid-batch

    def _intern(self, x: int) -> int:
        if x not in self.ext_to_int:
            if self.free:
                i = self.free.pop()
            else:
                i, self.next_id = self.next_id, self.next_id + 1
            self.ext_to_int[x], self.int_to_ext[i] = i, x
            self.structure.insert_vertices(np.array([i], np.int32))
        return self.ext_to_int[x]

    def apply(self, events: pa.Table) -> BatchResult:
        t0 = time.perf_counter()
        g = self.structure
        counts = dict(events=events.num_rows, inserted=0, deleted=0, updated=0, self_loops=0,
                      vertices_added=0, vertices_removed=0)
        cols = [events.column(c).to_pylist() for c in ("op", "src", "dst", "weight")]
        for op, s, d, w in zip(*cols):
            if op == 3:
                counts["vertices_added"] += s not in self.ext_to_int
                self._intern(s)
            elif op == 4:
                if s in self.ext_to_int:
                    i = self.ext_to_int.pop(s)
                    del self.int_to_ext[i]
                    self.free.append(i)
                    counts["deleted"] += len(g.delete_vertices(np.array([i], np.int32))[0])
                    counts["vertices_removed"] += 1
            elif s == d and not self.keep_self_loops:
                counts["self_loops"] += 1
            elif op == 1:
                u, v = self._intern(s), self._intern(d)
                b = CSRBatch.from_edges(np, [u], [v], [1.0 if w is None else w])
                counts["inserted" if g.insert_edges(b)[0] else "updated"] += 1
            elif op == 2 and s in self.ext_to_int and d in self.ext_to_int:
                b = CSRBatch.from_edges(np, [self.ext_to_int[s]], [self.ext_to_int[d]])
                counts["deleted"] += int(g.delete_edges(b)[0])
        if self.slow_seconds:
            time.sleep(self.slow_seconds)
        self.epoch += 1
        counts.update(vertices=g.num_vertices, edges=g.num_edges)
        degree = pa.table({"vertex": [self.int_to_ext[int(v)] for v in g.vertices()],
                           "degree": g.degree()})
        return BatchResult(self.epoch, BatchDelta.empty(np, self.epoch), counts,
                           {"resolve": time.perf_counter() - t0, "insert": 0.0},
                           {"max_degree": int(degree.column("degree").to_numpy().max(initial=0))},
                           {"degree": degree})

    # -- checkpoint contract -----------------------------------------------------------
    def state(self) -> dict:
        ints = np.array(sorted(self.int_to_ext), np.int32)
        return {"epoch": self.epoch, "next_id": self.next_id,
                "vertex_map": {"internal": ints,
                               "external": np.array([self.int_to_ext[i] for i in ints.tolist()], np.int64),
                               "free": np.array(self.free, np.int32)}}

    def load_state(self, state: dict) -> None:
        self.epoch = int(state["epoch"])
        self.next_id = int(state["next_id"])
        vm = state["vertex_map"]
        self.int_to_ext = dict(zip(vm["internal"].tolist(), vm["external"].tolist()))
        self.ext_to_int = {x: i for i, x in self.int_to_ext.items()}
        self.free = vm["free"].tolist()

    # -- views for tests ---------------------------------------------------------------
    def edges(self) -> dict:
        return {(self.int_to_ext[u], self.int_to_ext[v]): w for u, n in self.structure.out.items()
                for v, w in n.items()}

    def vertex_set(self) -> set:
        return {self.int_to_ext[v] for v in self.structure.out}
