"""GPMA+ (Sha et al., "Accelerating Dynamic Graph Analytics on GPUs"): one packed memory array of edges.

Sources: the thesis survey, gpu-dynamic-graph-thesis.txt section 2.2.2 (Figure 2.1 and its
density table), and the GraphVine paper's related work (graphvine.txt, GPMA and GPMA+).

Layout (struct-of-arrays on ``self.xp``):

* **The packed memory array.**  Every edge of the graph is one int64 key
  ``(src << 32) | dst`` in ``slot_keys`` (weight in ``slot_weights``), and the
  live keys are sorted across the whole array by (src, dst), with gaps
  (``GAP``, the largest int64) between them to absorb updates.  The array has
  ``capacity`` slots (a power of two), cut into ``num_segments`` *leaf
  segments* of ``segment_size`` slots (a power of two, Theta(log capacity)
  unless fixed).  Inside a leaf the live entries are packed at its start
  (``leaf_count[s]`` of them), so the array is sorted with the gaps at the end
  of every leaf.
* **The implicit tree of ranges.**  Level 0 are the leaves; a node at level
  ``l`` is the range of ``2**l`` consecutive leaves ``[r << l, (r + 1) << l)``;
  the root (level ``height``) is the whole array.  No tree is stored: a range
  is found by shifting a leaf index.  Every level has density bounds, linear
  from the leaf to the root (thesis Figure 2.1: leaf 0.08 / 0.92, root 0.40 /
  0.80 by default; ``lower_leaf``, ``upper_leaf``, ``lower_root``,
  ``upper_root`` set them).  A range of capacity ``c`` at level ``l`` may hold
  at most ``floor(upper_l * c)`` entries after an insertion and at least
  ``ceil(lower_l * c)`` after a deletion.
* **Leaf pivots.**  ``leaf_pivot[s]`` is the smallest key of leaf ``s`` (an
  empty leaf carries the pivot of the next non-empty leaf to its right, the
  trailing ones carry ``GAP``), so the pivots are sorted and one
  ``searchsorted`` finds the leaf of any key.

GPMA+'s lock-free batch update (section 2.2.2's three points, all as array
programs, loops over tree levels only):

1. the batch is sorted (a ``CSRBatch`` already is) and every key's leaf is
   located by search: a binary search of the pivots, then of the leaf's packed
   entries (existing keys only update their weight);
2. level by level, bottom up: the ranges of the current level that hold
   pending updates are counted (existing entries from a prefix sum of the leaf
   counts, plus every update the batch routes into the range); a range whose
   density stays inside its level's bounds is *settled*: its old entries and
   its pending updates are merged and redistributed evenly over its leaves,
   all settled ranges of the level at once; the others pass their updates to
   their parent range (the merge with the sibling) at the next level;
3. when the root itself leaves its bounds the whole array is rebuilt twice as
   large (insertions) or half as large (deletions), entries spread evenly.

Deletions mark their slots as gaps, which breaks the packing of the touched
leaves, and run the same bottom-up pass with the lower bounds: a touched range
within bounds is redistributed (re-packed), one below its bound merges with its
sibling at the next level.

Vertices: GPMA has no vertex operations (thesis 2.2.2); here a vertex
dictionary (``alive`` mask and ``out_degree``, power-of-two capacity that
doubles) sits beside the array.  The out-edges of ``v`` are the one contiguous
key range ``[v << 32, (v + 1) << 32)``: two lower-bound searches give its slot
range, and ``adjacency(v)`` is that range with the gaps skipped.  Deleting a
vertex deletes that range and its in-edges, found by one scan of the array's
targets (vertex deletions are rare in edge streams; an in-edge index would
double the work of every batch).

On a GPU the leaf search and the redistribution run as fused CUDA kernels
(:mod:`structures.gpma_kernels`); this array program is their reference and
both leave the same state (``fused=False`` runs it on CuPy).
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from . import backend
from . import gpma_kernels as pk
from .array_ops import (
    add_source_counts,
    bincount,
    dedupe_keys,
    edge_keys,
    grown_capacity,
    key_sources,
    key_targets,
    merge_sorted,
    offsets_of,
    pow2_at_least,
    segmented_arange,
    sorted_runs,
    split_keys,
    unique_sorted,
)
from .base import DynamicGraph
from .csr_types import CSR, VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch, batch_weights
from .options import MAX_ENTRIES, MAX_VERTEX_CAPACITY, Option
from .registry import register
from .vertex_table import AliveVertexTable

GAP = np.int64(np.iinfo(np.int64).max)      # an empty slot; larger than every edge key
# the thesis's Figure 2.1 bounds (leaf and root; the levels between are interpolated linearly)
LOWER_LEAF, UPPER_LEAF, LOWER_ROOT, UPPER_ROOT = 0.08, 0.92, 0.40, 0.80
MIN_SEGMENT = 8
VERTEX_ENTRY_BYTES = 9          # alive (1) + out_degree (8)
SLOT_BYTES = 12                 # key (8) + weight (4)
LEAF_BYTES = 16                 # leaf_count (8) + leaf_pivot (8)


@register
class GPMA(AliveVertexTable, DynamicGraph):
    """GPMA+: edges sorted by (src, dst) in one packed memory array with gaps, updated in sorted batches.

    Options: :attr:`options_spec` (the density bounds' defaults are the thesis's).
    """

    name = "gpma"

    options_spec: ClassVar[dict[str, Option]] = {
        "segment_size": Option(int, None, "slots of a leaf (None: Theta(log capacity), at least 8)", low=1,
                               high=MAX_ENTRIES, power_of_two=True, none_ok=True),
        "min_capacity": Option(int, 64, "slots of the array, at least (rounded up to a power of two)", low=1,
                               high=MAX_ENTRIES),
        "lower_leaf": Option(float, LOWER_LEAF, "a leaf's lowest density", low=0.0, high=1.0),
        "upper_leaf": Option(float, UPPER_LEAF, "a leaf's highest density", low=0.0, high=1.0),
        "lower_root": Option(float, LOWER_ROOT, "the root's lowest density", low=0.0, high=1.0),
        "upper_root": Option(float, UPPER_ROOT, "the root's highest density", low=0.0, high=1.0),
        "initial_vertex_capacity": Option(int, 0, "vertex entries reserved at the start", low=0,
                                          high=MAX_VERTEX_CAPACITY),
        "fused": Option(bool, True, "the fused CUDA kernels on CuPy (False: the array program)", internal=True),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        opt = self.options
        self._fixed_segment = opt["segment_size"]
        self.min_capacity = pow2_at_least(opt["min_capacity"])
        self.lower_leaf = opt["lower_leaf"]
        self.upper_leaf = opt["upper_leaf"]
        self.lower_root = opt["lower_root"]
        self.upper_root = opt["upper_root"]
        if not (0 <= self.lower_leaf <= self.lower_root < self.upper_root <= self.upper_leaf <= 1):
            raise ValueError("density bounds must satisfy 0 <= lower_leaf <= lower_root < upper_root "
                             "<= upper_leaf <= 1")
        if 2 * self.lower_root > self.upper_root:
            raise ValueError("lower_root must be at most upper_root / 2 (halving must land inside the bounds)")
        self.fused = opt["fused"] and backend.is_gpu(xp)
        # -- vertex dictionary -----------------------------------------------------------------
        self.alive = xp.zeros(0, dtype=bool)
        self.out_degree = xp.zeros(0, dtype=np.int64)
        self._num_vertices = 0
        self._num_edges = 0
        self.stats = {"doublings": 0, "halvings": 0, "rebuilds": 0, "dictionary_doublings": 0,
                      "redistributions": [], "entries_moved": 0}
        init_cap = opt["initial_vertex_capacity"]
        if init_cap > 0:
            self._ensure_vertex_capacity(init_cap - 1)
        # -- the packed memory array -----------------------------------------------------------
        self._set_geometry(self.min_capacity)
        self.slot_keys = xp.full(self.capacity, GAP, dtype=np.int64)
        self.slot_weights = xp.zeros(self.capacity, dtype=WEIGHT_DTYPE)
        self.leaf_count = xp.zeros(self.num_segments, dtype=np.int64)
        self.leaf_pivot = xp.full(self.num_segments, GAP, dtype=np.int64)

    # =========================================================================================
    # geometry and density bounds
    # =========================================================================================
    def _segment_size_for(self, capacity: int) -> int:
        if self._fixed_segment is not None:
            return min(int(self._fixed_segment), capacity)
        return min(max(pow2_at_least(math.ceil(math.log2(max(capacity, 2)))), MIN_SEGMENT), capacity)

    def _set_geometry(self, capacity: int) -> None:
        """Capacity, leaves, height, and the per-level entry bounds (host ints)."""
        self.capacity = int(capacity)
        self.segment_size = self._segment_size_for(self.capacity)
        self.num_segments = self.capacity // self.segment_size
        self.height = self.num_segments.bit_length() - 1
        self.max_entries, self.min_entries = [], []
        for level, (lower, upper) in enumerate(self.density_bounds()):
            span = self.segment_size << level
            self.max_entries.append(max(int(math.floor(upper * span + 1e-9)), 1))
            self.min_entries.append(int(math.ceil(lower * span - 1e-9)))
        while len(self.stats["redistributions"]) <= self.height:
            self.stats["redistributions"].append(0)

    def density_bounds(self) -> list[tuple[float, float]]:
        """Nominal (lower, upper) density of every level, leaf first (linear from leaf to root)."""
        out = []
        for level in range(self.height + 1):
            t = level / self.height if self.height else 1.0
            out.append((self.lower_leaf + (self.lower_root - self.lower_leaf) * t,
                        self.upper_leaf + (self.upper_root - self.upper_leaf) * t))
        return out

    # =========================================================================================
    # vertex dictionary
    # =========================================================================================
    def _ensure_vertex_capacity(self, max_id: int) -> None:
        cap = self.vertex_capacity
        if max_id < cap:
            return
        xp = self.xp
        new_cap = grown_capacity(cap, max_id + 1)
        self.stats["dictionary_doublings"] += max(new_cap.bit_length() - max(cap, 1).bit_length(), 0)
        alive = xp.zeros(new_cap, dtype=bool)
        alive[:cap] = self.alive
        degree = xp.zeros(new_cap, dtype=np.int64)
        degree[:cap] = self.out_degree
        self.alive, self.out_degree = alive, degree

    # =========================================================================================
    # search: the leaf of a key, and its slot (GPMA+ step 1)
    # =========================================================================================
    def _refresh_pivots(self) -> None:
        """Smallest key per leaf; an empty leaf carries the next non-empty leaf's (GAP at the end)."""
        xp = self.xp
        # packed leaves: a leaf's first slot holds its smallest key
        nonempty = xp.nonzero(self.leaf_count > 0)[0]
        first = self.slot_keys[nonempty * self.segment_size]
        nxt = xp.searchsorted(nonempty, xp.arange(self.num_segments, dtype=np.int64))
        has = nxt < nonempty.shape[0]
        gap = xp.full(self.num_segments, GAP, dtype=np.int64)
        self.leaf_pivot = xp.where(has, first[xp.minimum(nxt, max(int(nonempty.shape[0]) - 1, 0))], gap) \
            if nonempty.shape[0] else gap

    def _route(self, keys):
        """Leaf of every key: the last leaf whose pivot is <= the key (leaf 0 for smaller keys)."""
        xp = self.xp
        leaf = xp.searchsorted(self.leaf_pivot, keys, side="right") - 1
        return xp.maximum(leaf, 0).astype(np.int64)

    def _lower_bound(self, keys):
        """(leaf, slot of the first live key >= key, hit) of every key, a binary search per leaf.

        The leaves are packed, so the search runs over ``leaf_count`` sorted entries
        from the leaf's first slot; the loop is over the log2(segment_size) halvings.
        """
        xp = self.xp
        if self.fused:
            return self._lower_bound_fused(keys)
        leaf = self._route(keys)
        base = leaf * self.segment_size
        lo = xp.zeros(keys.shape[0], dtype=np.int64)
        hi = self.leaf_count[leaf]
        for _ in range(self.segment_size.bit_length()):
            mid = (lo + hi) >> 1
            probe = self.slot_keys[base + xp.minimum(mid, self.segment_size - 1)]
            active = lo < hi
            right = active & (probe < keys)
            lo = xp.where(right, mid + 1, lo)
            hi = xp.where(active & ~right, mid, hi)
        slot = base + lo
        hit = (lo < self.leaf_count[leaf]) & (self.slot_keys[xp.minimum(slot, self.capacity - 1)] == keys)
        return leaf, slot, hit

    def _find(self, keys):
        """Slot of every key, -1 where the edge is absent."""
        _, slot, hit = self._lower_bound(keys)
        return self.xp.where(hit, slot, -1)

    # =========================================================================================
    # redistribution (GPMA+ step 2) and the whole-array resize (step 3)
    # =========================================================================================
    def _redistribute(self, level: int, ranges, new_keys, new_weights, new_owner) -> None:
        """Merge the old entries of ``ranges`` (level ``level``, ascending) with their new keys
        (sorted, ``new_owner`` = index into ``ranges``) and spread each range evenly over its leaves.

        With ``n`` entries over ``m = 2**level`` leaves, leaf ``j`` receives
        ``floor(n (j+1) / m) - floor(n j / m)`` of them, packed at its start, so
        entry ``i`` (in key order) lands in leaf ``((i + 1) m - 1) // n``.
        """
        xp = self.xp
        nr = int(ranges.shape[0])
        if nr == 0:
            return
        if self.fused:
            self._redistribute_fused(level, ranges, new_keys, new_weights, new_owner)
            return
        m = 1 << level
        span = self.segment_size << level
        starts = ranges * span
        owner, pos = segmented_arange(xp, starts, xp.full(nr, span, dtype=np.int64))
        old = self.slot_keys[pos]
        live = old != GAP
        old_keys, old_weights, old_owner = old[live], self.slot_weights[pos][live], owner[live]
        # merge two sorted lists by ranks (a key's place = its index + the keys of the other list before it)
        n_old, n_new = int(old_keys.shape[0]), int(new_keys.shape[0])
        merged_keys = xp.empty(n_old + n_new, dtype=np.int64)
        merged_weights = xp.empty(n_old + n_new, dtype=WEIGHT_DTYPE)
        merged_owner = xp.empty(n_old + n_new, dtype=np.int64)
        at_old = xp.arange(n_old, dtype=np.int64) + xp.searchsorted(new_keys, old_keys)
        at_new = xp.arange(n_new, dtype=np.int64) + xp.searchsorted(old_keys, new_keys)
        for at, k, w, o in ((at_old, old_keys, old_weights, old_owner),
                            (at_new, new_keys, new_weights, new_owner)):
            merged_keys[at], merged_weights[at], merged_owner[at] = k, w, o
        n = bincount(xp, merged_owner, nr)
        first = offsets_of(xp, n)[:-1]
        i = xp.arange(n_old + n_new, dtype=np.int64) - first[merged_owner]
        ne = n[merged_owner]
        j = ((i + 1) * m - 1) // xp.maximum(ne, 1)
        dest = starts[merged_owner] + j * self.segment_size + i - (ne * j) // m
        self.slot_keys[pos] = GAP
        self.slot_keys[dest] = merged_keys
        self.slot_weights[dest] = merged_weights
        leaf_owner, leaf = segmented_arange(xp, ranges * m, xp.full(nr, m, dtype=np.int64))
        j = leaf - ranges[leaf_owner] * m
        nl = n[leaf_owner]
        self.leaf_count[leaf] = (nl * (j + 1)) // m - (nl * j) // m
        self.stats["redistributions"][level] += nr
        self.stats["entries_moved"] += n_old + n_new

    def _resize(self, capacity: int, extra_keys, extra_weights) -> None:
        """Rebuild the whole array at ``capacity`` slots with its live entries plus ``extra_keys``."""
        xp = self.xp
        live = self.slot_keys != GAP
        old_keys, old_weights = self.slot_keys[live], self.slot_weights[live]
        self._set_geometry(capacity)
        self.slot_keys = xp.full(self.capacity, GAP, dtype=np.int64)
        self.slot_weights = xp.zeros(self.capacity, dtype=WEIGHT_DTYPE)
        self.leaf_count = xp.zeros(self.num_segments, dtype=np.int64)
        self.stats["rebuilds"] += 1
        keys, weights = merge_sorted(xp, old_keys, old_weights, extra_keys, extra_weights)
        root = xp.zeros(1, dtype=np.int64)
        self._redistribute(self.height, root, keys, weights, xp.zeros(keys.shape[0], dtype=np.int64))

    def _rebalance_inserts(self, keys, weights) -> None:
        """GPMA+ bottom-up insertion of new, sorted, distinct ``keys``."""
        xp = self.xp
        leaf = self._route(keys)                   # non-decreasing: keys and pivots are sorted
        prefix = offsets_of(xp, self.leaf_count)   # existing entries before every leaf
        pend_keys, pend_weights, pend_leaf = keys, weights, leaf
        for level in range(self.height + 1):
            if pend_keys.shape[0] == 0:
                break
            rid = pend_leaf >> level
            ranges = _distinct_sorted(xp, rid)
            lo, hi = ranges << level, (ranges + 1) << level
            total = (prefix[hi] - prefix[lo]) + (xp.searchsorted(leaf, hi) - xp.searchsorted(leaf, lo))
            ok = total <= self.max_entries[level]
            if level == self.height and not bool(ok[0]):
                need = int(total[0])
                cap = self.capacity
                while need > math.floor(self.upper_root * cap):
                    cap *= 2
                    self.stats["doublings"] += 1
                self._resize(cap, pend_keys, pend_weights)
                return
            idx = xp.searchsorted(ranges, rid)
            settle = ok[idx]
            settled = ranges[ok]
            new_owner = (xp.cumsum(ok) - 1)[idx[settle]]
            self._redistribute(level, settled, pend_keys[settle], pend_weights[settle], new_owner)
            keep = ~settle
            pend_keys, pend_weights, pend_leaf = pend_keys[keep], pend_weights[keep], pend_leaf[keep]

    def _rebalance_deletes(self, touched_leaves) -> None:
        """The same pass with the lower bounds, for the leaves whose slots were just marked empty."""
        xp = self.xp
        prefix = offsets_of(xp, self.leaf_count)
        ranges = touched_leaves
        empty_k = xp.zeros(0, dtype=np.int64)
        empty_w = xp.zeros(0, dtype=WEIGHT_DTYPE)
        for level in range(self.height + 1):
            if ranges.shape[0] == 0:
                break
            lo, hi = ranges << level, (ranges + 1) << level
            total = prefix[hi] - prefix[lo]
            ok = total >= self.min_entries[level]
            if level == self.height and not bool(ok[0]):
                cap, need = self.capacity, int(total[0])
                while (cap > self.min_capacity and need < math.ceil(self.lower_root * cap)
                       and need <= math.floor(self.upper_root * (cap // 2))):
                    cap //= 2
                    self.stats["halvings"] += 1
                if cap != self.capacity:
                    self._resize(cap, empty_k, empty_w)
                    return
                ok = xp.ones(1, dtype=bool)          # at the smallest array: re-pack the root
            self._redistribute(level, ranges[ok], empty_k, empty_w, empty_k)
            ranges = _distinct_sorted(xp, ranges[~ok] >> 1)

    # =========================================================================================
    # edge batches
    # =========================================================================================
    def insert_edges(self, batch: CSRBatch):
        """Upsert the batch's edges; True where the edge was new (the first of repeated keys)."""
        xp = self.xp
        keys = edge_keys(xp, batch.sources(), batch.cols)
        n = int(keys.shape[0])
        mask = xp.zeros(n, dtype=bool)
        if n == 0:
            return mask
        if int(keys.min()) < 0:
            raise ValueError("vertex ids must be >= 0")
        src, dst = key_sources(keys), key_targets(keys)
        self._activate(xp.concatenate([src, dst]))
        ukeys, last, first = dedupe_keys(xp, keys)
        uweights = batch_weights(xp, batch)[last]
        _, slot, hit = self._lower_bound(ukeys)
        self.slot_weights[slot[hit]] = uweights[hit]        # existing edges: weight upsert in place
        new = ~hit
        mask[first[new]] = True
        nkeys, nweights = ukeys[new], uweights[new]
        if nkeys.shape[0]:
            self._rebalance_inserts(nkeys, nweights)
            self._refresh_pivots()
            add_source_counts(xp, self.out_degree, nkeys, 1)
            self._num_edges += int(nkeys.shape[0])
        return mask

    def delete_edges(self, batch: CSRBatch):
        """Delete the batch's edges: mark their slots empty, then rebalance; True where one was removed."""
        xp = self.xp
        keys = edge_keys(xp, batch.sources(), batch.cols)
        n = int(keys.shape[0])
        mask = xp.zeros(n, dtype=bool)
        if n == 0 or self._num_edges == 0:
            return mask
        ukeys, _, first = dedupe_keys(xp, keys)
        mask[first] = self._delete_sorted_keys(ukeys)
        return mask

    def _delete_sorted_keys(self, ukeys):
        """Delete sorted distinct keys (present or not); True where one was removed."""
        xp = self.xp
        leaf, slot, hit = self._lower_bound(ukeys)
        if not bool(hit.any()):
            return hit
        gone_leaf, gone_slot = leaf[hit], slot[hit]
        self.slot_keys[gone_slot] = GAP                    # mark: the slot becomes a gap
        leaves, runs = sorted_runs(xp, gone_leaf)          # keys sorted, so their leaves are too
        self.leaf_count[leaves] -= runs
        add_source_counts(xp, self.out_degree, ukeys[hit], -1)
        self._num_edges -= int(gone_slot.shape[0])
        self._rebalance_deletes(_distinct_sorted(xp, gone_leaf))
        self._refresh_pivots()
        return hit

    def delete_vertices(self, ids):
        """Delete ``ids``: their out-ranges, their in-edges (one scan of the targets), then the vertices."""
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        ids = ids[self._live(ids)]
        empty = (xp.zeros(0, dtype=VERTEX_DTYPE), xp.zeros(0, dtype=VERTEX_DTYPE))
        if ids.shape[0] == 0:
            return empty
        dying = xp.zeros(self.vertex_capacity, dtype=bool)
        dying[ids] = True
        removed = empty
        if self._num_edges:
            ids = unique_sorted(xp, ids)
            # out-edges: each dying vertex's one contiguous range of slots
            start, end = self.row_ranges(ids)
            _, pos = segmented_arange(xp, start, end - start)
            out_keys = self.slot_keys[pos]
            # in-edges: one scan of the array's targets (gaps map to a target past the dictionary)
            targets = xp.minimum(key_targets(self.slot_keys), self.vertex_capacity)
            in_keys = self.slot_keys[xp.concatenate([dying, xp.zeros(1, dtype=bool)])[targets]]
            doomed = unique_sorted(xp, xp.concatenate([out_keys[out_keys != GAP], in_keys]))
            if doomed.shape[0]:
                self._delete_sorted_keys(doomed)
                removed = split_keys(doomed)
        self.alive[ids] = False
        self.out_degree[ids] = 0
        self._num_vertices = int(self.alive.sum())
        return removed

    # =========================================================================================
    # queries
    # =========================================================================================
    def contains(self, src, dst):
        return self._find(edge_keys(self.xp, src, dst)) >= 0

    def edge_weights(self, src, dst):
        xp = self.xp
        slot = self._find(edge_keys(xp, src, dst))
        nan = xp.full(slot.shape[0], np.nan, dtype=WEIGHT_DTYPE)
        return xp.where(slot >= 0, self.slot_weights[xp.maximum(slot, 0)], nan)

    def degree(self, vertices=None):
        return self._per_vertex(self.out_degree, vertices)

    def row_ranges(self, vertices):
        """Slot range ``[start, end)`` of each vertex's out-edges: one contiguous range, gaps included."""
        xp = self.xp
        v = xp.asarray(vertices, dtype=np.int64)
        ok = (v >= 0) & (v < max(self.vertex_capacity, 1))
        vc = xp.where(ok, v, 0)
        _, start, _ = self._lower_bound(vc << 32)
        _, end, _ = self._lower_bound((vc + 1) << 32)
        return start, xp.where(ok, end, start)

    def adjacency(self, vertices=None) -> CSR:
        """Rows in the requested order, each row sorted by target (one range of the array, gaps skipped)."""
        xp = self.xp
        if vertices is None:                      # the whole array, compacted: already a sorted CSR
            live = self.slot_keys != GAP
            keys = self.slot_keys[live]
            return CSR(offsets=offsets_of(xp, self.out_degree),
                       cols=key_targets(keys).astype(VERTEX_DTYPE), weights=self.slot_weights[live])
        v = xp.asarray(vertices, dtype=np.int64)
        offsets = offsets_of(xp, self.degree(v))
        start, end = self.row_ranges(v)
        _, pos = segmented_arange(xp, start, end - start)
        keys = self.slot_keys[pos]
        live = keys != GAP
        return CSR(offsets=offsets, cols=key_targets(keys[live]).astype(VERTEX_DTYPE),
                   weights=self.slot_weights[pos[live]])

    # =========================================================================================
    # the fused GPU path (structures/gpma_kernels.py)
    # =========================================================================================
    def _lower_bound_fused(self, keys):
        xp = self.xp
        n = int(keys.shape[0])
        leaf = xp.empty(n, dtype=np.int64)
        slot = xp.empty(n, dtype=np.int64)
        hit = xp.empty(n, dtype=bool)
        pk.launch(xp, "gpma_lower_bound", n, xp.ascontiguousarray(keys, dtype=np.int64), pk.i64(n),
                  self.leaf_pivot, pk.i64(self.num_segments), self.slot_keys, self.leaf_count,
                  pk.i64(self.segment_size), leaf, slot, hit)
        return leaf, slot, hit

    def _redistribute_fused(self, level, ranges, new_keys, new_weights, new_owner) -> None:
        """gpma_gather (old entries out, slots cleared), gpma_place (merge rank -> even slot), gpma_leaf_counts."""
        xp = self.xp
        nr = int(ranges.shape[0])
        m = 1 << level
        span = self.segment_size << level
        ranges = xp.ascontiguousarray(ranges, dtype=np.int64)
        total = nr * span
        live = xp.empty(total, dtype=np.int64)
        pk.launch(xp, "gpma_live_flags", total, ranges, pk.i64(span), pk.i64(total), self.slot_keys, live)
        rank = xp.cumsum(live) - live                       # exclusive: place among the old entries
        n_old = int(rank[-1] + live[-1])
        old_keys = xp.empty(n_old, dtype=np.int64)
        old_weights = xp.empty(n_old, dtype=WEIGHT_DTYPE)
        pk.launch(xp, "gpma_gather", total, ranges, pk.i64(span), pk.i64(total), rank,
                  self.slot_keys, self.slot_weights, old_keys, old_weights)
        new_keys = xp.ascontiguousarray(new_keys, dtype=np.int64)
        new_weights = xp.ascontiguousarray(new_weights, dtype=WEIGHT_DTYPE)
        n_new = int(new_keys.shape[0])
        # per range: where its old and new entries start (ranges are disjoint and key-ordered)
        old_first = xp.ascontiguousarray(rank.reshape(nr, span)[:, 0])
        new_first = xp.searchsorted(xp.asarray(new_owner, dtype=np.int64), xp.arange(nr + 1, dtype=np.int64))
        old_end = xp.concatenate([old_first[1:], xp.asarray([n_old], dtype=np.int64)])
        counts = (old_end - old_first) + (new_first[1:] - new_first[:-1])
        pk.launch(xp, "gpma_place", n_old + n_new, ranges, pk.i64(nr), old_first, new_first, counts,
                  old_keys, old_weights, pk.i64(n_old), new_keys, new_weights, pk.i64(n_new),
                  xp.ascontiguousarray(new_owner, dtype=np.int64), pk.i64(m),
                  pk.i64(self.segment_size), self.slot_keys, self.slot_weights)
        pk.launch(xp, "gpma_leaf_counts", nr * m, ranges, counts, pk.i64(m), pk.i64(nr * m), self.leaf_count)
        self.stats["redistributions"][level] += nr
        self.stats["entries_moved"] += n_old + n_new

    # =========================================================================================
    # sizes and memory
    # =========================================================================================
    def memory(self) -> dict:
        """The array (every slot: key + weight), the leaf metadata, the vertex dictionary."""
        leaf_bytes = LEAF_BYTES * self.num_segments
        reserved = SLOT_BYTES * self.capacity + leaf_bytes + VERTEX_ENTRY_BYTES * self.vertex_capacity
        used = SLOT_BYTES * self._num_edges + leaf_bytes + VERTEX_ENTRY_BYTES * self._num_vertices
        return {
            "reserved_bytes": int(reserved),
            "used_bytes": int(used),
            "capacity_slots": int(self.capacity),
            "segment_size": int(self.segment_size),
            "num_segments": int(self.num_segments),
            "height": int(self.height),
            "density": self._num_edges / self.capacity,
            "gap_bytes": int(SLOT_BYTES * (self.capacity - self._num_edges)),
            "vertex_capacity": int(self.vertex_capacity),
            "doublings": int(self.stats["doublings"]),
            "halvings": int(self.stats["halvings"]),
        }


# -------------------------------------------------------------------------------------------
# helpers (array programs on xp)
# -------------------------------------------------------------------------------------------
def _distinct_sorted(xp, a):
    """Distinct values of a non-decreasing array (neighbour compare)."""
    if a.shape[0] <= 1:
        return a
    keep = xp.ones(a.shape[0], dtype=bool)
    keep[1:] = a[1:] != a[:-1]
    return a[keep]
