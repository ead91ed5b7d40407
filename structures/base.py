"""The one interface every dynamic graph structure honours.

Vertices are dense internal ids (int32) handed out by the vertex map
(:mod:`stream.vertex_map`); a structure never sees external ids.  All arguments
and results are arrays of the structure's backend ``self.xp``.

The pipeline drives a structure in a fixed order per batch:

1. ``delete_vertices`` (old internal ids; removes every incident edge, both
   directions, and frees the slots),
2. ``insert_vertices`` (ids that are new or reused from the free queue),
3. ``insert_edges`` and ``delete_edges`` with *disjoint* edge sets, so the two
   phases may run concurrently (two CUDA streams on a GPU) where the structure
   declares ``concurrent_phases``; the pipeline then calls
   ``apply_edge_phases(inserts, deletes, streams=phase_streams(xp))`` instead.

Edge batches only name vertices that exist.  Inserting an edge that exists
updates its weight; deleting an absent edge does nothing.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import contextmanager
from types import ModuleType
from typing import ClassVar

import numpy as np

from .csr_types import CSR, CSRBatch
from .options import Option, check_options


def phase_streams(xp):
    """Two CUDA streams ``(delete_stream, insert_stream)`` for concurrent edge phases, or None on NumPy.

    Created once per process and reused (a stream is cheap to keep, not to make);
    non-blocking, so they do not serialise against the legacy default stream.
    """
    global _PHASE_STREAMS
    if not hasattr(xp, "cuda"):
        return None
    if _PHASE_STREAMS is None:
        _PHASE_STREAMS = (xp.cuda.Stream(non_blocking=True), xp.cuda.Stream(non_blocking=True))
    return _PHASE_STREAMS


_PHASE_STREAMS = None


class DynamicGraph(ABC):
    """A directed, simple, weighted graph on internal vertex ids, updated in batches."""

    #: registry name (``--structure NAME``)
    name: str = ""

    #: Whether the delete phase and the insert phase of one batch (disjoint edge sets, the
    #: batcher's guarantee) may run at the same time, on two CUDA streams.  True only where it
    #: really holds: the two phases touch disjoint memory (a delete never moves or frees what an
    #: insert reads or writes) and share no allocator state, or every allocation is planned on
    #: the host before both phases start.  A structure that declares True overrides
    #: :meth:`apply_edge_phases`; the default runs the phases one after the other.
    concurrent_phases: bool = False

    #: Whether :meth:`edge_phases_counted` does both phases in fewer host reads than the two counted
    #: phases one after the other (coo's fused path); the pipeline then calls it, timed as one phase.
    combined_edge_phases: bool = False

    #: The options the constructor takes: name -> :class:`structures.options.Option` (type, default,
    #: range, meaning), declared by each structure beside its constructor.  Any other option, or a value
    #: of the wrong type or out of range, is a ValueError naming it (a misspelt option used to be ignored).
    options_spec: ClassVar[dict[str, Option]] = {}

    def __init__(self, xp: ModuleType = np, **options):
        self.xp = xp
        #: every declared option's value (given, checked and converted, or its default)
        self.options = self.check_options(options)

    @classmethod
    def check_options(cls, options: dict) -> dict:
        """``options`` checked against :attr:`options_spec`: every declared option's value (defaults
        filled in), or ValueError naming the unknown or wrong option and what is valid."""
        return check_options(cls.name or cls.__name__, cls.options_spec, options)

    # -- vertices ---------------------------------------------------------------
    @abstractmethod
    def insert_vertices(self, ids) -> None:
        """Make ``ids`` live vertices with no edges (capacity grows as needed)."""

    @abstractmethod
    def delete_vertices(self, ids) -> tuple:
        """Remove ``ids`` and every edge into or out of them.

        Returns the removed edges as ``(src, dst)`` int32 arrays (each once),
        which the pipeline reports in the batch delta.
        """

    def insert_new_vertices(self, ids, id_bound: int) -> None:
        """``insert_vertices`` of ids the caller vouches for: distinct, none of them live, all in
        ``[0, id_bound)``.  The pipeline's vertex map knows that much on the host (its fresh and
        freed ids, below its capacity), so a structure can grow to ``id_bound`` and count
        ``len(ids)`` new vertices without reading anything back from the device.  The default
        is ``insert_vertices``."""
        self.insert_vertices(ids)

    def delete_live_vertices(self, ids) -> tuple:
        """``delete_vertices`` of ids the caller vouches for: distinct and all live (the vertex
        map's ids of vertices it had), so nothing has to be filtered or counted on the device.
        The default is ``delete_vertices``."""
        return self.delete_vertices(ids)

    # -- edges ------------------------------------------------------------------
    @abstractmethod
    def insert_edges(self, batch: CSRBatch):
        """Insert (or upsert the weight of) every edge of ``batch``.

        Returns a bool array over the batch's edges (in batch order): True where
        the edge was new, False where it existed and only its weight was set (to
        the batch's weight, which may equal the one it had).
        """

    @abstractmethod
    def delete_edges(self, batch: CSRBatch):
        """Delete every edge of ``batch``; bool array over its edges, True where one was removed."""

    def insert_edges_counted(self, batch: CSRBatch):
        """``insert_edges`` and the number of new edges (True entries of its mask) when the structure
        learnt it on the host anyway, None otherwise; the pipeline then need not read it back to
        size the batch's delta.  The default knows nothing."""
        return self.insert_edges(batch), None

    def delete_edges_counted(self, batch: CSRBatch):
        """``delete_edges`` and the number of removed edges, as :meth:`insert_edges_counted`."""
        return self.delete_edges(batch), None

    def edge_phases_counted(self, inserts: CSRBatch, deletes: CSRBatch):
        """``delete_edges_counted(deletes)`` then ``insert_edges_counted(inserts)`` (disjoint edge sets):
        ``(insert mask, new edges, delete mask, removed edges)``; structures with ``combined_edge_phases``
        override it with fewer host reads and the same state."""
        deleted, n_gone = self.delete_edges_counted(deletes)
        inserted, n_new = self.insert_edges_counted(inserts)
        return inserted, n_new, deleted, n_gone

    def apply_edge_phases(self, inserts: CSRBatch, deletes: CSRBatch, streams=None):
        """Delete ``deletes`` and insert ``inserts`` (disjoint edge sets): ``(insert mask, delete mask)``.

        ``streams`` is ``(delete_stream, insert_stream)`` (CuPy streams) or None.  The
        result and the final state equal ``delete_edges(deletes)`` then
        ``insert_edges(inserts)``; this default does exactly that on the current
        stream.  Structures with ``concurrent_phases`` run the two phases'
        kernels on the two streams, joined by events before returning.
        """
        deleted = self.delete_edges(deletes)
        inserted = self.insert_edges(inserts)
        return inserted, deleted

    @abstractmethod
    def contains(self, src, dst):
        """Batched edge query: bool array, True where edge (src[i], dst[i]) exists."""

    def edge_weights(self, src, dst):
        """Batched weight query: float32 array, NaN where the edge does not exist.

        The default derives it from ``adjacency``; structures override it with a
        direct lookup.
        """
        xp = self.xp
        src = xp.asarray(src, dtype=np.int32)
        dst = xp.asarray(dst, dtype=np.int32)
        out = xp.full(src.shape[0], np.nan, dtype=np.float32)
        if src.shape[0] == 0:
            return out
        csr = self.adjacency()
        rows = csr.row_ids().astype(np.int64)
        w = csr.weights if csr.weights is not None else xp.ones(csr.num_edges, dtype=np.float32)
        key = (rows << 32) | csr.cols.astype(np.int64)
        order = xp.argsort(key)
        key = key[order]
        q = (src.astype(np.int64) << 32) | dst.astype(np.int64)
        pos = xp.searchsorted(key, q)
        pos_c = xp.minimum(pos, max(key.shape[0] - 1, 0))
        hit = (pos < key.shape[0]) & (key[pos_c] == q) if key.shape[0] else xp.zeros(q.shape[0], bool)
        out[hit] = w[order][pos_c][hit]
        return out

    @abstractmethod
    def degree(self, vertices=None):
        """Out-degrees of ``vertices`` (int64), or of every internal id when None."""

    @abstractmethod
    def adjacency(self, vertices=None) -> CSR:
        """CSR of the out-adjacency of ``vertices`` (rows in that order), or of every internal id.

        Columns within a row may come in any order; weights are float32.  Callers treat the
        arrays as read-only (some structures return views of their own state).
        """

    @contextmanager
    def reading(self):
        """A stretch in which the graph is only read (the jobs of one epoch): the whole graph's
        ``adjacency()`` is built once, on its first call, and every later call gets that CSR.

        Most structures build the whole adjacency afresh on each call, a pass over every
        edge (and a host read of its size on a GPU); three jobs asking for it after one batch
        paid for it three times.  Nothing inside may change the graph.  Rows asked for by
        ``adjacency(vertices)`` are not cached.
        """
        built = []
        build = self.adjacency

        def shared(vertices=None):
            if vertices is not None:
                return build(vertices)
            if not built:
                built.append(build())
            return built[0]

        self.adjacency = shared           # the instance's attribute hides the class's method
        try:
            yield self
        finally:
            del self.adjacency

    # -- sizes and memory -------------------------------------------------------
    @property
    @abstractmethod
    def num_vertices(self) -> int:
        """Live vertices."""

    @property
    @abstractmethod
    def num_edges(self) -> int:
        """Live edges."""

    @property
    @abstractmethod
    def vertex_capacity(self) -> int:
        """One more than the largest internal id this structure can hold without growing."""

    @abstractmethod
    def vertices(self):
        """Internal ids of the live vertices (int32, ascending)."""

    @abstractmethod
    def memory(self) -> dict:
        """Bytes on the device where the structure lives.

        At least ``reserved_bytes`` (everything allocated) and ``used_bytes``
        (what live vertices and edges occupy); structures add their own keys
        (blocks in use, free slots, fill factor...).
        """

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(vertices={self.num_vertices}, edges={self.num_edges}, "
                f"backend={'cpu' if self.xp is np else 'gpu'})")
