"""The interface the pipeline drives every analytics job through.

A job has a *static* form (compute from scratch on the structure's CSR) and an
*incremental* form (bring the previous result up to date with one
:class:`~stream.delta.BatchDelta`, falling back to the static form when that is
cheaper or when the delta cannot be followed).  Results live on internal ids
over ``graph.vertex_capacity`` slots; dead slots are ignored and every output
speaks external ids through the vertex map.

Call order (``stream/pipeline.py``): ``run_static`` once (or after a delta the
pipeline cannot merge), then ``update`` after each batch, then ``summary`` and
``output``.  ``work`` describes the last call, so that incremental and static
runs can be compared by what they did, not only by how long they took.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import pyarrow as pa

from vinestream.structures.backend import asarray, to_numpy
from vinestream.structures.base import DynamicGraph
from vinestream.structures.delta import BatchDelta


class Job(ABC):
    """One analytics job (PageRank, BFS, triangles) over a dynamic graph."""

    #: job name (``--jobs NAME``; the output directory ``OUT/<name>/``)
    name: str = ""

    def __init__(self, xp=np, **params):
        self.xp = xp
        self.params = params
        #: counters of the last run_static/update: edges_touched, iterations, mode, ...
        self.work: dict = {}
        self._live = xp.zeros(0, dtype=np.int32)   # live internal ids at the last call

    # -- computing ---------------------------------------------------------------
    @abstractmethod
    def run_static(self, graph: DynamicGraph, vertex_map) -> None:
        """Compute the result from scratch on ``graph``."""

    @abstractmethod
    def update(self, graph: DynamicGraph, delta: BatchDelta, vertex_map) -> None:
        """Bring the result up to date: ``graph`` is already the state after ``delta``."""

    # -- results -----------------------------------------------------------------
    @abstractmethod
    def output(self, vertex_map) -> pa.Table:
        """One row per live vertex: ``vertex`` (external int64 id) and the job's value columns."""

    @abstractmethod
    def summary(self) -> dict:
        """Scalars for ``summary.parquet`` (names prefixed by the job, e.g. ``pagerank_iterations``)."""

    # -- checkpoints -------------------------------------------------------------
    @abstractmethod
    def state(self) -> dict:
        """Host (NumPy) arrays and scalars from which ``load_state`` restores the job exactly."""

    @abstractmethod
    def load_state(self, state: dict) -> None:
        """Restore what ``state`` returned (arrays are moved to ``self.xp``)."""

    # -- helpers for subclasses --------------------------------------------------
    def _remember_live(self, graph: DynamicGraph):
        """Record and return the live vertices and a live mask over ``graph.vertex_capacity``."""
        xp = self.xp
        self._live = xp.asarray(graph.vertices(), dtype=np.int32)
        mask = xp.zeros(int(graph.vertex_capacity), dtype=bool)
        mask[self._live] = True
        return self._live, mask

    def _vertex_column(self, vertex_map) -> pa.Array:
        return pa.array(to_numpy(vertex_map.external(self._live)).astype(np.int64), type=pa.int64())

    def _host(self, **arrays) -> dict:
        return {k: to_numpy(v) for k, v in arrays.items()}

    def _device(self, a, dtype=None):
        return asarray(self.xp, a, dtype=dtype)


def grow(xp, a, capacity: int, fill):
    """``a`` extended with ``fill`` up to ``capacity`` entries (vertex capacity only grows)."""
    if a.shape[0] >= capacity:
        return a
    out = xp.full(capacity, fill, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out

