"""faimGraph (gpu-dynamic-graph-thesis.txt, chapter 4): one memory pool, linked edge pages, reuse queues.

Memory (sections 4.2.1, 3.2.1, Figures 3.1 and 4.2).  One int32 array ``pool``
of ``W`` words holds the whole graph:

* **vertex data** grows from the bottom: vertex slot ``s`` is a record of
  ``VERTEX_WORDS`` words at ``[s*5, s*5+5)`` (array of structures, 4.2.3.1):
  host id, neighbours (edge count), capacity (edge slots on its pages),
  first page, last page;
* **edge pages** grow from the top: page ``p`` occupies words
  ``[W - (p+1)*PW, W - p*PW)`` for ``PW = page_bytes / 4`` (64 B pages by
  default, 4.2.3.2).  A page stores ``E = (PW - 1) // 2`` edges as structure
  of arrays (columns, then float32 weights stored in the same words) and, in
  its last word, the index of the vertex's next page (-1 at the end).  A
  vertex's adjacency is the linked list of its pages, position ``i`` on page
  ``i // E`` of the list.

Addressing is relative (pages counted from the top, slots from the bottom),
so when the two regions would meet, the pool is re-initialised in a larger
array by two copies (section 4.2.1, "reinitialization ... just two memcpy's").
The first size is the first batch's measured need plus ``headroom`` (50% more
pages, the thesis's conservative set-up in 4.3.4); later growth is by
``grow`` (default 1.5x), not "all of the GPU".

Reuse (4.2.2).  A page freed by compaction or vertex deletion is pushed to the
**page queue**, a vertex slot freed by vertex deletion to the **vertex
queue** (ring buffers, :class:`structures.ouroboros.ArrayQueue`).  Allocation
pops the queue first and only then bumps the page / slot counter, so reuse
is O(1).  Internal vertex ids are the "host identifiers": ``slot_of[id]``
maps them to the slot their record occupies (4.2.3.1: the device index is
not bound to the identifier).  Every vertex owns at least one page (vertex
insertion allocates one, Algorithm 3).

Updates are *vertex-centric* (4.2.5): a batch is sorted by source, the
adjacencies of the touched vertices are walked once (all vertices together,
one step per page of the longest list), duplicates are found against them,
new edges are appended after each vertex's last edge (pages popped by a
prefix sum of the per-vertex needs), deletions leave holes that are filled
from the back of the adjacency (or, with ``sorted=True``, by shifting the
survivors forward so pages stay sorted), and pages left empty go back to the
page queue.  Vertex deletion (Algorithm 4, directed case) frees the vertex's
pages and slot, then removes its in-edges by a reverse scan of every
adjacency against the sorted deleted ids.

:class:`PagedGraph` holds everything that does not depend on how an
adjacency is laid out (id map, vertex records, find / compact / batch logic);
:class:`FaimGraph` adds the linked pages; ``aimgraph`` (``structures/aimgraph.py``)
is FaimGraph without the queues; ``ourograph`` lays each adjacency on one
contiguous page from the Ouroboros allocator.

On CuPy the walks, searches and gathers run as fused CUDA kernels
(:mod:`structures.faimgraph_kernels`) unless ``fused=False``; the array
program here is the reference and both leave the same state.
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from . import backend
from . import faimgraph_kernels as fk
from .array_ops import bincount, dedupe_keys, edge_keys, key_sources, key_targets, repeat_index
from .base import DynamicGraph
from .csr_types import CSR, OFFSET_DTYPE, VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch
from .options import MAX_ENTRIES, Option
from .ouroboros import ArrayQueue
from .registry import register

VERTEX_WORDS = 5
R_HOST, R_COUNT, R_CAP, R_FIRST, R_LAST = range(VERTEX_WORDS)
NONE = -1


def _expand(xp, counts):
    """(segment, index within it, segment starts) for segments of ``counts`` elements."""
    counts = xp.asarray(counts, dtype=np.int64)
    seg = repeat_index(xp, counts)
    starts = xp.cumsum(counts) - counts
    within = xp.arange(seg.shape[0], dtype=np.int64) - starts[seg] if seg.shape[0] else seg
    return seg, within, starts


class PagedGraph(DynamicGraph):
    """Vertex records in a word array + adjacency storage defined by a subclass.

    A subclass provides the word array (``words``), the record region
    (``_reserve_slots``), the layout of an adjacency (``_context`` /
    ``_addresses``), its resizing (``_resize``) and what a vertex's storage
    becomes when it is created or deleted.
    """

    #: vertex slots are reused through a queue (False: slot = id, aimGraph's static vertices)
    reuse_slots = True

    #: the options of the vertex side; a subclass adds its storage's
    options_spec: ClassVar[dict[str, Option]] = {
        "sorted": Option(bool, False, "keep every adjacency sorted by column"),
        "fused": Option(bool, True, "the fused CUDA kernels on CuPy (False: the array program)", internal=True),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        self.sorted = self.options["sorted"]
        self.fused = self.options["fused"] and backend.is_gpu(xp)
        self.slot_of = xp.full(0, NONE, dtype=np.int32)      # internal id -> vertex slot
        self.vertex_top = 0                                   # slots handed out from the bottom
        self.vertex_queue = None                              # set by subclasses that reuse slots
        self._num_vertices = 0
        self._num_edges = 0
        self.stats = {"slots_reused": 0, "slots_bumped": 0}

    # -- subclass hooks ---------------------------------------------------------------------
    @property
    def words(self):
        raise NotImplementedError

    def _reserve_slots(self, top: int) -> None:
        raise NotImplementedError

    def _context(self, slots):
        """Whatever ``_addresses`` needs to address positions of the adjacencies of ``slots``."""
        raise NotImplementedError

    def _addresses(self, ctx, seg, pos):
        """(column word, weight word) of position ``pos`` of the adjacency of ``ctx`` slot ``seg``."""
        raise NotImplementedError

    def _resize(self, ctx, new_count):
        """Storage of ``ctx``'s slots holds ``new_count`` edges afterwards (live positions kept); new ctx."""
        raise NotImplementedError

    def _new_storage(self, slots) -> None:
        """Storage of freshly activated slots (records already reset)."""

    def _drop_storage(self, ctx) -> None:
        """Storage of deleted vertices (their counts are 0 already)."""

    # -- records ------------------------------------------------------------------------------
    def _rec(self, slots, field):
        return self.words[slots.astype(np.int64) * VERTEX_WORDS + field]

    def _set_rec(self, slots, field, values) -> None:
        self.words[slots.astype(np.int64) * VERTEX_WORDS + field] = values

    def _ensure_ids(self, max_id: int) -> None:
        """The id -> slot map covers ``max_id`` (doubling; it is the host/device mapping table)."""
        if max_id < self.slot_of.shape[0]:
            return
        cap = max(int(self.slot_of.shape[0]), 1)
        while cap <= max_id:
            cap *= 2
        grown = self.xp.full(cap, NONE, dtype=np.int32)
        grown[:self.slot_of.shape[0]] = self.slot_of
        self.slot_of = grown

    def _slots_of(self, ids):
        """Slot of each id (int64), -1 where the id is not a live vertex."""
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        cap = int(self.slot_of.shape[0])
        if cap == 0:
            return xp.full(ids.shape[0], NONE, dtype=np.int64)
        ok = (ids >= 0) & (ids < cap)
        return xp.where(ok, self.slot_of[xp.clip(ids, 0, cap - 1)], NONE).astype(np.int64)

    # =========================================================================
    # vertices (4.2.4)
    # =========================================================================
    def _take_slots(self, ids):
        """Slots for new vertices ``ids`` (sorted, distinct): vertex queue first, then the bump counter."""
        xp = self.xp
        n = int(ids.shape[0])
        if not self.reuse_slots:                  # aimGraph: static vertex data, slot = id
            top = int(ids.max()) + 1
            if top > self.vertex_top:
                self._reserve_slots(top)
                fresh = xp.arange(self.vertex_top, top, dtype=np.int64)
                self._reset_records(fresh)
                self._set_rec(fresh, R_CAP, 0)
                self._set_rec(fresh, R_FIRST, NONE)
                self._set_rec(fresh, R_LAST, NONE)
                self.stats["slots_bumped"] += top - self.vertex_top
                self.vertex_top = top
            return ids.astype(np.int64)
        reused = min(n, len(self.vertex_queue))
        popped = self.vertex_queue.pop(reused).astype(np.int64)
        fresh = n - reused
        self._reserve_slots(self.vertex_top + fresh)
        bumped = self.vertex_top + xp.arange(fresh, dtype=np.int64)
        self.vertex_top += fresh
        self.stats["slots_reused"] += reused
        self.stats["slots_bumped"] += fresh
        slots = xp.concatenate([popped, bumped])
        self._set_rec(bumped, R_CAP, 0)
        self._set_rec(bumped, R_FIRST, NONE)
        self._set_rec(bumped, R_LAST, NONE)
        return slots

    def _reset_records(self, slots) -> None:
        self._set_rec(slots, R_HOST, NONE)
        self._set_rec(slots, R_COUNT, 0)

    def insert_vertices(self, ids) -> None:
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        if ids.shape[0] == 0:
            return
        if int(ids.min()) < 0:
            raise ValueError("vertex ids must be >= 0")
        self._ensure_ids(int(ids.max()))
        ids = ids[self.slot_of[ids] < 0]
        if ids.shape[0] == 0:
            return
        ids = xp.sort(ids)
        keep = xp.ones(ids.shape[0], dtype=bool)
        keep[1:] = ids[1:] != ids[:-1]            # duplicates within the batch (Algorithm 3, line 4)
        ids = ids[keep]
        slots = self._take_slots(ids)
        self._set_rec(slots, R_HOST, ids.astype(np.int32))
        self._set_rec(slots, R_COUNT, 0)
        self.slot_of[ids] = slots.astype(np.int32)
        self._new_storage(slots)
        self._num_vertices += int(ids.shape[0])

    def delete_vertices(self, ids):
        """Algorithm 4: free the vertices' storage and slots, then remove their in-edges by a reverse scan."""
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        slots = self._slots_of(ids)
        ids = ids[slots >= 0]
        empty = (xp.zeros(0, dtype=VERTEX_DTYPE), xp.zeros(0, dtype=VERTEX_DTYPE))
        if ids.shape[0] == 0:
            return empty
        ids = xp.sort(ids)
        keep = xp.ones(ids.shape[0], dtype=bool)
        keep[1:] = ids[1:] != ids[:-1]
        ids = ids[keep]
        slots = self.slot_of[ids].astype(np.int64)
        ctx = self._context(slots)
        seg, _, cw, _ = self._live(ctx, slots)
        out_src = ids[seg].astype(VERTEX_DTYPE)
        out_dst = self.words[cw].astype(VERTEX_DTYPE)
        self.words[cw] = NONE                       # entries past a vertex's count are always -1
        self._num_edges -= int(cw.shape[0])
        self._set_rec(slots, R_COUNT, 0)
        self._drop_storage(ctx)
        self._reset_records(slots)
        self.slot_of[ids] = NONE
        if self.reuse_slots:
            self.vertex_queue.push(slots)
        self._num_vertices -= int(ids.shape[0])
        # reverse deletion: one worker per remaining adjacency searches its edges in the sorted ids
        live = self.vertices().astype(np.int64)
        lslots = self.slot_of[live].astype(np.int64)
        lctx = self._context(lslots)
        lseg, _, lcw, _ = self._live(lctx, lslots)
        cols = self.words[lcw].astype(np.int64)
        pos = xp.minimum(xp.searchsorted(ids, cols), ids.shape[0] - 1)
        hit = xp.nonzero(ids[pos] == cols)[0]
        if hit.shape[0] == 0:
            return out_src, out_dst
        keys = edge_keys(xp, live[lseg[hit]], cols[hit])      # ascending: live and positions are
        keys = xp.sort(keys)
        self._delete_sorted_keys(keys)
        return (xp.concatenate([out_src, key_sources(keys).astype(VERTEX_DTYPE)]),
                xp.concatenate([out_dst, key_targets(keys).astype(VERTEX_DTYPE)]))

    # =========================================================================
    # adjacency access shared by all operations
    # =========================================================================
    def _live(self, ctx, slots):
        """(segment, position, column word, weight word) of every live edge of ``slots``, position order."""
        counts = self._rec(slots, R_COUNT).astype(np.int64) if slots.shape[0] else \
            self.xp.zeros(0, dtype=np.int64)
        seg, pos, _ = _expand(self.xp, counts)
        cw, ww = self._addresses(ctx, seg, pos)
        return seg, pos, cw, ww

    def _find(self, ukeys):
        """Column word of each sorted distinct key (-1 where absent) and the walk it used."""
        xp = self.xp
        n = int(ukeys.shape[0])
        found = xp.full(n, NONE, dtype=np.int64)
        src = key_sources(ukeys)
        first = xp.ones(n, dtype=bool)
        first[1:] = src[1:] != src[:-1]
        vids = src[first]
        slots = self._slots_of(vids)
        live = slots >= 0
        vids, slots = vids[live], slots[live]
        ctx = self._context(slots)
        seg, pos, cw, ww = self._live(ctx, slots)
        if cw.shape[0] == 0:
            return found, (vids, slots, ctx, seg, pos, cw, ww, xp.zeros(0, dtype=bool))
        if self.fused:
            hit = fk.find(self, ukeys, vids, seg, cw, found)
        else:
            key = edge_keys(xp, vids[seg], self.words[cw])
            at = xp.minimum(xp.searchsorted(ukeys, key), n - 1)
            hit = ukeys[at] == key
            found[at[hit]] = cw[hit]
        return found, (vids, slots, ctx, seg, pos, cw, ww, hit)

    def _weight_view(self):
        return self.words.view(np.float32)

    # =========================================================================
    # edges (4.2.5)
    # =========================================================================
    def insert_edges(self, batch: CSRBatch):
        """Vertex-centric insertion: sort, duplicate check against the adjacencies, append (or merge sorted)."""
        xp = self.xp
        src = batch.sources().astype(np.int64)
        dst = xp.asarray(batch.cols).astype(np.int64)
        n = int(dst.shape[0])
        mask = xp.zeros(n, dtype=bool)
        if n == 0:
            return mask
        if int(src.min()) < 0 or int(dst.min()) < 0:
            raise ValueError("vertex ids must be >= 0")
        w = (xp.asarray(batch.weights, dtype=WEIGHT_DTYPE) if batch.weights is not None
             else xp.ones(n, dtype=WEIGHT_DTYPE))
        self.insert_vertices(xp.concatenate([src, dst]))       # endpoints that are not live yet
        ukeys, last, first = dedupe_keys(xp, edge_keys(xp, src, dst))
        uw = w[last]
        found, walk = self._find(ukeys)
        exists = found >= 0
        vids, ctx = walk[0], walk[2]
        # upsert: the weight of an existing edge sits ``stride`` words after its column
        fw = self._weight_words_of(ctx, vids, ukeys[exists], found[exists])
        self._weight_view()[fw] = uw[exists]
        new = ~exists
        mask[first[new]] = True
        nkeys, nw = ukeys[new], uw[new]
        if nkeys.shape[0]:
            self._append(nkeys, nw, walk)
        return mask

    def _weight_words_of(self, ctx, vids, keys, cws):
        """Weight word of found edges, from their column word and their vertex's layout."""
        xp = self.xp
        if keys.shape[0] == 0:
            return xp.zeros(0, dtype=np.int64)
        seg = xp.searchsorted(vids, key_sources(keys))
        return cws + self._weight_stride(ctx, seg)

    def _weight_stride(self, ctx, seg):
        raise NotImplementedError

    def _append(self, keys, weights, walk) -> None:
        """New edges (sorted keys, all absent) after each vertex's last edge, or merged when sorted."""
        xp = self.xp
        vids, slots, ctx, seg, _, cw, ww, _ = walk
        src = key_sources(keys)
        vi = xp.searchsorted(vids, src)                 # every new key's vertex is in the walk
        add = bincount(xp, vi, int(vids.shape[0]))
        old_count = self._rec(slots, R_COUNT).astype(np.int64)
        new_count = old_count + add
        touched = xp.nonzero(add > 0)[0]
        if self.sorted:
            # the combined sweep of Figure 4.7: present and new edges merged in column order
            ocols, owts = self.words[cw].copy(), self._weight_view()[ww].copy()
        nctx = self._resize(self._sub_context(ctx, touched), new_count[touched])
        tslots = slots[touched]
        if self.sorted:
            tmap = xp.full(int(vids.shape[0]), NONE, dtype=np.int64)
            tmap[touched] = xp.arange(touched.shape[0], dtype=np.int64)
            oseg = tmap[seg]
            keep = oseg >= 0
            allk = xp.concatenate([(oseg[keep] << 32) | ocols[keep].astype(np.int64),
                                   (tmap[vi] << 32) | key_targets(keys)])
            allw = xp.concatenate([owts[keep], weights])
            order = xp.argsort(allk)
            allk, allw = allk[order], allw[order]
            tseg = key_sources(allk)
            tpos = xp.arange(allk.shape[0], dtype=np.int64) - (xp.cumsum(new_count[touched]) -
                                                               new_count[touched])[tseg]
            wcw, www = self._addresses(nctx, tseg, tpos)
            self.words[wcw] = key_targets(allk).astype(np.int32)
            self._weight_view()[www] = allw
        else:
            tmap = xp.full(int(vids.shape[0]), NONE, dtype=np.int64)
            tmap[touched] = xp.arange(touched.shape[0], dtype=np.int64)
            kseg = tmap[vi]
            first_of = xp.searchsorted(vi, vi)               # keys are sorted by vertex
            p = old_count[vi] + xp.arange(keys.shape[0], dtype=np.int64) - first_of
            wcw, www = self._addresses(nctx, kseg, p)
            self.words[wcw] = key_targets(keys).astype(np.int32)
            self._weight_view()[www] = weights
        self._set_rec(tslots, R_COUNT, new_count[touched].astype(np.int32))
        self._num_edges += int(keys.shape[0])

    def _sub_context(self, ctx, idx):
        raise NotImplementedError

    def delete_edges(self, batch: CSRBatch):
        xp = self.xp
        src = batch.sources().astype(np.int64)
        dst = xp.asarray(batch.cols).astype(np.int64)
        n = int(dst.shape[0])
        mask = xp.zeros(n, dtype=bool)
        if n == 0:
            return mask
        ukeys, _, first = dedupe_keys(xp, edge_keys(xp, src, dst))
        mask[first] = self._delete_sorted_keys(ukeys)
        return mask

    def _delete_sorted_keys(self, ukeys):
        """Delete sorted distinct keys; True where an edge was removed.  Compaction, then shrink."""
        xp = self.xp
        found, walk = self._find(ukeys)
        removed = found >= 0
        nrem = int(removed.sum())
        if nrem == 0:
            return removed
        vids, slots, ctx, seg, pos, cw, ww, dead = walk
        nv = int(vids.shape[0])
        old_count = self._rec(slots, R_COUNT).astype(np.int64)
        new_count = old_count - bincount(xp, seg[dead], nv)
        cut = new_count[seg]
        if self.sorted:
            # survivors shift forward in order: rank among the vertex's survivors
            alive = ~dead
            rank = xp.cumsum(alive) - 1
            # survivors of earlier vertices, so that the rank restarts at 0 per vertex
            per_vertex = bincount(xp, seg[alive], nv)
            survivors_before = xp.cumsum(per_vertex) - per_vertex
            newpos = rank - survivors_before[seg]
            moving = alive & (newpos != pos)
            cols = self.words[cw[moving]].copy()
            wts = self._weight_view()[ww[moving]].copy()
            dcw, dww = self._addresses(ctx, seg[moving], newpos[moving])
            self.words[dcw] = cols
            self._weight_view()[dww] = wts
        else:
            # holes below the new end take the survivors past it, i-th hole <- i-th mover (4.2.5.2)
            holes = dead & (pos < cut)
            movers = ~dead & (pos >= cut)
            self.words[cw[holes]] = self.words[cw[movers]]
            self._weight_view()[ww[holes]] = self._weight_view()[ww[movers]]
        self.words[cw[pos >= cut]] = NONE
        self._set_rec(slots, R_COUNT, new_count.astype(np.int32))
        changed = xp.nonzero(new_count != old_count)[0]
        self._resize(self._sub_context(ctx, changed), new_count[changed])
        self._num_edges -= nrem
        return removed

    # =========================================================================
    # queries
    # =========================================================================
    def _query_words(self, src, dst):
        xp = self.xp
        src = xp.asarray(src, dtype=np.int64)
        dst = xp.asarray(dst, dtype=np.int64)
        out = xp.full(src.shape[0], NONE, dtype=np.int64)
        wout = xp.full(src.shape[0], NONE, dtype=np.int64)
        if src.shape[0] == 0:
            return out, wout
        ok = xp.nonzero((self._slots_of(src) >= 0) & (dst >= 0) & (dst < 2**31))[0]
        if ok.shape[0] == 0:
            return out, wout
        key = edge_keys(xp, src[ok], dst[ok])
        order = xp.argsort(key)
        sk = key[order]
        ustart = xp.ones(sk.shape[0], dtype=bool)
        ustart[1:] = sk[1:] != sk[:-1]
        ukeys = sk[ustart]
        uidx = xp.cumsum(ustart) - 1
        found, walk = self._find(ukeys)
        vids, _, ctx, *_ = walk
        hit = found >= 0
        fw = xp.full(ukeys.shape[0], NONE, dtype=np.int64)
        fw[hit] = self._weight_words_of(ctx, vids, ukeys[hit], found[hit])
        res = xp.empty(sk.shape[0], dtype=np.int64)
        resw = xp.empty(sk.shape[0], dtype=np.int64)
        res[order] = found[uidx]
        resw[order] = fw[uidx]
        out[ok] = res
        wout[ok] = resw
        return out, wout

    def contains(self, src, dst):
        return self._query_words(src, dst)[0] >= 0

    def edge_weights(self, src, dst):
        xp = self.xp
        cw, ww = self._query_words(src, dst)
        out = xp.full(cw.shape[0], np.nan, dtype=np.float32)
        hit = cw >= 0
        out[hit] = self._weight_view()[ww[hit]]
        return out

    def degree(self, vertices=None):
        xp = self.xp
        if vertices is None:
            vertices = xp.arange(self.slot_of.shape[0], dtype=np.int64)
        slots = self._slots_of(vertices)
        out = xp.zeros(slots.shape[0], dtype=np.int64)
        ok = slots >= 0
        out[ok] = self._rec(slots[ok], R_COUNT).astype(np.int64)
        return out

    def adjacency(self, vertices=None) -> CSR:
        """CSR of the requested rows (in that order), each row in adjacency (page) order."""
        xp = self.xp
        if vertices is None:
            vertices = xp.arange(self.slot_of.shape[0], dtype=np.int64)
        slots = self._slots_of(vertices)
        counts = xp.zeros(slots.shape[0], dtype=np.int64)
        ok = xp.nonzero(slots >= 0)[0]
        counts[ok] = self._rec(slots[ok], R_COUNT).astype(np.int64)
        offsets = xp.zeros(slots.shape[0] + 1, dtype=OFFSET_DTYPE)
        offsets[1:] = xp.cumsum(counts)
        total = int(offsets[-1])
        cols = xp.empty(total, dtype=VERTEX_DTYPE)
        weights = xp.empty(total, dtype=WEIGHT_DTYPE)
        if total:
            rows = ok[counts[ok] > 0]
            ctx = self._context(slots[rows])
            seg, pos, cw, ww = self._live(ctx, slots[rows])
            at = offsets[rows][seg] + pos
            cols[at] = self.words[cw]
            weights[at] = self._weight_view()[ww]
        return CSR(offsets=offsets, cols=cols, weights=weights)

    # =========================================================================
    # sizes
    # =========================================================================
    @property
    def num_vertices(self) -> int:
        return self._num_vertices

    @property
    def num_edges(self) -> int:
        return self._num_edges

    @property
    def vertex_capacity(self) -> int:
        return int(self.slot_of.shape[0])

    def vertices(self):
        return self.xp.nonzero(self.slot_of >= 0)[0].astype(VERTEX_DTYPE)


