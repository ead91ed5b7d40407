"""The pure-Python reference: applies events one at a time, exactly as DESIGN.md defines them.

Deliberately naive (dicts and sets, one event per step) so that it is obviously
right; every structure, the batcher and the pipeline are tested against it.
"""
from __future__ import annotations

import math

ADD_EDGE, DELETE_EDGE, ADD_VERTEX, DELETE_VERTEX = 1, 2, 3, 4


class Oracle:
    """A directed simple weighted graph on external ids."""

    def __init__(self, *, undirected: bool = False, keep_self_loops: bool = False):
        self.undirected = undirected
        self.keep_self_loops = keep_self_loops
        self.out: dict[int, dict[int, float]] = {}   # vertex -> {dst: weight}
        self.inn: dict[int, set[int]] = {}           # vertex -> {src}
        self.self_loops_dropped = 0

    # -- one event ---------------------------------------------------------------
    def apply(self, op: int, src: int, dst: int | None = None, weight: float | None = None) -> None:
        if op == ADD_VERTEX:
            self._add_vertex(src)
        elif op == DELETE_VERTEX:
            self._delete_vertex(src)
        elif op in (ADD_EDGE, DELETE_EDGE):
            if src == dst and not self.keep_self_loops:
                self.self_loops_dropped += 1
                return
            w = 1.0 if weight is None or (isinstance(weight, float) and math.isnan(weight)) else float(weight)
            pairs = [(src, dst)] + ([(dst, src)] if self.undirected and src != dst else [])
            for u, v in pairs:
                if op == ADD_EDGE:
                    self._add_edge(u, v, w)
                else:
                    self._delete_edge(u, v)
        else:
            raise ValueError(f"unknown op {op}")

    def apply_all(self, events) -> None:
        """Apply (op, src, dst, weight) tuples in order."""
        for ev in events:
            self.apply(*ev)

    def _add_vertex(self, v: int) -> None:
        self.out.setdefault(v, {})
        self.inn.setdefault(v, set())

    def _delete_vertex(self, v: int) -> None:
        if v not in self.out:
            return
        for d in self.out.pop(v):
            self.inn[d].discard(v)
        for s in self.inn.pop(v):
            del self.out[s][v]

    def _add_edge(self, u: int, v: int, w: float) -> None:
        self._add_vertex(u)
        self._add_vertex(v)
        self.out[u][v] = w
        self.inn[v].add(u)

    def _delete_edge(self, u: int, v: int) -> None:
        if u in self.out and v in self.out[u]:
            del self.out[u][v]
            self.inn[v].discard(u)

    # -- views -------------------------------------------------------------------
    @property
    def vertices(self) -> set[int]:
        return set(self.out)

    @property
    def edges(self) -> dict[tuple[int, int], float]:
        return {(u, v): w for u, nbrs in self.out.items() for v, w in nbrs.items()}

    def degree(self, v: int) -> int:
        return len(self.out.get(v, ()))

    def copy(self) -> Oracle:
        o = Oracle(undirected=self.undirected, keep_self_loops=self.keep_self_loops)
        o.out = {u: dict(n) for u, n in self.out.items()}
        o.inn = {u: set(n) for u, n in self.inn.items()}
        o.self_loops_dropped = self.self_loops_dropped
        return o

    def to_networkx(self):
        import networkx as nx
        g = nx.DiGraph()
        g.add_nodes_from(self.out)
        g.add_weighted_edges_from((u, v, w) for (u, v), w in self.edges.items())
        return g
