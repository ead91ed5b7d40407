"""diff-CSR ("Fast Dynamic Graph Algorithms", cited in graphvine.txt's related work): a base CSR plus a sorted diff.

Source: graphvine.txt, related work: "a modified Compressed Sparse Row (CSR) format
called diff-CSR ... subsequent edge inserts during a batch update are reflected only
in the diff-CSR array and not in the original CSR array", and its cost: "large insert
and delete overheads with a large update batch due to the need to rearrange and
concatenate the diff-CSR throughout multiple updates".

Layout (all on ``self.xp``):

* **Base CSR**: ``base_offsets`` over the vertex capacity, and per edge its
  key ``(src << 32) | dst`` (``base_keys``, sorted: a CSR's rows in order, each
  row sorted by target) and ``base_weights``.  The base is never changed in
  shape between merges; only weights are updated in place.
* **Insert list**: the edges added since the last merge that are not in the
  base, as sorted keys ``ins_keys`` with ``ins_weights``.
* **Tombstone list**: the sorted keys of base edges deleted since the last merge
  (``tomb_keys``).  A base edge re-inserted after its deletion drops its
  tombstone and takes the new weight in place.

Reads merge the two: an edge exists iff it is in the base and has no tombstone,
or it is in the insert list (two binary searches); a row is the base row minus
its tombstones merged with the insert-list row, sorted by target.  When the diff
(inserts + tombstones) passes ``merge_fraction`` of the base, the two are merged
into a new base CSR (the live base edges and the insert list are both sorted,
so the merge is by rank, no sort), and the diff is emptied: batches between
merges cost O(diff + batch), a merge O(base).  ``merge_fraction`` is the knob
the crossover bench (``stream/bench/sorted_adjacency.py``) measures.

Vertices: a vertex dictionary (``alive``, ``out_degree``) of power-of-two
capacity.  Deleting a vertex deletes its base and insert-list rows (contiguous
ranges) and its in-edges (one scan of both targets arrays).

The whole structure is bulk array primitives (sort-free merges by
``searchsorted``, gathers, cumsum) over arrays as long as the base or the
diff: each step is one large launch on a GPU, so there is no fused-kernel path
(nothing launch-bound to fuse; contrast GPMA's per-level loops).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .array_ops import (
    add_source_counts,
    bincount,
    dedupe_keys,
    edge_keys,
    grown_capacity,
    key_sources,
    key_targets,
    member,
    merge_sorted,
    offsets_of,
    segmented_arange,
    sorted_lookup,
    split_keys,
    unique_sorted,
)
from .base import DynamicGraph
from .csr_types import CSR, OFFSET_DTYPE, VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch, batch_weights
from .options import MAX_ENTRIES, Option
from .registry import register
from .vertex_table import AliveVertexTable

EDGE_BYTES = 12               # key (8) + weight (4), in the base and in the insert list
TOMB_BYTES = 8
VERTEX_ENTRY_BYTES = 1 + 8 + 8    # alive, out_degree, base offset


@register
class DiffCSR(AliveVertexTable, DynamicGraph):
    """Base CSR + sorted insert list + sorted tombstone list, merged into a new base when the diff grows.

    Options: :attr:`options_spec`.
    """

    name = "diffcsr"

    options_spec: ClassVar[dict[str, Option]] = {
        "merge_fraction": Option(float, 0.1, "merge when inserts + tombstones exceed this fraction of the base's "
                                 "edges", low=0.0),
        "min_merge": Option(int, 0, "never merge a diff smaller than this many entries (0: the first batch "
                            "becomes the base)", low=0, high=MAX_ENTRIES),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        self.merge_fraction = self.options["merge_fraction"]
        self.min_merge = self.options["min_merge"]
        self.alive = xp.zeros(0, dtype=bool)
        self.out_degree = xp.zeros(0, dtype=np.int64)
        self.base_offsets = xp.zeros(1, dtype=OFFSET_DTYPE)
        self.base_keys = xp.zeros(0, dtype=np.int64)
        self.base_weights = xp.zeros(0, dtype=WEIGHT_DTYPE)
        self.ins_keys = xp.zeros(0, dtype=np.int64)
        self.ins_weights = xp.zeros(0, dtype=WEIGHT_DTYPE)
        self.tomb_keys = xp.zeros(0, dtype=np.int64)
        self._num_vertices = 0
        self._num_edges = 0
        self.stats = {"merges": 0, "merged_edges": 0, "dictionary_doublings": 0}

    # -- vertex dictionary -------------------------------------------------------------------
    def _ensure_vertex_capacity(self, max_id: int) -> None:
        cap = self.vertex_capacity
        if max_id < cap:
            return
        xp = self.xp
        new_cap = grown_capacity(cap, max_id + 1)
        self.stats["dictionary_doublings"] += 1
        alive = xp.zeros(new_cap, dtype=bool)
        alive[:cap] = self.alive
        degree = xp.zeros(new_cap, dtype=np.int64)
        degree[:cap] = self.out_degree
        offsets = xp.full(new_cap + 1, int(self.base_offsets[-1]), dtype=OFFSET_DTYPE)
        offsets[: cap + 1] = self.base_offsets
        self.alive, self.out_degree, self.base_offsets = alive, degree, offsets

    # -- lookups in base and diff --------------------------------------------------------------
    def _lookup(self, keys):
        """(base position, in base and live, insert-list position, in insert list) of every key."""
        xp = self.xp
        bpos, in_base = sorted_lookup(xp, self.base_keys, keys)
        if self.tomb_keys.shape[0]:
            in_base &= ~member(xp, self.tomb_keys, keys)
        ipos, in_ins = sorted_lookup(xp, self.ins_keys, keys)
        return bpos, in_base, ipos, in_ins

    @property
    def diff_size(self) -> int:
        return int(self.ins_keys.shape[0] + self.tomb_keys.shape[0])

    def _maybe_merge(self) -> None:
        """Fold the diff into a new base CSR once it passes ``merge_fraction`` of the base."""
        diff = self.diff_size
        if diff == 0 or diff < self.min_merge or diff <= self.merge_fraction * self.base_keys.shape[0]:
            return
        self.merge()

    def merge(self) -> None:
        """New base = live base edges (tombstones dropped) merged by rank with the insert list."""
        xp = self.xp
        keep = ~member(xp, self.tomb_keys, self.base_keys) if self.tomb_keys.shape[0] else \
            xp.ones(self.base_keys.shape[0], dtype=bool)
        keys, weights = merge_sorted(xp, self.base_keys[keep], self.base_weights[keep],
                                      self.ins_keys, self.ins_weights)
        self.base_keys, self.base_weights = keys, weights
        self.base_offsets = offsets_of(xp, bincount(xp, key_sources(keys), self.vertex_capacity))
        self.ins_keys = xp.zeros(0, dtype=np.int64)
        self.ins_weights = xp.zeros(0, dtype=WEIGHT_DTYPE)
        self.tomb_keys = xp.zeros(0, dtype=np.int64)
        self.stats["merges"] += 1
        self.stats["merged_edges"] += int(keys.shape[0])

    # -- edge batches --------------------------------------------------------------------------
    def insert_edges(self, batch: CSRBatch):
        xp = self.xp
        keys = edge_keys(xp, batch.sources(), batch.cols)
        n = int(keys.shape[0])
        mask = xp.zeros(n, dtype=bool)
        if n == 0:
            return mask
        if int(keys.min()) < 0:
            raise ValueError("vertex ids must be >= 0")
        self._activate(xp.concatenate([key_sources(keys), key_targets(keys)]))
        ukeys, last, first = dedupe_keys(xp, keys)
        w = batch_weights(xp, batch)[last]
        bpos, in_base, ipos, in_ins = self._lookup(ukeys)
        # the base holds the key (live or tombstoned): weight in place; a tombstoned one comes back
        _, in_base_any = sorted_lookup(xp, self.base_keys, ukeys)
        self.base_weights[bpos[in_base_any]] = w[in_base_any]
        revived = in_base_any & ~in_base
        if bool(revived.any()):
            self.tomb_keys = self.tomb_keys[~member(xp, ukeys[revived], self.tomb_keys)]
        self.ins_weights[ipos[in_ins]] = w[in_ins]
        fresh = ~in_base_any & ~in_ins
        if bool(fresh.any()):
            self.ins_keys, self.ins_weights = merge_sorted(xp, self.ins_keys, self.ins_weights,
                                                            ukeys[fresh], w[fresh])
        new = revived | fresh
        mask[first[new]] = True
        add_source_counts(xp, self.out_degree, ukeys[new], 1)
        self._num_edges += int(new.sum())
        self._maybe_merge()
        return mask

    def delete_edges(self, batch: CSRBatch):
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
        xp = self.xp
        _, in_base, _, in_ins = self._lookup(ukeys)
        if bool(in_ins.any()):
            keep = ~member(xp, ukeys[in_ins], self.ins_keys)
            self.ins_keys, self.ins_weights = self.ins_keys[keep], self.ins_weights[keep]
        if bool(in_base.any()):
            self.tomb_keys, _ = merge_sorted(xp, self.tomb_keys, None, ukeys[in_base], None)
        removed = in_base | in_ins
        add_source_counts(xp, self.out_degree, ukeys[removed], -1)
        self._num_edges -= int(removed.sum())
        self._maybe_merge()
        return removed

    def delete_vertices(self, ids):
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        ids = ids[self._live(ids)]
        empty = (xp.zeros(0, dtype=VERTEX_DTYPE), xp.zeros(0, dtype=VERTEX_DTYPE))
        if ids.shape[0] == 0:
            return empty
        ids = unique_sorted(xp, ids)
        removed = empty
        if self._num_edges:
            dying = xp.zeros(self.vertex_capacity + 1, dtype=bool)
            dying[ids] = True
            parts = []
            for keys in (self.base_keys, self.ins_keys):     # two arrays, not a loop over vertices
                src, dst = key_sources(keys), key_targets(keys)
                parts.append(keys[dying[src] | dying[dst]])
            doomed = unique_sorted(xp, xp.concatenate(parts))
            if self.tomb_keys.shape[0]:
                doomed = doomed[~member(xp, self.tomb_keys, doomed)]
            if doomed.shape[0]:
                self._delete_sorted_keys(doomed)
                removed = split_keys(doomed)
        self.alive[ids] = False
        self.out_degree[ids] = 0
        self._num_vertices = int(self.alive.sum())
        return removed

    # -- queries -------------------------------------------------------------------------------
    def contains(self, src, dst):
        _, in_base, _, in_ins = self._lookup(edge_keys(self.xp, src, dst))
        return in_base | in_ins

    def edge_weights(self, src, dst):
        xp = self.xp
        bpos, in_base, ipos, in_ins = self._lookup(edge_keys(xp, src, dst))
        out = xp.full(in_base.shape[0], np.nan, dtype=WEIGHT_DTYPE)
        out[in_base] = self.base_weights[bpos[in_base]]
        out[in_ins] = self.ins_weights[ipos[in_ins]]
        return out

    def degree(self, vertices=None):
        return self._per_vertex(self.out_degree, vertices)

    def adjacency(self, vertices=None) -> CSR:
        """Base rows minus tombstones merged with the insert-list rows; every row sorted by target."""
        xp = self.xp
        if vertices is None:
            keep = ~member(xp, self.tomb_keys, self.base_keys) if self.tomb_keys.shape[0] else \
                xp.ones(self.base_keys.shape[0], dtype=bool)
            keys, weights = merge_sorted(xp, self.base_keys[keep], self.base_weights[keep],
                                          self.ins_keys, self.ins_weights)
            return CSR(offsets=offsets_of(xp, self.out_degree),
                       cols=key_targets(keys).astype(VERTEX_DTYPE), weights=weights)
        v = xp.asarray(vertices, dtype=np.int64)
        cap = self.vertex_capacity
        ok = (v >= 0) & (v < cap)
        vc = xp.where(ok, v, 0)
        bstart = xp.where(ok, self.base_offsets[vc], 0)
        bend = xp.where(ok, self.base_offsets[xp.minimum(vc + 1, cap)], 0)
        istart = xp.searchsorted(self.ins_keys, vc << 32)
        iend = xp.where(ok, xp.searchsorted(self.ins_keys, (vc + 1) << 32), istart)
        bown, bpos = segmented_arange(xp, bstart, bend - bstart)
        iown, ipos = segmented_arange(xp, istart, iend - istart)
        bkeys = self.base_keys[bpos]
        live = ~member(xp, self.tomb_keys, bkeys) if self.tomb_keys.shape[0] else \
            xp.ones(bkeys.shape[0], dtype=bool)
        own = xp.concatenate([bown[live], iown])
        cols = xp.concatenate([key_targets(bkeys[live]), key_targets(self.ins_keys[ipos])])
        weights = xp.concatenate([self.base_weights[bpos[live]], self.ins_weights[ipos]])
        order = xp.argsort((own << 32) | cols)           # rows in request order, targets ascending
        return CSR(offsets=offsets_of(xp, self.degree(v)), cols=cols[order].astype(VERTEX_DTYPE),
                   weights=weights[order])

    # -- sizes and memory ----------------------------------------------------------------------
    def memory(self) -> dict:
        """Base CSR + insert list + tombstone list + vertex dictionary; dead = tombstoned base edges
        and the tombstones themselves."""
        nb, ni, nt = (int(a.shape[0]) for a in (self.base_keys, self.ins_keys, self.tomb_keys))
        vertex_bytes = VERTEX_ENTRY_BYTES * self.vertex_capacity + 8
        reserved = EDGE_BYTES * (nb + ni) + TOMB_BYTES * nt + vertex_bytes
        used = EDGE_BYTES * self._num_edges + VERTEX_ENTRY_BYTES * self._num_vertices + 8
        return {
            "reserved_bytes": int(reserved),
            "used_bytes": int(used),
            "base_edges": nb,
            "insert_list": ni,
            "tombstones": nt,
            "diff_fraction": (ni + nt) / nb if nb else float(ni + nt > 0),
            "merges": int(self.stats["merges"]),
            "vertex_capacity": int(self.vertex_capacity),
        }


# -- helpers ------------------------------------------------------------------------------------
