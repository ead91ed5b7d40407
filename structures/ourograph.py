"""ouroGraph (gpu-dynamic-graph-thesis.txt, chapter 6): faimGraph on the Ouroboros allocator.

The memory region is an :class:`structures.ouroboros.Ouroboros` instance
(Figure 6.1): the bottom is its linearly addressable region and holds the
vertex records (the same 5-word records as faimGraph, 6.2.1: host id,
neighbours, capacity, page handle, size class), growing upwards; the top is
cut into chunks split into power-of-two pages of one size class each, served
from per-class page queues.

Adjacencies (6.2.2): a vertex's edges live on **one contiguous page**, the
smallest power-of-two page holding them (columns, then float32 weights: a
page of ``P`` words holds ``P // 2`` edges), with no over-allocation beyond
the power of two.  When an update changes the size class, the adjacency is
reallocated: a page of the new class is dequeued, the surviving edges are
copied over, the old page is freed to its class queue (also on shrinking:
"an adjacency changing from 33 B to 32 B would be reallocated").  An empty
adjacency owns no page.  Since the final size is known after the duplicate
check, each touched adjacency is reallocated at most once per batch (6.2.2,
point 1), and no traversal is needed anywhere: position ``i`` is word
``page + i``.

Everything else - id map, vertex queue (here an Ouroboros queue of the same
variant, 6.2.1), duplicate checks, compaction, sorted mode, reverse deletion
of in-edges - is faimGraph's (:class:`structures.faimgraph.PagedGraph`).

Options: :attr:`OuroGraph.options_spec` (``queue="array"``, the default, is the thesis's *Ouro-S-P*).
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from .faimgraph import NONE, R_CAP, R_COUNT, R_FIRST, R_LAST, VERTEX_WORDS, PagedGraph, _expand
from .options import MAX_ENTRIES, Option
from .ouroboros import HEADER_WORDS, QUEUE_VARIANTS, Ouroboros
from .registry import register


@register
class OuroGraph(PagedGraph):
    """Vertex records in Ouroboros's linear region, each adjacency on one power-of-two page."""

    name = "ourograph"

    options_spec: ClassVar[dict[str, Option]] = {
        **PagedGraph.options_spec,
        "queue": Option(str, "array", "the page queues: 'array' (standard), 'va' (virtualized array hierarchy), "
                        "'vl' (virtualized linked chunks)", choices=QUEUE_VARIANTS),
        "chunk_bytes": Option(int, 8192, "bytes of a chunk (cut into pages of one size class; at least a "
                              "queue chunk)", low=4 * (HEADER_WORDS + 4),
                              high=MAX_ENTRIES, power_of_two=True),
        "min_page_bytes": Option(int, 16, "bytes of the smallest page", low=4, high="chunk_bytes",
                                 power_of_two=True),
        "headroom": Option(float, 1.5, "the first region is the measured need times this", low=1.0),
        "grow": Option(float, 1.5, "a full region grows by this factor (at least to the need)", low=1.0),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        opt = self.options
        self.headroom = opt["headroom"]
        self.allocator = Ouroboros(xp, chunk_bytes=opt["chunk_bytes"], min_page_bytes=opt["min_page_bytes"],
                                   queue=opt["queue"], grow=opt["grow"])
        self.vertex_queue = self.allocator.make_queue()
        self._sized = False
        self.stats.update({"reallocations": 0})

    @property
    def words(self):
        return self.allocator.memory

    def _reserve_slots(self, top: int) -> None:
        self.allocator.reserve_linear(top * VERTEX_WORDS)

    def _size_from_need(self, vertices: int, edges: int) -> None:
        """First batch: reserve the measured need (records + edge pages, x headroom) at once."""
        if self._sized:
            return
        self._sized = True
        need_words = VERTEX_WORDS * vertices + 2 * 2 * edges          # pow2 pages: at most 2x the edges
        self.allocator.reserve_total(int(math.ceil(need_words * self.headroom)))

    def insert_edges(self, batch):
        if not self._sized and batch.num_edges:
            self._size_from_need(int(batch.num_rows) + self.vertex_top, batch.num_edges)
        return super().insert_edges(batch)

    # -- layout: one page per adjacency ----------------------------------------------------------
    def _context(self, slots):
        xp = self.xp
        slots = xp.asarray(slots, dtype=np.int64)
        if slots.shape[0] == 0:
            z = xp.zeros(0, dtype=np.int64)
            return (slots, z, z, z)
        return (slots, self._rec(slots, R_FIRST).astype(np.int64), self._rec(slots, R_CAP).astype(np.int64),
                self._rec(slots, R_LAST).astype(np.int64))

    def _sub_context(self, ctx, idx):
        return tuple(a[idx] for a in ctx)

    def _addresses(self, ctx, seg, pos):
        _, handle, cap, _ = ctx
        cw = self.allocator.address(handle[seg]) + pos
        return cw, cw + cap[seg]

    def _weight_stride(self, ctx, seg):
        return ctx[2][seg]

    def _class_of(self, count):
        """Size class of an adjacency of ``count`` edges (-1: no page)."""
        xp = self.xp
        cls = self.allocator.class_for_words(2 * xp.maximum(count, 1))
        return xp.where(count > 0, cls, NONE)

    def _resize(self, ctx, new_count):
        """Reallocate the adjacencies whose size class changes: new page, copy, free the old page."""
        xp = self.xp
        slots, handle, cap, cls = ctx
        if slots.shape[0] == 0:
            return ctx
        new_cls = self._class_of(new_count)
        moved = xp.nonzero(new_cls != cls)[0]
        if moved.shape[0] == 0:
            return ctx
        handle, cap, cls = handle.copy(), cap.copy(), cls.copy()
        mslots, mcls = slots[moved], new_cls[moved]
        get = mcls >= 0
        new_handle = xp.full(moved.shape[0], NONE, dtype=np.int64)
        new_handle[get] = self.allocator.allocate(mcls[get])
        new_cap = xp.zeros(moved.shape[0], dtype=np.int64)
        if bool(get.any()):
            pw = self.allocator.page_words_of(xp.maximum(mcls, 0))
            new_cap[get] = pw[get] // 2
            # the new page's unused entries read -1, like every position past a count
            cseg, cpos, _ = _expand(xp, new_cap)
            self.words[self.allocator.address(new_handle[cseg]) + cpos] = NONE
        # copy the surviving prefix (the live edges, already compacted) to the new page
        keep = xp.minimum(self._rec(mslots, R_COUNT).astype(np.int64), xp.maximum(new_count[moved], 0))
        keep = xp.where(get & (handle[moved] >= 0), keep, 0)
        seg, pos, _ = _expand(xp, keep)
        if seg.shape[0]:
            src = self.allocator.address(handle[moved][seg]) + pos
            dst = self.allocator.address(new_handle[seg]) + pos
            self.words[dst] = self.words[src]
            self.words[dst + new_cap[seg]] = self.words[src + cap[moved][seg]]
        had = handle[moved] >= 0
        self.allocator.free(handle[moved][had], cls[moved][had])
        self.stats["reallocations"] += int(moved.shape[0])
        handle[moved], cap[moved], cls[moved] = new_handle, new_cap, mcls
        self._set_rec(mslots, R_FIRST, new_handle.astype(np.int32))
        self._set_rec(mslots, R_CAP, new_cap.astype(np.int32))
        self._set_rec(mslots, R_LAST, mcls.astype(np.int32))
        return (slots, handle, cap, cls)

    def _new_storage(self, slots) -> None:
        self._set_rec(slots, R_CAP, 0)
        self._set_rec(slots, R_FIRST, NONE)
        self._set_rec(slots, R_LAST, NONE)

    def _drop_storage(self, ctx) -> None:
        self._resize(ctx, self.xp.zeros(ctx[0].shape[0], dtype=np.int64))

    # -- memory ------------------------------------------------------------------------------------
    def memory(self) -> dict:
        """Reserved: the Ouroboros region, queue storage outside it, the id map.  Used: live vertex
        records, the pages of live adjacencies, id map entries of live vertices."""
        rep = self.allocator.report()
        vq = self.allocator.external_bytes(self.vertex_queue)
        reserved = rep["region_bytes"] + rep["queue_storage_bytes"] + vq + 4 * int(self.slot_of.shape[0])
        used = 4 * VERTEX_WORDS * self._num_vertices + rep["live_page_bytes"] + 4 * self._num_vertices
        return {
            "reserved_bytes": int(reserved),
            "used_bytes": int(used),
            "region_bytes": rep["region_bytes"],
            "live_page_bytes": rep["live_page_bytes"],
            "chunks_in_use": rep["chunks_in_use"],
            "queue_chunks": rep["queue_chunks"],
            "chunk_bytes": self.allocator.chunk_bytes,
            "queue": self.allocator.queue_kind,
            "free_pages_per_class": rep["free_pages_per_class"],
            "live_pages_per_class": rep["live_pages_per_class"],
            "vertex_slots": int(self.vertex_top),
            "vertex_slots_free": len(self.vertex_queue),
            "bytes_per_live_edge": (used / self._num_edges) if self._num_edges else 0.0,
            "page_fill": (8 * self._num_edges / rep["live_page_bytes"]) if rep["live_page_bytes"] else 0.0,
            "reallocations": int(self.stats["reallocations"]),
            "region_grows": rep["grows"],
        }
