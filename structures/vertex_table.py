"""The dense vertex table that GraphVine, Hornet, cuSTINGER, GPMA, DiffCSR and SlabHash share.

These structures keep a vertex as a position of per-vertex arrays (degree, row start, bucket directory,
...) and a bool ``alive`` mask, all indexed by vertex id and grown by doubling when a larger id arrives.
What is the same in all of them lives here, once: which ids are live, activating ids, the vertex list,
the size counters and per-vertex reads such as the degree.

Activation counts only the ids that were not live before (a sort of the batch's ids, never a pass over
the whole mask), so a batch's vertex phase costs the batch's size, as issue 11 asks of every phase.

A structure that uses this mixin keeps ``self.alive``, ``self._num_vertices`` and ``self._num_edges``
current and supplies ``_ensure_vertex_capacity(max_id)``, which grows every per-vertex array (``alive``
included) so that ``max_id`` fits.
"""
from __future__ import annotations

import numpy as np

from .array_ops import unique_sorted
from .csr_types import VERTEX_DTYPE


class AliveVertexTable:
    """Mixin: vertices as a dense ``alive`` mask (see the module docstring)."""

    def _ensure_vertex_capacity(self, max_id: int) -> None:
        raise NotImplementedError

    @property
    def vertex_capacity(self) -> int:
        return int(self.alive.shape[0])

    @property
    def num_vertices(self) -> int:
        return self._num_vertices

    @property
    def num_edges(self) -> int:
        return self._num_edges

    def vertices(self):
        return self.xp.nonzero(self.alive)[0].astype(VERTEX_DTYPE)

    def _live(self, ids):
        """Mask of the int64 ``ids`` that are live vertices (ids outside the table are not)."""
        xp = self.xp
        cap = self.vertex_capacity
        if cap == 0:
            return xp.zeros(ids.shape[0], dtype=bool)
        return (ids >= 0) & (ids < cap) & self.alive[xp.clip(ids, 0, cap - 1)]

    def _activate(self, ids) -> None:
        """Make the int64 ``ids`` (>= 0, repeats allowed) live; only the ones that were not are counted."""
        if ids.shape[0] == 0:
            return
        self._ensure_vertex_capacity(int(ids.max()))
        fresh = unique_sorted(self.xp, ids[~self.alive[ids]])
        if fresh.shape[0] == 0:
            return
        self._fresh_vertices(fresh)
        self.alive[fresh] = True
        self._num_vertices += int(fresh.shape[0])

    def _fresh_vertices(self, ids) -> None:
        """Hook: set up the per-vertex entries of ``ids`` (distinct, sorted) that are becoming live (a
        structure whose dead entries are not already empty resets them here)."""

    def insert_vertices(self, ids) -> None:
        ids = self.xp.asarray(ids, dtype=np.int64)
        if ids.shape[0] and int(ids.min()) < 0:
            raise ValueError("vertex ids must be >= 0")
        self._activate(ids)

    def insert_new_vertices(self, ids, id_bound: int) -> None:
        """The caller vouches that ``ids`` are distinct, not live and below ``id_bound``: nothing is read
        back from the device."""
        ids = self.xp.asarray(ids, dtype=np.int64)
        if ids.shape[0] == 0:
            return
        self._ensure_vertex_capacity(int(id_bound) - 1)
        self.alive[ids] = True
        self._num_vertices += int(ids.shape[0])

    def _per_vertex(self, values, vertices):
        """``values`` (one per vertex id) at ``vertices``, 0 for ids outside the table; all of it for None."""
        xp = self.xp
        if vertices is None:
            return values.copy()
        v = xp.asarray(vertices, dtype=np.int64)
        cap = self.vertex_capacity
        if cap == 0:
            return xp.zeros(v.shape[0], dtype=values.dtype)
        return xp.where((v >= 0) & (v < cap), values[xp.clip(v, 0, cap - 1)], 0)
