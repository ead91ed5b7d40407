"""COO graph with a deleted-slot queue: Ye, Zhang, Su, Feng, "Dynamic Graph Data Structure for GPU" (2023).

Storage (paper section 3.1 and 4.1):

* ``row_idx`` / ``col_idx`` / ``value``: one slot per edge, ``row_idx[i] -> col_idx[i]``
  with weight ``value[i]``; a free slot holds ``-1`` in both index arrays;
* ``v_d``: one flag per vertex id, 1 where the vertex exists;
* ``deleted``: a queue of freed slots, an array with a head and a tail.  A delete
  marks the slot ``-1`` and pushes it at the tail; an insert pops from the head
  and appends past the high-water mark only when the queue is empty (Alg. 7).

What the paper does one edge or one vertex per kernel launch (with ``atomicAdd``
to claim queue positions and result slots), this module does one *batch* per
array program: a batch of new edges claims queue slots by an exclusive prefix
sum over its "is new" flags (rank ``r`` pops ``deleted[head + r]``; ranks past
the queue length append), which is what the atomics serialise.  The paper's
arrays are fixed-size ("a fixed and large enough number", section 4.1); here they
grow geometrically (doubling) when an insert finds the queue empty and the
arrays full, and the queue is a ring buffer as long as the edge arrays, so it
can never overflow (at most every slot is free).

Index (beyond the paper).  The paper answers every query by scanning all slots
(Alg. 2-5, 8, 9): O(E) work per queried vertex or edge.  We keep a sorted index of
edge keys ``(src << 32) | dst`` with the slot of each key, so that

* ``contains``/``edge_weights`` and the existence check before insert/delete
  (section 3.2 D/E: "first make sure ... this edge does not exist") are binary
  searches per batch: O(log E) per query;
* ``degree(vertices)`` and ``adjacency(vertices)`` are searches per vertex plus a
  gather of the rows (the index is in CSR order).

A batch must not rewrite the whole index (O(E) per batch, 0.17 ms of device time per
phase on R-MAT 20, more than the rest of a small batch's phase), so the index is a
small log-structured merge:

* a sorted *main* part and a sorted *log*; new keys are merged into the log only
  (O(log + batch));
* an entry is *live* while its slot holds its own edge: a delete frees the slot
  (paper Alg. 8), which kills the entry without touching the index, and a key
  re-inserted while its dead entry is still there revives that entry with its new slot
  (so a key has at most one entry);
* a *compaction* merges the log into the main part and drops the dead entries once
  the log holds more than ``max(LOG_MIN, LOG_SCALE * sqrt(|main|))`` keys or dead
  entries outnumber ``|main| / DEAD_FRACTION``, and whenever something reads every
  edge anyway (``adjacency()``, a vertex deletion).  With batches of ``k`` edges and a
  log limit ``L``, a batch costs O(k log E + L) and a compaction O(E) every ``L / k``
  batches: about ``sqrt(E)`` times the batch instead of E per batch.

The price: 16 bytes per live edge (key + slot) on top of the 12 of the COO arrays,
plus the log and dead entries between compactions.  Vertex deletion keeps the paper's
full scan (Alg. 9): in-edges are not indexed, and one scan serves the whole batch of
deleted vertices.  ``degree()`` of every vertex is the paper's count over live rows
(Alg. 3), as a ``bincount``.

On a GPU the edge phases and the vertex deletion run fused (:mod:`structures.coo_kernels`): three or four
device operations per phase for a small batch (one more, CuPy's prefix sum, past 8,192 edges) instead of
the array program's few dozen, whose host dispatch is a small batch's whole cost.  The array program
below stays the reference (``fused=False`` runs it on CuPy); both leave the same state, slot for slot.
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from . import coo_kernels
from .array_ops import (
    bincount,
    compact,
    compact_together,
    edge_keys,
    gather_segments,
    grown_capacity,
    key_sources,
    key_targets,
    merge_sorted,
    offsets_of,
    scatter_add,
    segmented_arange,
    sorted_lookup,
)
from .backend import as_contiguous, is_gpu, nbytes, to_numpy
from .base import DynamicGraph
from .csr_types import CSR, OFFSET_DTYPE, VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch, batch_keys, batch_weights
from .options import MAX_ENTRIES, MAX_VERTEX_CAPACITY, Option
from .raw_kernels import i64
from .registry import register

FREE = -1            # row_idx / col_idx of a free slot (paper section 3.1)
SLOT_DTYPE = np.int64
# the index's log (see the module docstring): it holds at most max(LOG_MIN, LOG_SCALE * sqrt(main)) keys,
# and dead entries at most max(LOG_MIN, main / DEAD_FRACTION), before a compaction
LOG_MIN = 4096
LOG_SCALE = 64
DEAD_FRACTION = 4


def _new_and_fresh(packed: int) -> tuple[int, int]:
    """An insert's packed count (one host read): new edges in the low 32 bits, those of them without any
    index entry (which join the log) in the high bits."""
    return packed & 0xFFFFFFFF, packed >> 32


def _length(ids) -> int:
    """Number of ids in an array or a host sequence (no operation on the device)."""
    return int(ids.shape[0]) if hasattr(ids, "shape") else len(ids)


@register
class COOGraph(DynamicGraph):
    """Row / col / value arrays with a deleted-slot queue and a sorted key index (options: :attr:`options_spec`)."""

    name = "coo"

    options_spec: ClassVar[dict[str, Option]] = {
        "vertex_capacity": Option(int, 1024, "vertex ids the first arrays hold (doubled when exceeded)",
                                  low=1, high=MAX_VERTEX_CAPACITY),
        "edge_capacity": Option(int, 4096, "edge slots of the first arrays (doubled when exceeded)",
                                low=1, high=MAX_ENTRIES),
        "index_log_min": Option(int, LOG_MIN, "the smallest log or dead-entry count that forces a compaction of "
                                "the key index", low=1, high=MAX_ENTRIES),
        "fused": Option(bool, True, "the edge phases as the fused kernels of structures.coo_kernels on CuPy",
                        internal=True),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        opt = self.options
        vertex_capacity = opt["vertex_capacity"]
        ecap = opt["edge_capacity"]
        self.fused = opt["fused"] and is_gpu(xp)
        # section 3.1: the three COO arrays and the vertex-existence array v_d
        self.row_idx = xp.full(ecap, FREE, dtype=VERTEX_DTYPE)
        self.col_idx = xp.full(ecap, FREE, dtype=VERTEX_DTYPE)
        self.value = xp.zeros(ecap, dtype=WEIGHT_DTYPE)
        self.v_d = xp.zeros(vertex_capacity, dtype=bool)
        self._dying = xp.zeros(self.v_d.shape[0], dtype=np.uint8)   # the fused vertex deletion's flags
        self._num_live = 0
        # section 4.1: the deleted queue (a ring here), head and tail as host counters
        self.deleted = xp.zeros(ecap, dtype=SLOT_DTYPE)
        self.head = 0
        self.tail = 0
        self.high_water = 0          # slots [0, high_water) have been used at least once
        # the key index (not in the paper; see the module docstring): a sorted main part and a sorted log
        self._keys = xp.zeros(0, dtype=np.int64)
        self._slots = xp.zeros(0, dtype=SLOT_DTYPE)
        self._log_keys = xp.zeros(0, dtype=np.int64)
        self._log_slots = xp.zeros(0, dtype=SLOT_DTYPE)
        self._num_edges = 0          # live edges (the index also holds dead entries until a compaction)
        self.compactions = 0
        self.combined_phases = {"one_read": 0, "insert_again": 0}     # edge_phases_counted's paths taken
        self.log_min = opt["index_log_min"]     # see _log_limit
        # the answer to an empty vertex deletion, made once (a batch without one costs no operation)
        self._no_edges = (xp.zeros(0, dtype=VERTEX_DTYPE), xp.zeros(0, dtype=VERTEX_DTYPE))

    # -- the deleted-slot queue -------------------------------------------------
    @property
    def free_slots(self) -> int:
        """Freed slots waiting in the queue (never-used slots past the high-water mark not counted)."""
        return self.tail - self.head

    @property
    def edge_capacity(self) -> int:
        return int(self.row_idx.shape[0])

    def _push_free(self, slots) -> None:
        """Append freed ``slots`` at the queue's tail (Alg. 8/9: 'add index to delete')."""
        k = int(slots.shape[0])
        if k == 0:
            return
        cap = self.deleted.shape[0]
        pos = (self.tail + self.xp.arange(k, dtype=SLOT_DTYPE)) % cap
        self.deleted[pos] = slots
        self.tail += k

    def _claim_plan(self, k: int):
        """Claim slots for ``k`` new edges on the host: ``(head, queued, high_water, deleted)`` before the
        claim (the new edge of rank ``r`` takes ``deleted[(head + r) % len(deleted)]`` for ``r < queued``,
        slot ``high_water + r - queued`` after), growing the arrays when the fresh slots need it.

        The queue ring returned is the one the slots are read from: a growth (only with the queue
        drained) replaces ``self.deleted`` but not what this claim pops."""
        queued = min(k, self.free_slots)
        fresh = k - queued
        plan = (self.head, queued, self.high_water, self.deleted)
        self.head += queued
        if self.head == self.tail:          # queue drained: restart the ring (keeps counters small)
            self.head = self.tail = 0
        if self.high_water + fresh > self.edge_capacity:
            # appending only happens once the queue is drained, so growing loses no queued slot
            self._grow_edges(self.high_water + fresh)
        self.high_water += fresh
        return plan

    def _claim_slots(self, k: int):
        """Slots for the batch's ``k`` new edges: queued ones first (FIFO), then fresh ones past the high-water mark.

        The batch version of Alg. 7: the new edge of rank ``r`` (its place among
        the batch's new edges, in batch order) takes ``deleted[head + r]`` while
        the queue lasts and slot ``high_water + r - queued`` after it, all at
        once; the paper's host-side head/tail updates become one addition.
        """
        xp = self.xp
        head, queued, high_water, deleted = self._claim_plan(k)
        rank = xp.arange(k, dtype=SLOT_DTYPE)
        cap = deleted.shape[0]
        from_queue = deleted[(head + xp.minimum(rank, max(queued - 1, 0))) % cap]
        return xp.where(rank < queued, from_queue, high_water + rank - queued)

    def _grow_edges(self, needed: int) -> None:
        """Double the COO arrays (and the queue ring) until ``needed`` slots fit."""
        xp = self.xp
        old = self.edge_capacity
        new = grown_capacity(old, needed)
        row = xp.full(new, FREE, dtype=VERTEX_DTYPE)
        col = xp.full(new, FREE, dtype=VERTEX_DTYPE)
        val = xp.zeros(new, dtype=WEIGHT_DTYPE)
        row[:old] = self.row_idx
        col[:old] = self.col_idx
        val[:old] = self.value
        self.row_idx, self.col_idx, self.value = row, col, val
        # only called with an empty queue: a fresh ring loses nothing
        assert self.free_slots == 0
        self.deleted = xp.zeros(new, dtype=SLOT_DTYPE)
        self.head = self.tail = 0

    # -- the index ----------------------------------------------------------------
    @property
    def _dead_entries(self) -> int:
        """Index entries whose edge is gone (their slot was freed, or holds another edge now)."""
        return int(self._keys.shape[0]) + int(self._log_keys.shape[0]) - self._num_edges

    def _log_limit(self) -> int:
        """The log's size that forces a compaction: about sqrt(|E|) (see the module docstring)."""
        return max(self.log_min, LOG_SCALE * math.isqrt(int(self._keys.shape[0])))

    def _entry_live(self, keys, slots):
        """Whether each index entry is live: its slot holds its own edge."""
        xp = self.xp
        at = xp.maximum(slots, 0)
        return ((slots >= 0) & (self.row_idx[at] == key_sources(keys))
                & (self.col_idx[at] == key_targets(keys)))

    def _slot_at(self, pos):
        """The slot of each entry at virtual position ``pos`` (main ``[0, n)``, log ``n + q``); -1 for -1."""
        xp = self.xp
        n, nlog = int(self._keys.shape[0]), int(self._log_keys.shape[0])
        out = xp.full(pos.shape[0], -1, dtype=SLOT_DTYPE)
        if n:
            out = xp.where((pos >= 0) & (pos < n), self._slots[xp.clip(pos, 0, n - 1)], out)
        if nlog:
            out = xp.where(pos >= n, self._log_slots[xp.clip(pos - n, 0, nlog - 1)], out)
        return out

    def _lookup(self, keys):
        """``(pos, slot, live)`` of each key: its entry's virtual position (-1: none; a key has at most one
        entry), the slot it names and whether it is live.  Two binary searches per key."""
        xp = self.xp
        n = int(self._keys.shape[0])
        at_main, in_main = sorted_lookup(xp, self._keys, keys)
        if not self._log_keys.shape[0]:                  # no log: the main part alone
            pos = xp.where(in_main, at_main, -1)
            slot = xp.where(in_main, self._slots[at_main], -1) if n else pos
        else:
            at_log, in_log = sorted_lookup(xp, self._log_keys, keys)
            pos = xp.where(in_main, at_main, xp.where(in_log, n + at_log, -1))
            in_log_slot = xp.where(in_log, self._log_slots[at_log], -1)
            slot = xp.where(in_main, self._slots[at_main], in_log_slot) if n else in_log_slot
        if not self._dead_entries:                       # every entry is live
            return pos, slot, pos >= 0
        return pos, slot, self._entry_live(keys, slot)

    def _revive(self, pos, slots) -> None:
        """Dead entries at virtual positions ``pos`` (distinct) take the new ``slots`` of their keys' edges.

        Which part each position is in is only known on the device, so both parts get a scatter-add
        at clipped positions: the right part adds ``new - old``, the other adds 0 wherever it lands."""
        xp = self.xp
        n, nlog = int(self._keys.shape[0]), int(self._log_keys.shape[0])
        if n:
            at = xp.clip(pos, 0, n - 1)
            scatter_add(xp, self._slots, at, xp.where(pos < n, slots - self._slots[at], 0))
        if nlog:
            at = xp.clip(pos - n, 0, nlog - 1)
            scatter_add(xp, self._log_slots, at, xp.where(pos >= n, slots - self._log_slots[at], 0))

    def _merge_into_log(self, keys, slots) -> None:
        """Sorted new ``keys`` (with no entry yet) join the log: O(log + batch), not O(E)."""
        xp = self.xp
        if self.fused:
            nlog, m = int(self._log_keys.shape[0]), int(keys.shape[0])
            out_keys, out_slots = xp.empty(nlog + m, dtype=np.int64), xp.empty(nlog + m, dtype=SLOT_DTYPE)
            coo_kernels.launch(xp, "coo_index_merge", nlog + m, i64(nlog), self._log_keys, self._log_slots,
                               i64(m), keys, slots, out_keys, out_slots)
            self._log_keys, self._log_slots = out_keys, out_slots
        else:
            self._log_keys, self._log_slots = merge_sorted(xp, self._log_keys, self._log_slots, keys, slots)

    def _compact_index(self) -> None:
        """Main and log merged into one sorted main part without the dead entries (no transfer: the
        live count is known on the host)."""
        xp = self.xp
        if not self._log_keys.shape[0] and not self._dead_entries:
            return
        keys, slots = merge_sorted(xp, self._keys, self._slots, self._log_keys, self._log_slots)
        live = self._entry_live(keys, slots)
        self._keys, self._slots = compact_together(xp, (keys, slots), live, self._num_edges)
        self._log_keys = xp.zeros(0, dtype=np.int64)
        self._log_slots = xp.zeros(0, dtype=SLOT_DTYPE)
        self.compactions += 1

    def _maybe_compact(self) -> None:
        """Compact once the log outgrows its limit or dead entries exceed a quarter of the main part."""
        if (int(self._log_keys.shape[0]) > self._log_limit()
                or self._dead_entries > max(self.log_min, int(self._keys.shape[0]) // DEAD_FRACTION)):
            self._compact_index()

    # -- vertices (section 3.2 A, D, E) -----------------------------------------
    def _grow_vertices(self, needed: int) -> None:
        if needed > self.vertex_capacity:
            v_d = self.xp.zeros(grown_capacity(self.vertex_capacity, needed), dtype=bool)
            v_d[: self.vertex_capacity] = self.v_d
            self.v_d = v_d
            self._dying = self.xp.zeros(v_d.shape[0], dtype=np.uint8)

    def _dying_flags(self):
        """The fused vertex deletion's per-vertex flags (all zero between calls), sized with ``v_d``."""
        if self._dying.shape[0] < self.vertex_capacity:       # v_d replaced wholesale (a restore)
            self._dying = self.xp.zeros(self.vertex_capacity, dtype=np.uint8)
        return self._dying

    def insert_vertices(self, ids) -> None:
        """Alg. 1/6: set ``v_d[v] = 1`` for every id (growing ``v_d``); live ids keep their edges."""
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        if ids.shape[0] == 0:
            return
        self._grow_vertices(int(ids.max()) + 1)
        self.v_d[ids] = True
        self._num_live = int(self.v_d.sum())

    def insert_new_vertices(self, ids, id_bound: int) -> None:
        """:meth:`insert_vertices` of distinct, dead ids below ``id_bound``: no transfer."""
        if _length(ids) == 0:
            return
        ids = self.xp.asarray(ids)                   # any integer ids index v_d (no conversion)
        self._grow_vertices(int(id_bound))
        if self.fused and ids.dtype == VERTEX_DTYPE:
            coo_kernels.launch(self.xp, "coo_vertex_insert", ids.shape[0], as_contiguous(self.xp, ids),
                               i64(ids.shape[0]), self.v_d)
        else:
            self.v_d[ids] = True
        self._num_live += int(ids.shape[0])

    def delete_vertices(self, ids) -> tuple:
        """Alg. 9 over a batch of vertices: one scan frees every slot whose row or column dies."""
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        ids = ids[(ids >= 0) & (ids < self.vertex_capacity)]
        if ids.shape[0] == 0:
            return xp.zeros(0, dtype=VERTEX_DTYPE), xp.zeros(0, dtype=VERTEX_DTYPE)
        dying = xp.zeros(self.vertex_capacity, dtype=bool)
        dying[ids] = self.v_d[ids]
        self.v_d[ids] = False
        self._num_live = int(self.v_d.sum())
        self._compact_index()              # the scan below rewrites the index anyway
        return self._remove_incident(dying)

    def delete_live_vertices(self, ids) -> tuple:
        """:meth:`delete_vertices` of distinct live ids: the scan and one transfer (its two sizes)."""
        xp = self.xp
        if _length(ids) == 0:
            return self._no_edges
        self._compact_index()              # the scan rewrites the index anyway
        if self.fused:
            return self._delete_live_vertices_fused(as_contiguous(xp, ids, VERTEX_DTYPE))
        ids = xp.asarray(ids, dtype=np.int64)
        dying = xp.zeros(self.vertex_capacity, dtype=bool)
        dying[ids] = True
        self.v_d[ids] = False
        self._num_live -= int(ids.shape[0])
        return self._remove_incident(dying)

    def _delete_live_vertices_fused(self, ids) -> tuple:
        """:meth:`delete_live_vertices` in five operations (``coo_kernels``' vertex kernels): mark the
        dying vertices, flag the freed slots and kept keys, one prefix sum, the removal, one read of both
        sizes.  The same state as the array program, slot for slot and queue entry for queue entry."""
        xp, k = self.xp, int(ids.shape[0])
        hw, n = self.high_water, int(self._keys.shape[0])
        dying = self._dying_flags()
        launch = coo_kernels.launch
        launch(xp, "coo_vertex_mark", k, ids, i64(k), dying, self.v_d)
        self._num_live -= k
        flags = xp.empty(max(hw + n, 1), dtype=np.int64)
        launch(xp, "coo_vertex_hits", hw + n, self.row_idx, self.col_idx, i64(hw), self._keys, i64(n), dying, flags)
        cs = xp.cumsum(flags)
        ends = xp.empty(2 * max(hw, 1), dtype=VERTEX_DTYPE)
        index = xp.empty(2 * n + 2, dtype=np.int64)
        new_keys, new_slots, header = index[:n], index[n:2 * n], index[2 * n:]
        launch(xp, "coo_vertex_remove", max(hw + n, k), self.row_idx, self.col_idx, i64(hw), self._keys,
               self._slots, i64(n), flags, cs, ids, i64(k), dying, self.deleted, i64(self.deleted.shape[0]),
               i64(self.tail), ends[:hw], ends[hw:], new_keys, new_slots, header)
        n_hit, n_keep = (int(v) for v in to_numpy(header).tolist())        # the one transfer
        self.tail += n_hit
        self._keys, self._slots = new_keys[:n_keep], new_slots[:n_keep]
        self._num_edges = n_keep
        return ends[:n_hit], ends[hw:hw + n_hit]

    def _remove_incident(self, dying) -> tuple:
        """Free every slot whose row or column is ``dying`` (one scan) and drop their keys from the
        index; the removed ``(src, dst)``.  Both result sizes come back in one transfer."""
        xp = self.xp
        row = self.row_idx[: self.high_water]
        col = self.col_idx[: self.high_water]
        used = row != FREE
        # free slots look up vertex 0 and are masked out by `used` (no negative indexing)
        hit = used & (dying[xp.where(used, row, 0)] | dying[xp.where(used, col, 0)])
        keep = ~(dying[key_sources(self._keys)] | dying[key_targets(self._keys)])
        n_hit, n_keep = (int(v) for v in xp.stack([hit.sum(), keep.sum()]).tolist())
        slots = compact(xp, xp.arange(self.high_water, dtype=SLOT_DTYPE), hit, n_hit)
        removed = (row[slots].copy(), col[slots].copy())
        self._free(slots)
        self._keys, self._slots = compact_together(xp, (self._keys, self._slots), keep, n_keep)
        self._num_edges = n_keep
        return removed

    def _free(self, slots) -> None:
        """Mark ``slots`` free (-1) and queue them for reuse (section 3.1)."""
        self.row_idx[slots] = FREE
        self.col_idx[slots] = FREE
        self._push_free(slots)

    # -- edges (section 3.2 D, E) -----------------------------------------------
    def insert_edges(self, batch: CSRBatch):
        """Alg. 7 over a batch: upsert existing keys in place, place new ones in popped/appended slots."""
        return self.insert_edges_counted(batch)[0]

    def insert_edges_counted(self, batch: CSRBatch):
        """:meth:`insert_edges` and its number of new edges: its one transfer (which sizes the slot
        claim and the compactions)."""
        xp = self.xp
        if self.fused:
            return self._insert_fused(batch)
        keys = batch_keys(xp, batch)
        k = keys.shape[0]
        if k == 0:
            return xp.zeros(0, dtype=bool), 0
        weights = batch_weights(xp, batch)
        pos, slot, live = self._lookup(keys)
        new = ~live
        fresh = new & (pos < 0)                 # no entry at all: joins the log (a dead entry is revived)
        n_new, n_fresh = _new_and_fresh(int((new.astype(np.int64) + (fresh.astype(np.int64) << 32)).sum()))
        # an existing edge only changes its weight, in its own slot
        n_old = int(k) - n_new
        old_slots, old_weights = compact_together(xp, (slot, weights), live, n_old)
        self.value[old_slots] = old_weights
        # new keys still ascending: a sorted batch, filtered; their index positions name the dead entries to revive
        new_keys, new_weights, new_pos = compact_together(xp, (keys, weights, pos), new, n_new)
        slots = self._claim_slots(n_new)
        self.row_idx[slots] = key_sources(new_keys).astype(VERTEX_DTYPE)
        self.col_idx[slots] = key_targets(new_keys).astype(VERTEX_DTYPE)
        self.value[slots] = new_weights
        if n_fresh == n_new:                          # no dead entry to revive: all join the log
            self._merge_into_log(new_keys, slots)
        else:
            revived = new_pos >= 0
            self._revive(*compact_together(xp, (new_pos, slots), revived, n_new - n_fresh))
            if n_fresh:
                self._merge_into_log(*compact_together(xp, (new_keys, slots), ~revived, n_fresh))
        self._num_edges += n_new
        self._maybe_compact()
        return new, n_new

    def delete_edges(self, batch: CSRBatch):
        """Alg. 8 over a batch: look the keys up, free their slots, drop them from the index."""
        return self.delete_edges_counted(batch)[0]

    def delete_edges_counted(self, batch: CSRBatch):
        """:meth:`delete_edges` and its number of removed edges: its one transfer."""
        xp = self.xp
        if self.fused:
            return self._delete_fused(batch)
        keys = batch_keys(xp, batch)
        if keys.shape[0] == 0:
            return xp.zeros(0, dtype=bool), 0
        _, slot, live = self._lookup(keys)
        n_found = int(live.sum())
        # freeing a slot kills its index entry: the index is not touched (a compaction drops it later)
        self._free(compact(xp, slot, live, n_found))   # distinct: the batch's keys are
        self._num_edges -= n_found
        self._maybe_compact()
        return live, n_found

    # -- the fused GPU path (structures/coo_kernels.py): the same state as the array program ------
    def _find_fused(self, batch: CSRBatch, insert: bool, total=None):
        """``coo_find`` over the batch and the inclusive prefix sum of its packed flags: (mask, flag, rank,
        key, pos, weights, total of the flags).  The total is the phase's one read back.  A small batch
        (up to ``BLOCK_FIND_MAX`` edges) takes both in one one-block launch (``coo_find_block``); a small
        delete also releases the found edges' slots in it (``coo_delete_block``: no ``_delete_apply``).

        ``total``: a one-element device array the one-block kernel writes the total into, which is then
        returned unread (a caller reading several totals at once; small batches only)."""
        xp = self.xp
        k = batch.num_edges
        rows = as_contiguous(xp, batch.rows, VERTEX_DTYPE)
        offsets = as_contiguous(xp, batch.offsets, np.int64)
        cols = as_contiguous(xp, batch.cols, VERTEX_DTYPE)
        weights = as_contiguous(xp, batch_weights(xp, batch)) if insert else self.value
        scratch = xp.empty(4 * k + 1, dtype=np.int64)        # key, pos, flag, rank, total: one allocation
        key, pos, flag, rank = (scratch[i * k:(i + 1) * k] for i in range(4))
        mask = xp.empty(k, dtype=bool)
        args = (rows, offsets, i64(rows.shape[0]), cols, i64(k), self._keys, self._slots, i64(self._keys.shape[0]),
                self._log_keys, self._log_slots, i64(self._log_keys.shape[0]),
                self.row_idx, self.col_idx, weights, self.value, np.int32(1 if insert else 0), key, pos, flag, mask)
        small = k <= coo_kernels.BLOCK_FIND_MAX
        if small and not insert:                         # a small delete: find, prefix sum and release at once
            got = scratch[4 * k:] if total is None else total
            coo_kernels.launch_block(xp, "coo_delete_block", *args, rank, got, self.deleted,
                                     i64(self.deleted.shape[0]), i64(self.tail))
        elif small:                                      # find and prefix sum in one launch
            got = scratch[4 * k:] if total is None else total
            coo_kernels.launch_block(xp, "coo_find_block", *args, rank, got)
        if total is not None:
            assert small, k
            return mask, flag, rank, key, pos, weights, total
        if small:
            total = got
        else:
            coo_kernels.launch(xp, "coo_find", k, *args)
            xp.cumsum(flag, out=rank)
            total = rank[k - 1:]
        return mask, flag, rank, key, pos, weights, int(total[0])

    def _delete_apply(self, k: int, flag, rank, pos) -> None:
        """``coo_delete_apply``: the found edges' slots freed and queued at the tail (the host's counters
        are moved by the caller, once it knows how many)."""
        coo_kernels.launch(self.xp, "coo_delete_apply", k, i64(k), flag, rank, pos, self._slots,
                           i64(self._keys.shape[0]), self._log_slots, self.row_idx, self.col_idx, self.deleted,
                           i64(self.deleted.shape[0]), i64(self.tail))

    @property
    def combined_edge_phases(self) -> bool:
        """Whether :meth:`edge_phases_counted` saves a read over the two phases one after the other (the
        fused path: the pipeline then calls it, timed as one ``edges`` phase)."""
        return self.fused

    def edge_phases_counted(self, inserts: CSRBatch, deletes: CSRBatch):
        """:meth:`DynamicGraph.edge_phases_counted`, the same state.

        On the fused path with both batches small, ONE read instead of two: the delete's find and slot
        release (``coo_delete_block``, one launch) and the insert's find are queued, then both totals come
        back in one transfer.  The insert's find may run after the delete's release because the key sets
        are disjoint: a freed slot held a delete key, so no insert key's entry changes liveness (an entry
        naming that slot was dead already).  Should the delete's bookkeeping compact the index (it moves
        the entries the insert found), the insert runs again from its find (its upserts write the same
        weights again)."""
        kd, ki = deletes.num_edges, inserts.num_edges
        small = max(kd, ki) <= coo_kernels.BLOCK_FIND_MAX
        if not (self.fused and kd and ki and small):
            return super().edge_phases_counted(inserts, deletes)
        xp = self.xp
        totals = xp.empty(2, dtype=np.int64)
        dmask = self._find_fused(deletes, insert=False, total=totals[:1])[0]     # found and released
        found = self._find_fused(inserts, insert=True, total=totals[1:])
        n_gone, total = (int(v) for v in to_numpy(totals).tolist())        # the one transfer
        compactions = self.compactions
        if n_gone:                                          # as the delete phase alone does
            self._released(n_gone)
        self.combined_phases["one_read"] += 1
        if self.compactions != compactions:                 # the insert's positions are stale: again
            self.combined_phases["insert_again"] += 1
            new_mask, n_new = self._insert_fused(inserts)
        else:
            new_mask, n_new = self._insert_found(ki, found[:-1], total)
        return new_mask, n_new, dmask, n_gone

    def _delete_fused(self, batch: CSRBatch):
        """Alg. 8 over a batch in two device operations (four past ``BLOCK_FIND_MAX`` edges): find with
        its prefix sum and the release (one block), read the count; past that size the slots are freed and
        queued after the read (``_delete_apply``).  Freeing a slot kills its index entry: the index is not
        rewritten."""
        xp = self.xp
        k = batch.num_edges
        if k == 0:
            return xp.zeros(0, dtype=bool), 0
        mask, flag, rank, _, pos, _, n_found = self._find_fused(batch, insert=False)
        if n_found == 0:
            return mask, 0
        if k > coo_kernels.BLOCK_FIND_MAX:              # a small batch's block released them already
            self._delete_apply(k, flag, rank, pos)
        self._released(n_found)
        return mask, n_found

    def _released(self, n: int) -> None:
        """The host's side of ``n`` edges whose slots the device freed and queued at the tail: the queue's
        tail, the edge count, and a compaction of the index when its dead entries call for one."""
        self.tail += n
        self._num_edges -= n
        self._maybe_compact()

    def _insert_fused(self, batch: CSRBatch):
        """Alg. 7 over a batch in four device operations (five past ``BLOCK_FIND_MAX`` edges): find
        (upserting existing weights) with its prefix sum, read the counts, place the new edges in popped
        or fresh slots (reviving dead entries of their keys), merge the other new keys into the log."""
        xp = self.xp
        k = batch.num_edges
        if k == 0:
            return xp.zeros(0, dtype=bool), 0
        *found, total = self._find_fused(batch, insert=True)
        return self._insert_found(k, found, total)

    def _insert_found(self, k: int, found, total: int):
        """The rest of :meth:`_insert_fused` once the find's total is read: claim, place, merge."""
        xp = self.xp
        mask, flag, rank, key, pos, weights = found
        n_new, n_fresh = _new_and_fresh(total)
        if n_new == 0:
            return mask, 0
        head, queued, high_water, deleted = self._claim_plan(n_new)
        new_keys, new_slots = xp.empty(n_fresh, dtype=np.int64), xp.empty(n_fresh, dtype=SLOT_DTYPE)
        coo_kernels.launch(xp, "coo_insert_place", k, i64(k), flag, rank, key, pos, weights, deleted,
                           i64(deleted.shape[0]), i64(head), i64(queued), i64(high_water),
                           self.row_idx, self.col_idx, self.value, self._slots, i64(self._keys.shape[0]),
                           self._log_slots, new_keys, new_slots)
        if n_fresh:
            self._merge_into_log(new_keys, new_slots)
        self._num_edges += n_new
        self._maybe_compact()
        return mask, n_new

    def contains(self, src, dst):
        """Check edge: binary searches of the key index instead of the paper's scan."""
        if self.fused:
            return self._query_fused(src, dst)[0]
        return self._lookup(edge_keys(self.xp, src, dst))[2]

    def edge_weights(self, src, dst):
        """Get weight: ``value`` at the slot the index names; NaN where the edge is absent."""
        xp = self.xp
        if self.fused:
            return self._query_fused(src, dst)[1]
        _, slot, live = self._lookup(edge_keys(xp, src, dst))
        return xp.where(live, self.value[xp.maximum(slot, 0)], np.float32(np.nan)).astype(WEIGHT_DTYPE)

    def _query_fused(self, src, dst):
        """``(found, weight)`` of each queried edge in one launch (``coo_query``)."""
        xp = self.xp
        src, dst = as_contiguous(xp, src, np.int64), as_contiguous(xp, dst, np.int64)
        k = int(src.shape[0])
        found, weight = xp.empty(k, dtype=bool), xp.empty(k, dtype=WEIGHT_DTYPE)
        coo_kernels.launch(xp, "coo_query", k, src, dst, i64(k), self._keys, self._slots, i64(self._keys.shape[0]),
                           self._log_keys, self._log_slots, i64(self._log_keys.shape[0]),
                           self.row_idx, self.col_idx, self.value, found, weight)
        return found, weight

    # -- degrees and neighbours (section 3.2 B, C) -------------------------------
    def _row_bounds(self, vertices):
        """Main index range of each vertex's out-edges: its keys lie in [v << 32, (v + 1) << 32)."""
        xp = self.xp
        v = xp.asarray(vertices, dtype=np.int64)
        start = xp.searchsorted(self._keys, v << 32)
        end = xp.searchsorted(self._keys, (v + 1) << 32)
        return start.astype(OFFSET_DTYPE), end.astype(OFFSET_DTYPE)

    def _rows(self, vertices):
        """``(offsets, keys, slots)`` of the live out-edges of ``vertices`` (a row's main entries, then its log's).

        With a clean index (no log, no dead entry) this is one segmented gather of main ranges;
        otherwise the vertex's ranges in the main part and the log are gathered together, grouped by
        vertex with one stable sort, and the dead entries dropped (one read: how many are live)."""
        xp = self.xp
        if not self._log_keys.shape[0] and not self._dead_entries:
            start, end = self._row_bounds(vertices)
            offsets, idx = gather_segments(xp, start, end - start)
            return offsets, self._keys[idx], self._slots[idx]
        v = xp.asarray(vertices, dtype=np.int64)
        k, n, nlog = int(v.shape[0]), int(self._keys.shape[0]), int(self._log_keys.shape[0])
        starts = xp.concatenate([xp.searchsorted(self._keys, v << 32),
                                 n + xp.searchsorted(self._log_keys, v << 32)])
        ends = xp.concatenate([xp.searchsorted(self._keys, (v + 1) << 32),
                               n + xp.searchsorted(self._log_keys, (v + 1) << 32)])
        owner, at = segmented_arange(xp, starts, ends - starts)       # virtual positions
        owner = owner % max(k, 1)
        in_main = at < n
        keys = xp.where(in_main, self._keys[xp.clip(at, 0, max(n - 1, 0))] if n else 0,
                        self._log_keys[xp.clip(at - n, 0, max(nlog - 1, 0))] if nlog else 0)
        slots = self._slot_at(at)
        if not self._dead_entries:          # every entry is live (an insert-only stream): group by vertex
            order = xp.argsort(owner, kind="stable")
            return offsets_of(xp, bincount(xp, owner, k)), keys[order], slots[order]
        live = self._entry_live(keys, slots)
        order = xp.argsort(xp.where(live, owner, k), kind="stable")    # the dead entries last
        offsets = offsets_of(xp, bincount(xp, xp.where(live, owner, k), k))
        total = int(offsets[-1])                                       # the live entries
        order = order[:total]
        return offsets, keys[order], slots[order]

    def degree(self, vertices=None):
        """Out-degree. All vertices: Alg. 3 as one ``bincount`` over the live rows; a subset: the index."""
        xp = self.xp
        if vertices is None:
            row = self.row_idx[: self.high_water]
            return bincount(xp, row[row != FREE], self.vertex_capacity)
        if not self._log_keys.shape[0] and not self._dead_entries:
            start, end = self._row_bounds(vertices)
            return (end - start).astype(np.int64)
        return xp.diff(self._rows(vertices)[0]).astype(np.int64)

    def in_degree(self, vertices=None):
        """Alg. 2 (in-degree) as one ``bincount`` over the live columns."""
        xp = self.xp
        col = self.col_idx[: self.high_water]
        counts = bincount(xp, col[col != FREE], self.vertex_capacity)
        if vertices is None:
            return counts
        v = xp.asarray(vertices, dtype=np.int64)
        inside = (v >= 0) & (v < counts.shape[0])
        return xp.where(inside, counts[xp.where(inside, v, 0)], 0)

    def adjacency(self, vertices=None) -> CSR:
        """Alg. 4 (destinations of a vertex) for many vertices: a segmented gather of index ranges.

        The array program's whole-graph read compacts the index first (it reads every edge anyway, and
        later reads of any rows are then one gather).  The fused read does not: its kernels read each
        row's ranges of the main index and of the log in place, so a compaction (a merge of the two and
        a compaction of the dead entries: a dozen array operations, most of a coo replay's per-epoch
        adjacency on a GPU) is left to the update that outgrows the log (``_maybe_compact``)."""
        xp = self.xp
        if vertices is None:
            vertices = xp.arange(self.vertex_capacity, dtype=np.int64)
            if self.fused:           # every live edge is in a row: the total is known, no read of it
                return self._adjacency_fused(vertices, total=self._num_edges)
            self._compact_index()
        if self.fused:
            return self._adjacency_fused(as_contiguous(xp, vertices, np.int64))
        offsets, keys, slots = self._rows(vertices)
        return CSR(offsets=offsets, cols=key_targets(keys).astype(VERTEX_DTYPE), weights=self.value[slots])

    def _adjacency_fused(self, v, total: int | None = None) -> CSR:
        """``adjacency(vertices)`` by ``coo_rows_*``: count (with the offsets, for a small set), one read of
        the total (``total``: the caller knows it, no read), fill."""
        xp, k = self.xp, int(v.shape[0])
        scratch = xp.empty(6 * k + 1, dtype=np.int64)         # bounds (4 per vertex), counts, offsets
        bounds, counts, offsets = scratch[:4 * k], scratch[4 * k:5 * k], scratch[5 * k:]
        args = (v, i64(k), self._keys, self._slots, i64(self._keys.shape[0]), self._log_keys, self._log_slots,
                i64(self._log_keys.shape[0]), self.row_idx, self.col_idx, bounds, counts)
        if k <= coo_kernels.BLOCK_FIND_MAX:
            coo_kernels.launch_block(xp, "coo_rows_count_block", *args, offsets)
        else:
            coo_kernels.launch(xp, "coo_rows_count", k, *args)
            offsets[:1] = 0
            xp.cumsum(counts, out=offsets[1:])
        if total is None:
            total = int(offsets[k]) if k else 0
        cols, weights = xp.empty(total, dtype=VERTEX_DTYPE), xp.empty(total, dtype=WEIGHT_DTYPE)
        if total:
            coo_kernels.launch(xp, "coo_rows_fill", k, i64(k), self._keys, self._slots, self._log_keys,
                               self._log_slots, self.row_idx, self.col_idx, self.value, bounds, offsets,
                               cols, weights)
        return CSR(offsets=offsets, cols=cols, weights=weights)

    # -- sizes --------------------------------------------------------------------
    @property
    def num_vertices(self) -> int:
        return self._num_live

    @property
    def num_edges(self) -> int:
        return self._num_edges

    @property
    def vertex_capacity(self) -> int:
        return int(self.v_d.shape[0])

    def vertices(self):
        return self.xp.nonzero(self.v_d)[0].astype(VERTEX_DTYPE)

    def memory(self) -> dict:
        """Reserved: everything allocated; used: the live edges' slots, queued slot ids, live flags, index."""
        slot_bytes = self.row_idx.itemsize + self.col_idx.itemsize + self.value.itemsize
        index_bytes = nbytes(self._keys, self._slots, self._log_keys, self._log_slots)
        reserved = nbytes(self.row_idx, self.col_idx, self.value, self.deleted, self.v_d) + index_bytes
        used = (self.num_edges * slot_bytes + self.free_slots * self.deleted.itemsize
                + self._num_live * self.v_d.itemsize + index_bytes)
        return {
            "reserved_bytes": int(reserved),
            "used_bytes": int(used),
            "free_slots": int(self.free_slots),
            "capacity_edges": self.edge_capacity,
            "high_water_slots": int(self.high_water),
            "index_bytes": int(index_bytes),
            "index_log_entries": int(self._log_keys.shape[0]),
            "index_dead_entries": int(self._dead_entries),
            "index_compactions": int(self.compactions),
            "fill_factor": self.num_edges / self.edge_capacity,
        }