@register
class FaimGraph(PagedGraph):
    """faimGraph: one pool, vertex records from the bottom, linked fixed-size edge pages from the top.

    Options: :attr:`options_spec`.
    """

    name = "faimgraph"
    #: freed pages go to the page queue (False: aimGraph, pages stay with their vertex)
    reuse_pages = True

    options_spec: ClassVar[dict[str, Option]] = {
        **PagedGraph.options_spec,
        "page_bytes": Option(int, 64, "bytes of an edge page (a multiple of 4: edges, then the next page's "
                             "index)", low=12, high=MAX_ENTRIES),
        "headroom": Option(float, 1.5, "the first pool is the measured need times this", low=1.0),
        "grow": Option(float, 1.5, "a full pool grows by this factor", low=1.0, low_open=True),
        "min_pool_bytes": Option(int, 4096, "the first pool's bytes, at least", low=0, high=MAX_ENTRIES),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        self.page_bytes = self.options["page_bytes"]
        if self.page_bytes % 4:
            raise ValueError(f"{self.name} option page_bytes={self.page_bytes}: expected a multiple of 4 "
                             "(a page is int32 words)")
        self.page_words = self.page_bytes // 4
        self.edges_per_page = (self.page_words - 1) // 2
        self.headroom = self.options["headroom"]
        self.grow = self.options["grow"]
        self.min_pool_bytes = self.options["min_pool_bytes"]
        self.pool = xp.zeros(0, dtype=np.int32)
        self.page_top = 0                      # pages handed out from the top
        self.page_queue = ArrayQueue(xp) if self.reuse_pages else None
        if self.reuse_slots:
            self.vertex_queue = ArrayQueue(xp)
        self.stats.update({"pool_grows": 0, "pages_reused": 0, "pages_bumped": 0, "pages_freed": 0})

    # -- the pool -------------------------------------------------------------------------------
    @property
    def words(self):
        return self.pool

    @property
    def pool_words(self) -> int:
        return int(self.pool.shape[0])

    def _ensure_pool(self, slots: int, pages: int) -> None:
        """Vertex region of ``slots`` records and ``pages`` pages fit; else re-initialise larger."""
        need = slots * VERTEX_WORDS + pages * self.page_words
        if need <= self.pool_words:
            return
        if self.pool_words == 0:
            new = max(int(math.ceil(need * self.headroom)), self.min_pool_bytes // 4)
        else:
            new = max(need, int(math.ceil(self.pool_words * self.grow)))
            self.stats["pool_grows"] += 1
        xp, old, W = self.xp, self.pool, self.pool_words
        pool = xp.zeros(new, dtype=np.int32)
        low = self.vertex_top * VERTEX_WORDS
        high = self.page_top * self.page_words
        pool[:low] = old[:low]                       # the two copies of a re-initialisation
        if high:
            pool[new - high:] = old[W - high:]
        self.pool = pool

    def _reserve_slots(self, top: int) -> None:
        self._ensure_pool(top, self.page_top)

    def page_base(self, pages):
        """First word of each page (pages are counted from the top of the pool)."""
        return self.pool_words - (pages.astype(np.int64) + 1) * self.page_words

    def _take_pages(self, n: int):
        """``n`` pages: page queue first (O(1) reuse, 4.2.2), then the bump counter."""
        xp = self.xp
        reused = min(n, len(self.page_queue)) if self.reuse_pages else 0
        popped = self.page_queue.pop(reused).astype(np.int64) if reused else xp.zeros(0, dtype=np.int64)
        fresh = n - reused
        self._ensure_pool(self.vertex_top, self.page_top + fresh)
        bumped = self.page_top + xp.arange(fresh, dtype=np.int64)
        self.page_top += fresh
        self.stats["pages_reused"] += reused
        self.stats["pages_bumped"] += fresh
        return xp.concatenate([popped, bumped])

    def _free_pages(self, pages) -> None:
        n = int(pages.shape[0])
        if n == 0:
            return
        self.page_queue.push(pages)
        self.stats["pages_freed"] += n

    # -- layout: linked pages ---------------------------------------------------------------------
    def _pages_needed(self, count):
        """Pages a vertex with ``count`` edges holds: at least one (Algorithm 3 gives every vertex one)."""
        e = self.edges_per_page
        return self.xp.maximum((count + e - 1) // e, 1)

    def _context(self, slots):
        """Walk the linked lists of ``slots``: ``table[start[i] + k]`` is page ``k`` of slot ``i``."""
        xp = self.xp
        slots = xp.asarray(slots, dtype=np.int64)
        if slots.shape[0] == 0:
            z = xp.zeros(0, dtype=np.int64)
            return (slots, z, z, z)
        npages = self._rec(slots, R_CAP).astype(np.int64) // self.edges_per_page
        start = xp.cumsum(npages) - npages
        total = int(npages.sum())
        if self.fused:
            table = fk.walk(self, slots, start, npages, total)
            return (slots, start, npages, table)
        table = xp.full(total, NONE, dtype=np.int64)
        seg = xp.nonzero(npages > 0)[0]
        page = self._rec(slots[seg], R_FIRST).astype(np.int64)
        k = 0
        while seg.shape[0]:                          # one step per page of the longest list
            table[start[seg] + k] = page
            k += 1
            more = npages[seg] > k
            seg, page = seg[more], page[more]
            page = self.pool[self.page_base(page) + self.page_words - 1].astype(np.int64)
        return (slots, start, npages, table)

    def _sub_context(self, ctx, idx):
        xp = self.xp
        slots, start, npages, table = ctx
        sub_np = npages[idx]
        seg, k, sub_start = _expand(xp, sub_np)
        return (slots[idx], sub_start, sub_np, table[start[idx][seg] + k])

    def _addresses(self, ctx, seg, pos):
        _, start, _, table = ctx
        e = self.edges_per_page
        page = table[start[seg] + pos // e]
        cw = self.page_base(page) + pos % e
        return cw, cw + e

    def _weight_stride(self, ctx, seg):
        return self.edges_per_page

    def _link(self, pages, nxt) -> None:
        self.pool[self.page_base(pages) + self.page_words - 1] = nxt.astype(np.int32)

    def _resize(self, ctx, new_count):
        """Pop pages for lists that must grow (linked after the last page), free the tail of lists that
        shrink (faimGraph only); returns the context of the new lists."""
        xp = self.xp
        slots, start, npages, table = ctx
        if slots.shape[0] == 0:
            return ctx
        want = self._pages_needed(new_count)
        if not self.reuse_pages:
            want = xp.maximum(want, npages)               # aimGraph never gives a page back
        need = xp.maximum(want - npages, 0)
        total = int(need.sum())
        ids = self._take_pages(total)
        # the new table: surviving old pages, then popped ones (prefix sum of the needs, 4.2.5.1)
        seg, k, nstart = _expand(xp, want)
        excl = xp.cumsum(need) - need
        old = k < npages[seg]
        ntable = xp.full(int(seg.shape[0]), NONE, dtype=np.int64)
        ntable[old] = table[start[seg[old]] + k[old]]
        ntable[~old] = ids[excl[seg[~old]] + k[~old] - npages[seg[~old]]]
        if total:
            # link: the old last page and every new page point to their successor, the last one to -1
            relink = (need[seg] > 0) & (k >= npages[seg] - 1)
            at = xp.nonzero(relink)[0]
            nxt = xp.where(k[at] + 1 < want[seg[at]], ntable[xp.minimum(at + 1, ntable.shape[0] - 1)], NONE)
            self._link(ntable[at], nxt)
            fresh = ntable[~old]
            self.pool[self.page_base(fresh)[:, None]
                      + xp.arange(2 * self.edges_per_page)[None, :]] = NONE
            first_new = (need > 0) & (npages == 0)
            self._set_rec(slots[first_new], R_FIRST, ntable[nstart[first_new]].astype(np.int32))
        shrink = want < npages
        if bool(shrink.any()):
            fseg, fk_, _ = _expand(xp, xp.where(shrink, npages - want, 0))
            freed = table[start[fseg] + want[fseg] + fk_]
            self._link(table[start[shrink] + want[shrink] - 1], xp.full(int(shrink.sum()), NONE))
            self._free_pages(freed)
        lastk = nstart + want - 1
        self._set_rec(slots, R_LAST, ntable[lastk].astype(np.int32))
        self._set_rec(slots, R_CAP, (want * self.edges_per_page).astype(np.int32))
        return (slots, nstart, want, ntable)

    def _new_storage(self, slots) -> None:
        """Each new vertex owns one page (aimGraph keeps the pages an id had before)."""
        xp = self.xp
        bare = slots[self._rec(slots, R_CAP) == 0]
        if bare.shape[0] == 0:
            return
        pages = self._take_pages(int(bare.shape[0]))
        self._link(pages, xp.full(pages.shape[0], NONE))
        self.pool[self.page_base(pages)[:, None] + xp.arange(2 * self.edges_per_page)[None, :]] = NONE
        self._set_rec(bare, R_FIRST, pages.astype(np.int32))
        self._set_rec(bare, R_LAST, pages.astype(np.int32))
        self._set_rec(bare, R_CAP, self.edges_per_page)

    def _drop_storage(self, ctx) -> None:
        """A deleted vertex's pages go to the page queue (aimGraph: they stay with the id's slot)."""
        if not self.reuse_pages:
            return
        slots, _, _, table = ctx
        self._free_pages(table)
        self._set_rec(slots, R_CAP, 0)
        self._set_rec(slots, R_FIRST, NONE)
        self._set_rec(slots, R_LAST, NONE)

    # -- memory ---------------------------------------------------------------------------------
    @property
    def pages_free(self) -> int:
        return len(self.page_queue) if self.reuse_pages else 0

    @property
    def pages_in_use(self) -> int:
        return self.page_top - self.pages_free

    def memory(self) -> dict:
        """Reserved: the pool, the id map and the queues.  Used: live vertex records, pages in use, id map
        entries of live vertices (4.3.1 counts the framework's memory the same way)."""
        queues = (self.page_queue.storage_bytes() if self.page_queue is not None else 0) + \
                 (self.vertex_queue.storage_bytes() if self.vertex_queue is not None else 0)
        reserved = 4 * self.pool_words + 4 * int(self.slot_of.shape[0]) + queues
        used = (4 * VERTEX_WORDS * self._num_vertices + self.page_bytes * self.pages_in_use
                + 4 * self._num_vertices)
        return {
            "reserved_bytes": int(reserved),
            "used_bytes": int(used),
            "pool_bytes": int(4 * self.pool_words),
            "page_bytes": self.page_bytes,
            "edges_per_page": self.edges_per_page,
            "pages_in_use": int(self.pages_in_use),
            "pages_free": int(self.pages_free),
            "pages_bumped": int(self.page_top),
            "vertex_slots": int(self.vertex_top),
            "vertex_slots_free": len(self.vertex_queue) if self.vertex_queue is not None else 0,
            "queue_bytes": int(queues),
            "bytes_per_live_edge": (used / self._num_edges) if self._num_edges else 0.0,
            "page_fill": (self._num_edges / (self.pages_in_use * self.edges_per_page))
            if self.pages_in_use else 0.0,
            "pool_grows": int(self.stats["pool_grows"]),
        }
