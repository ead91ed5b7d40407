"""cuSTINGER (Green, Bader, HPEC 2016): per-vertex contiguous edge arrays, over-allocated by a factor.

Sources: graphvine.txt (related work: cuSTINGER "performs individual cudaMalloc
calls to allocate additional edge blocks ... incurs huge penalties when
relocating adjacency lists if they become full while over-allocating space")
and the thesis survey (gpu-dynamic-graph-thesis.txt section 2.2).

Layout:

* **Vertex arrays** (:mod:`structures.contiguous`): degree, a pointer to the
  vertex's edge array (``row_start``) and its allocated length.
* **Edge arrays**: one contiguous array per vertex, structure-of-arrays
  (``pool_cols`` / ``pool_weights``), allocated ``ceil(factor * degree)``
  entries (at least ``min_capacity``) so that later inserts usually fit.
* **Allocation**: cuSTINGER calls ``cudaMalloc`` / ``cudaFree`` per edge
  array.  Here the arrays are carved from one pool by a bump pointer (the
  device allocator's role): a freed array becomes *garbage*; when the pool is
  full, it is compacted (live arrays copied, densely, into a fresh pool, like
  a device allocator defragmenting) and doubled if still too small.

Operations, as cuSTINGER does them, in batch form:

* **insert**: duplicate check of every edge against its source's array
  (only the weight of an existing edge changes); a vertex whose array is
  full gets a new array of ``ceil(factor * new degree)`` entries, its edges are
  copied over and the old array is freed; new edges go after the last edge;
* **delete**: the slot is *marked* and the last edge of the array is swapped
  into the hole (with several deletions in one array: the i-th hole below the
  new degree takes the i-th surviving edge above it); arrays never shrink;
* **vertex operations are series of edge operations**: deleting a vertex
  deletes its out-edges and its in-edges (found by a scan: cuSTINGER keeps no
  in-edges) as one edge-deletion batch, then frees its array; inserting a
  vertex only marks it live (it gets an array with its first edge).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .contiguous import EMPTY, VERTEX_ENTRY_BYTES, ContiguousAdjacency
from .csr_types import VERTEX_DTYPE, WEIGHT_DTYPE
from .options import MAX_ENTRIES, Option
from .registry import register


@register
class CuSTINGER(ContiguousAdjacency):
    """cuSTINGER: one over-allocated contiguous SoA edge array per vertex, reallocated when full.

    Options: :attr:`options_spec`.
    """

    name = "custinger"

    options_spec: ClassVar[dict[str, Option]] = {
        **ContiguousAdjacency.options_spec,
        "factor": Option(float, 2.0, "over-allocation: a full array is replaced by one of factor x its degree",
                         low=1.0),
        "min_capacity": Option(int, 4, "the smallest array, in entries", low=1, high=MAX_ENTRIES),
        "initial_pool_entries": Option(int, 1024, "the first pool's entries", low=1, high=MAX_ENTRIES),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        self.factor = self.options["factor"]
        self.min_capacity = self.options["min_capacity"]
        self._grow_pool_arrays(self.options["initial_pool_entries"])
        self.pool_top = 0          # bump pointer: entries [0, pool_top) have been handed out
        self.garbage = 0           # entries of freed arrays below the bump pointer
        self.stats.update(arrays_allocated=0, arrays_freed=0, compactions=0, pool_doublings=0)

    # -- allocator hooks -----------------------------------------------------------------------
    def _target_capacity(self, degree, capacity, growing: bool):
        """Growing: a full array is replaced by one of ``ceil(factor * degree)`` entries; a vertex
        losing edges keeps its array (cuSTINGER never shrinks)."""
        xp = self.xp
        if not growing:
            return capacity
        wanted = xp.maximum(xp.ceil(degree * self.factor).astype(np.int64), self.min_capacity)
        return xp.where(degree > capacity, wanted, capacity)

    def _allocate(self, capacities):
        xp = self.xp
        need = int(capacities.sum())
        if self.pool_top + need > int(self.pool_cols.shape[0]):
            self._compact(need)
        ends = xp.cumsum(capacities.astype(np.int64))
        starts = self.pool_top + ends - capacities
        self.pool_top += need
        self.stats["arrays_allocated"] += int(capacities.shape[0])
        return starts, xp.full(capacities.shape[0], -1, dtype=np.int64)

    def _release(self, starts, capacities, handles) -> None:
        self.garbage += int(capacities.sum())
        self.stats["arrays_freed"] += int(capacities.shape[0])

    def _compact(self, need: int) -> None:
        """Copy every live array densely into a fresh pool (doubled until ``need`` more fits)."""
        xp = self.xp
        held = self.row_capacity
        live_entries = int(held.sum())
        size = int(self.pool_cols.shape[0])
        while live_entries + need > size:
            size *= 2
            self.stats["pool_doublings"] += 1
        rows = xp.nonzero(held > 0)[0]
        new_start = xp.cumsum(held[rows]) - held[rows]
        cols = xp.full(size, EMPTY, dtype=VERTEX_DTYPE)
        weights = xp.zeros(size, dtype=WEIGHT_DTYPE)
        self._copy_rows(self.row_start[rows], new_start, self.degree_[rows], False,
                        dst_cols=cols, dst_weights=weights)
        self.pool_cols, self.pool_weights = cols, weights
        self.row_start[rows] = new_start
        self.pool_top = live_entries
        self.garbage = 0
        self.stats["compactions"] += 1

    # -- memory ------------------------------------------------------------------------------
    def memory(self) -> dict:
        """Reserved: vertex arrays and the whole pool; used: live vertices and the arrays they hold."""
        rows = self._row_memory()
        reserved = rows["vertex_bytes"] + rows["pool_bytes"]
        used = VERTEX_ENTRY_BYTES * self._num_vertices + rows["row_bytes_held"]
        return {
            "reserved_bytes": int(reserved),
            "used_bytes": int(used),
            **rows,
            "pool_top_entries": int(self.pool_top),
            "garbage_entries": int(self.garbage),
            "overallocation_factor": self.factor,
            "arrays_held": int((self.row_capacity > 0).sum()) if self.capacity else 0,
        }

