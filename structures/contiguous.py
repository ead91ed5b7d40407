"""Per-vertex contiguous adjacency rows in one edge pool: the machinery Hornet and cuSTINGER share.

Both seed systems (gpu-dynamic-graph-thesis.txt section 2.2; graphvine.txt
related work) store the out-edges of a vertex in ONE contiguous array, a
*row*: vertex ``v`` has ``degree[v]`` edges at pool positions
``row_start[v] .. row_start[v] + degree[v] - 1`` inside an allocation of
``row_capacity[v]`` entries.  Edge data is structure-of-arrays: ``pool_cols``
(int32, ``EMPTY`` = -1 where no edge) and ``pool_weights`` (float32).  What
differs between the two systems is only *where a row's storage comes from and
when it moves*, which a subclass answers through three hooks:

* ``_target_capacity(degree, capacity, growing)`` - the capacity a row of the
  new degree should have (a row moves where it differs from its capacity);
* ``_allocate(capacities)`` - storage for new rows: ``(starts, handles)``;
  may grow (or, for cuSTINGER, compact) the pool, so callers read
  ``row_start`` again afterwards;
* ``_release(starts, capacities, handles)`` - give storage back.

Hornet (:mod:`structures.hornet`) takes power-of-two blocks from block arrays
tracked by a counting bit-tree; cuSTINGER (:mod:`structures.custinger`)
over-allocates by a factor from a bump-allocated pool.

The batch algorithms, written once here as array programs over ``xp``:

* **insert** (Hornet's batch insert; cuSTINGER's insert with duplicate check):
  sort the batch's keys, drop repeats inside the batch (the last weight wins,
  the first occurrence reports "new"), look every key up in its source's row
  (duplicates against the graph only update the weight), count the new edges
  per source, move the rows that outgrow their storage (allocate, copy in
  parallel, release the old storage) and write the new edges after each row's
  last edge, at ``row_start + degree + rank``;
* **delete**: look the keys up, *mark* the found slots with a tombstone, then
  close the holes: in every touched row, the i-th hole below the new degree
  takes the i-th surviving edge at or above it (the batch form of cuSTINGER's
  "swap the last edge into the hole"); rows that should shrink then move;
* **vertex deletion** is a series of edge operations (as in cuSTINGER): the
  out-edges of the dying vertices and their in-edges (found by one scan of the
  live rows; neither system keeps in-edges) are deleted as one edge batch,
  then the rows' storage is released.

Loops run over pool levels / size classes only, never over vertices or edges.
On CuPy the hot steps (row search, row copy, edge write, hole closing, row
gather) run as fused kernels from :mod:`structures.contiguous_kernels`
(``fused=True``, the default there); the array program stays the reference
and ``fused=False`` runs it on the GPU too.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from . import backend
from . import contiguous_kernels as ck
from .array_ops import (
    LOW32,
    doublings,
    edge_keys,
    extended,
    grown_capacity,
    key_sources,
    key_targets,
    segmented_arange,
    sorted_lookup,
)
from .base import DynamicGraph
from .csr_types import CSR, OFFSET_DTYPE, VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch, batch_weights
from .options import MAX_ENTRIES, MAX_VERTEX_CAPACITY, Option
from .vertex_table import AliveVertexTable

EMPTY = -1          # pool_cols of an entry that holds no edge
TOMBSTONE = -2      # pool_cols of a slot marked deleted, until its row is compacted
NO_ROW = -1         # row_start of a vertex without storage

# bytes per vertex entry: alive(1) degree(8) row_start(8) row_capacity(8) row_handle(8)
VERTEX_ENTRY_BYTES = 33
ENTRY_BYTES = 8     # one edge entry: column (int32) + weight (float32)


def _runs(xp, sorted_values):
    """For a sorted array: (first index of every run, run id of every element, run starts mask)."""
    n = sorted_values.shape[0]
    start = xp.ones(n, dtype=bool)
    start[1:] = sorted_values[1:] != sorted_values[:-1]
    first = xp.nonzero(start)[0]
    run = xp.cumsum(start) - 1
    return first, run, start


class ContiguousAdjacency(AliveVertexTable, DynamicGraph):
    """Vertex arrays + one SoA edge pool of contiguous rows; subclasses supply the allocator."""

    #: the options every such structure takes; a subclass adds its allocator's
    options_spec: ClassVar[dict[str, Option]] = {
        "initial_vertex_capacity": Option(int, 0, "vertex entries reserved at the start", low=0,
                                          high=MAX_VERTEX_CAPACITY),
        "fused": Option(bool, True, "the fused CUDA kernels on CuPy (False: the array program)", internal=True),
        "linear_scan_max": Option(int, 128, "fused lookups scan rows up to this length per key; longer rows are "
                                  "searched by sorting", low=0, high=MAX_ENTRIES, internal=True),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        self.fused = self.options["fused"] and backend.is_gpu(xp)
        # fused lookups scan rows up to this length per key; longer rows are searched by sorting
        self.linear_scan_max = self.options["linear_scan_max"]
        self.capacity = 0
        self.alive = xp.zeros(0, dtype=bool)
        self.degree_ = xp.zeros(0, dtype=np.int64)
        self.row_start = xp.zeros(0, dtype=np.int64)
        self.row_capacity = xp.zeros(0, dtype=np.int64)
        self.row_handle = xp.zeros(0, dtype=np.int64)
        self.pool_cols = xp.zeros(0, dtype=VERTEX_DTYPE)
        self.pool_weights = xp.zeros(0, dtype=WEIGHT_DTYPE)
        self._num_vertices = 0
        self._num_edges = 0
        self.stats = {"rows_moved": 0, "entries_copied": 0, "vertex_doublings": 0}
        init_cap = self.options["initial_vertex_capacity"]
        if init_cap > 0:
            self._ensure_vertex_capacity(init_cap - 1)

    # -- allocator hooks ------------------------------------------------------------------
    def _target_capacity(self, degree, capacity, growing: bool):
        raise NotImplementedError

    def _allocate(self, capacities):
        raise NotImplementedError

    def _release(self, starts, capacities, handles) -> None:
        raise NotImplementedError

    def _grow_pool_arrays(self, new_size: int) -> None:
        """Reallocate the pool to ``new_size`` entries, keeping every position (allocators call this)."""
        xp = self.xp
        old = int(self.pool_cols.shape[0])
        cols = xp.full(new_size, EMPTY, dtype=VERTEX_DTYPE)
        weights = xp.zeros(new_size, dtype=WEIGHT_DTYPE)
        cols[:old] = self.pool_cols
        weights[:old] = self.pool_weights
        self.pool_cols, self.pool_weights = cols, weights

    # -- vertices --------------------------------------------------------------------------
    def _ensure_vertex_capacity(self, max_id: int) -> None:
        """Double the vertex arrays until ``max_id`` fits."""
        if max_id < self.capacity:
            return
        xp = self.xp
        new_cap = grown_capacity(self.capacity, max_id + 1)
        self.stats["vertex_doublings"] += doublings(self.capacity, new_cap)
        self.alive = extended(xp, self.alive, new_cap, False)
        self.degree_ = extended(xp, self.degree_, new_cap, 0)
        self.row_start = extended(xp, self.row_start, new_cap, NO_ROW)
        self.row_capacity = extended(xp, self.row_capacity, new_cap, 0)
        self.row_handle = extended(xp, self.row_handle, new_cap, -1)
        self.capacity = new_cap

    def delete_vertices(self, ids):
        """Delete every edge into or out of ``ids`` as one edge batch, then free their rows."""
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        ids = ids[self._live(ids)]
        if ids.shape[0] == 0:
            return xp.zeros(0, dtype=VERTEX_DTYPE), xp.zeros(0, dtype=VERTEX_DTYPE)
        dying = xp.zeros(self.capacity, dtype=bool)
        dying[ids] = True
        ids = xp.nonzero(dying)[0]
        keys = xp.zeros(0, dtype=np.int64)
        if self._num_edges:
            # every live edge (one scan of the rows): the out-edges of the dying vertices and the
            # in-edges, which neither Hornet nor cuSTINGER indexes
            src, pos = segmented_arange(xp, self.row_start, self.degree_)
            dst = self.pool_cols[pos].astype(np.int64)
            hit = dying[src] | dying[dst]
            keys = edge_keys(xp, src[hit], dst[hit])       # ascending: rows in order, then sorted
            keys = xp.sort(keys)
            self._delete_sorted_keys(keys)
        self._relocate(ids, xp.zeros(ids.shape[0], dtype=np.int64), copy_counts=None)
        self.alive[ids] = False
        self._num_vertices -= int(ids.shape[0])
        return key_sources(keys).astype(VERTEX_DTYPE), key_targets(keys).astype(VERTEX_DTYPE)

    # -- row storage -------------------------------------------------------------------------
    def _resize_rows(self, rows, degrees, growing: bool) -> None:
        """Move the ``rows`` (distinct) whose storage does not fit ``degrees`` any more."""
        target = self._target_capacity(degrees, self.row_capacity[rows], growing)
        move = target != self.row_capacity[rows]
        if bool(move.any()):
            self._relocate(rows[move], target[move], copy_counts=self.degree_[rows[move]])

    def _relocate(self, rows, capacities, copy_counts) -> None:
        """Give ``rows`` new storage of ``capacities`` (0: none), copy ``copy_counts`` entries over in
        parallel, clear and release the old storage."""
        xp = self.xp
        n = int(rows.shape[0])
        if n == 0:
            return
        new_start = xp.full(n, NO_ROW, dtype=np.int64)
        new_handle = xp.full(n, -1, dtype=np.int64)
        has = capacities > 0
        if bool(has.any()):
            s, h = self._allocate(capacities[has])
            new_start[has] = s
            new_handle[has] = h
        # read after _allocate: an allocator may have compacted the pool
        old_start, old_cap = self.row_start[rows], self.row_capacity[rows]
        old_handle = self.row_handle[rows]
        if copy_counts is not None:
            self._copy_rows(old_start, new_start, copy_counts, clear_source=True)
            self.stats["entries_copied"] += int(copy_counts.sum())
        held = old_cap > 0
        self._release(old_start[held], old_cap[held], old_handle[held])
        self.row_start[rows] = new_start
        self.row_capacity[rows] = capacities
        self.row_handle[rows] = new_handle
        self.stats["rows_moved"] += n

    def _copy_rows(self, src_start, dst_start, counts, clear_source: bool,
                   src_cols=None, src_weights=None, dst_cols=None, dst_weights=None) -> None:
        """Copy ``counts[i]`` entries from ``src_start[i]`` to ``dst_start[i]`` for every row at once."""
        xp = self.xp
        src_cols = self.pool_cols if src_cols is None else src_cols
        src_weights = self.pool_weights if src_weights is None else src_weights
        dst_cols = self.pool_cols if dst_cols is None else dst_cols
        dst_weights = self.pool_weights if dst_weights is None else dst_weights
        counts = counts.astype(np.int64)
        if self.fused:
            ends = xp.cumsum(counts)
            total = int(ends[-1]) if ends.shape[0] else 0
            ck.launch(xp, "ca_copy_rows", total, ends, ck.i64(ends.shape[0]),
                      xp.ascontiguousarray(src_start), xp.ascontiguousarray(dst_start), ck.i64(total),
                      src_cols, src_weights, dst_cols, dst_weights, ck.i32(int(clear_source)))
            return
        owner, pos = segmented_arange(xp, src_start, counts)
        if owner.shape[0] == 0:
            return
        dest = dst_start[owner] + (pos - src_start[owner])
        dst_cols[dest] = src_cols[pos]
        dst_weights[dest] = src_weights[pos]
        if clear_source:
            src_cols[pos] = EMPTY

    # -- looking edges up --------------------------------------------------------------------
    def _find(self, ukeys):
        """Pool slot of every sorted distinct key (src < capacity, dst >= 0), -1 where absent."""
        xp = self.xp
        n = int(ukeys.shape[0])
        if n == 0 or self._num_edges == 0:
            return xp.full(n, -1, dtype=np.int64)
        if self.fused:
            slot = xp.empty(n, dtype=np.int64)
            ck.launch(xp, "ca_find", n, xp.ascontiguousarray(ukeys), ck.i64(n), self.degree_,
                      self.row_start, self.pool_cols, ck.i64(self.linear_scan_max), slot)
            long_rows = xp.nonzero(slot == -2)[0]
            if long_rows.shape[0]:
                slot[long_rows] = self._find_sorted(ukeys[long_rows])
            return slot
        return self._find_sorted(ukeys)

    def _find_sorted(self, ukeys):
        """The array program's lookup: the rows of the keys' sources as sorted keys, one binary
        search per key (O((k + sum of the row lengths) log))."""
        xp = self.xp
        n = int(ukeys.shape[0])
        s = key_sources(ukeys)
        first, _, _ = _runs(xp, s)
        rows = s[first]
        owner, pos = segmented_arange(xp, self.row_start[rows], self.degree_[rows])
        if owner.shape[0] == 0:
            return xp.full(n, -1, dtype=np.int64)
        row_keys = edge_keys(xp, rows[owner], self.pool_cols[pos])
        order = xp.argsort(row_keys)
        where, hit = sorted_lookup(xp, row_keys[order], ukeys)
        return xp.where(hit, pos[order][where], -1)

    def _sorted_unique(self, src, dst):
        """Sorted distinct keys, with the first and the last batch index of each."""
        xp = self.xp
        key = edge_keys(xp, src, dst)
        order = xp.argsort(key, kind="stable")
        sk = key[order]
        first, _, _ = _runs(xp, sk)
        last = xp.empty_like(first)
        last[:-1] = first[1:] - 1
        last[-1:] = sk.shape[0] - 1
        return sk[first], order[first], order[last]

    # -- edges -------------------------------------------------------------------------------
    def insert_edges(self, batch: CSRBatch):
        xp = self.xp
        src = batch.sources().astype(np.int64)
        dst = xp.asarray(batch.cols).astype(np.int64)
        n = int(dst.shape[0])
        if n == 0:
            return xp.zeros(0, dtype=bool)
        if int(src.min()) < 0 or int(dst.min()) < 0:
            raise ValueError("vertex ids must be >= 0")
        w = batch_weights(xp, batch)
        # 1. sort the batch, drop repeated keys (last weight wins, first occurrence reports)
        ukeys, first_i, last_i = self._sorted_unique(src, dst)
        uw = w[last_i]
        self.insert_vertices(xp.concatenate([src, dst]))           # endpoints exist (no-op normally)
        # 2. duplicates against the graph: only the weight changes
        slot = self._find(ukeys)
        found = slot >= 0
        mask = xp.zeros(n, dtype=bool)
        mask[first_i] = ~found
        new = ~found
        newk = ukeys[new]
        k = int(newk.shape[0])
        self.pool_weights[slot[found]] = uw[found]         # upserts before any row moves
        if k == 0:
            return mask
        # 3. new degrees per source, 4. move rows that outgrow their storage (parallel copies)
        s = key_sources(newk)
        first, run, _ = _runs(xp, s)
        rows = s[first]
        counts = xp.diff(xp.concatenate([first, xp.asarray([k], dtype=first.dtype)]))
        self._resize_rows(rows, self.degree_[rows] + counts, growing=True)
        # 5. write the new edges after each row's last edge
        rank = xp.arange(k, dtype=np.int64) - first[run]
        if self.fused:
            nu = int(ukeys.shape[0])
            ck.launch(xp, "ca_write", nu, xp.ascontiguousarray(ukeys), ck.i64(nu), slot,
                      xp.ascontiguousarray(uw), xp.ascontiguousarray(xp.cumsum(new) - 1),
                      xp.ascontiguousarray(rank), self.degree_, self.row_start, self.pool_cols,
                      self.pool_weights)
        else:
            pos = self.row_start[s] + self.degree_[s] + rank
            self.pool_cols[pos] = key_targets(newk).astype(VERTEX_DTYPE)
            self.pool_weights[pos] = uw[new]
        self.degree_[rows] += counts
        self._num_edges += k
        return mask

    def delete_edges(self, batch: CSRBatch):
        xp = self.xp
        src = batch.sources().astype(np.int64)
        dst = xp.asarray(batch.cols).astype(np.int64)
        n = int(dst.shape[0])
        mask = xp.zeros(n, dtype=bool)
        ok = (src >= 0) & (src < self.capacity) & (dst >= 0)
        if n == 0 or not bool(ok.any()):
            return mask
        idx = xp.nonzero(ok)[0]
        ukeys, first_i, _ = self._sorted_unique(src[idx], dst[idx])
        mask[idx[first_i]] = self._delete_sorted_keys(ukeys)
        return mask

    def _delete_sorted_keys(self, ukeys):
        """Delete sorted distinct keys: mark, close the holes with tail edges, shrink rows. Hit mask."""
        xp = self.xp
        slot = self._find(ukeys)
        hit = slot >= 0
        hslot = slot[hit]
        k = int(hslot.shape[0])
        if k == 0:
            return hit
        self.pool_cols[hslot] = TOMBSTONE                    # mark the slots (cuSTINGER's delete)
        s = key_sources(ukeys[hit])
        first, _, _ = _runs(xp, s)
        rows = s[first]
        counts = xp.diff(xp.concatenate([first, xp.asarray([k], dtype=first.dtype)]))
        new_deg = self.degree_[rows] - counts
        self._close_holes(rows, new_deg)
        self.degree_[rows] = new_deg
        self._num_edges -= k
        self._resize_rows(rows, new_deg, growing=False)
        return hit

    def _close_holes(self, rows, new_deg) -> None:
        """In every row, the i-th marked slot below ``new_deg`` takes the i-th live edge at or above it
        (both in position order); everything from ``new_deg`` on becomes empty."""
        xp = self.xp
        start, old_deg = self.row_start[rows], self.degree_[rows]
        if self.fused:
            ends = xp.cumsum(old_deg)
            total = int(ends[-1])
            hole = xp.empty(total, dtype=np.int64)
            fill = xp.empty(total, dtype=np.int64)
            nr = ck.i64(rows.shape[0])
            ck.launch(xp, "ca_hole_flags", total, ends, nr, xp.ascontiguousarray(start),
                      xp.ascontiguousarray(new_deg), ck.i64(total), self.pool_cols, hole, fill)
            hole = xp.cumsum(hole)
            fill = xp.cumsum(fill)
            hole_pos = xp.empty(max(int(hole[-1]), 1), dtype=np.int64)
            ck.launch(xp, "ca_hole_positions", total, ends, nr, xp.ascontiguousarray(start),
                      xp.ascontiguousarray(new_deg), ck.i64(total), self.pool_cols, hole, hole_pos)
            ck.launch(xp, "ca_fill_holes", total, ends, nr, xp.ascontiguousarray(start),
                      xp.ascontiguousarray(new_deg), ck.i64(total), fill, hole_pos,
                      self.pool_cols, self.pool_weights)
            return
        owner, pos = segmented_arange(xp, start, old_deg)
        local = pos - start[owner]
        dead = self.pool_cols[pos] == TOMBSTONE
        below = local < new_deg[owner]
        holes = pos[dead & below]
        fills = pos[~dead & ~below]
        self.pool_cols[holes] = self.pool_cols[fills]
        self.pool_weights[holes] = self.pool_weights[fills]
        self.pool_cols[pos[~below]] = EMPTY

    # -- bulk initialisation -------------------------------------------------------------
    def load_csr(self, csr: CSR) -> None:
        """Bulk initialisation of an empty structure from a CSR (simple rows, any column order):
        vertices ``0 .. num_rows-1``, every row's storage allocated at once, rows copied in parallel."""
        xp = self.xp
        if self._num_edges or self._num_vertices:
            raise ValueError("load_csr initialises an empty structure")
        nrows = csr.num_rows
        self.insert_vertices(xp.arange(nrows, dtype=np.int64))
        if csr.num_edges == 0:
            return
        cols = xp.asarray(csr.cols, dtype=VERTEX_DTYPE)
        top = int(cols.max())
        if top >= self.capacity:
            self.insert_vertices(xp.arange(nrows, top + 1, dtype=np.int64))
        deg = xp.diff(csr.offsets).astype(np.int64)
        rows = xp.nonzero(deg > 0)[0]
        target = self._target_capacity(deg[rows], xp.zeros(rows.shape[0], dtype=np.int64), True)
        self._relocate(rows, target, copy_counts=None)
        weights = (xp.ones(cols.shape[0], dtype=WEIGHT_DTYPE) if csr.weights is None
                   else xp.asarray(csr.weights, dtype=WEIGHT_DTYPE))
        self._copy_rows(csr.offsets[rows].astype(np.int64), self.row_start[rows], deg[rows], False,
                        src_cols=xp.ascontiguousarray(cols), src_weights=xp.ascontiguousarray(weights))
        self.degree_[rows] = deg[rows]
        self._num_edges = int(cols.shape[0])

    @classmethod
    def from_csr(cls, xp, csr: CSR, **options):
        """A new structure bulk-initialised from ``csr``."""
        g = cls(xp=xp, **options)
        g.load_csr(csr)
        return g

    # -- queries ---------------------------------------------------------------------------
    def _query_slots(self, src, dst):
        xp = self.xp
        src = xp.asarray(src).astype(np.int64)
        dst = xp.asarray(dst).astype(np.int64)
        out = xp.full(src.shape[0], -1, dtype=np.int64)
        ok = (src >= 0) & (src < self.capacity) & (dst >= 0) & (dst <= LOW32)
        if src.shape[0] == 0 or not bool(ok.any()):
            return out
        idx = xp.nonzero(ok)[0]
        key = edge_keys(xp, src[idx], dst[idx])
        sk = xp.sort(key)
        first, _, _ = _runs(xp, sk)
        uk = sk[first]
        slot = self._find(uk)
        out[idx] = slot[xp.searchsorted(uk, key)]
        return out

    def contains(self, src, dst):
        return self._query_slots(src, dst) >= 0

    def edge_weights(self, src, dst):
        xp = self.xp
        slot = self._query_slots(src, dst)
        out = xp.full(slot.shape[0], np.nan, dtype=WEIGHT_DTYPE)
        hit = slot >= 0
        out[hit] = self.pool_weights[slot[hit]]
        return out

    def degree(self, vertices=None):
        return self._per_vertex(self.degree_, vertices)

    def adjacency(self, vertices=None) -> CSR:
        """The requested rows (in that order), each in its storage order: a segmented gather."""
        xp = self.xp
        v = (xp.arange(self.capacity, dtype=np.int64) if vertices is None
             else xp.asarray(vertices, dtype=np.int64))
        counts = self.degree(v)
        offsets = xp.zeros(v.shape[0] + 1, dtype=OFFSET_DTYPE)
        offsets[1:] = xp.cumsum(counts)
        total = int(offsets[-1])
        if total == 0:
            return CSR(offsets=offsets, cols=xp.zeros(0, dtype=VERTEX_DTYPE),
                       weights=xp.zeros(0, dtype=WEIGHT_DTYPE))
        starts = xp.where(counts > 0, self.row_start[xp.clip(v, 0, self.capacity - 1)], 0)
        if self.fused:
            cols = xp.empty(total, dtype=VERTEX_DTYPE)
            weights = xp.empty(total, dtype=WEIGHT_DTYPE)
            ck.launch(xp, "ca_copy_rows", total, offsets[1:], ck.i64(v.shape[0]),
                      xp.ascontiguousarray(starts), offsets[:-1], ck.i64(total),
                      self.pool_cols, self.pool_weights, cols, weights, ck.i32(0))
            return CSR(offsets=offsets, cols=cols, weights=weights)
        _, pos = segmented_arange(xp, starts, counts)
        return CSR(offsets=offsets, cols=self.pool_cols[pos].astype(VERTEX_DTYPE),
                   weights=self.pool_weights[pos].astype(WEIGHT_DTYPE))

    # -- sizes -----------------------------------------------------------------------------
    def _row_memory(self) -> dict:
        """Byte counts every subclass reports: vertex arrays, pool, rows held by live vertices."""
        held = int(self.row_capacity.sum()) if self.capacity else 0
        return {
            "vertex_bytes": VERTEX_ENTRY_BYTES * self.capacity,
            "pool_entries": int(self.pool_cols.shape[0]),
            "pool_bytes": ENTRY_BYTES * int(self.pool_cols.shape[0]),
            "row_entries_held": held,
            "row_bytes_held": ENTRY_BYTES * held,
            "edge_bytes": ENTRY_BYTES * self._num_edges,
            "fill_factor": (self._num_edges / held) if held else 0.0,
            "vertex_capacity": int(self.capacity),
        }
