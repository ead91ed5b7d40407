"""Ouroboros (gpu-dynamic-graph-thesis.txt, chapter 5): chunks, power-of-two pages, per-size-class queues.

One memory region (``memory``, int32 words on ``xp``) is managed as follows
(Figure 5.1, Figure 6.1):

* the **bottom** is linearly addressable memory lent to the application
  (``reserve_linear``; ouroGraph puts its vertex records there);
* the **top** is cut into equally sized **chunks** (``chunk_bytes``, 8 KiB by
  default, section 5.2.1), handed out by the memory manager from a bump
  counter ``chunk_top`` (the thesis's ``atomicAdd`` on a global offset),
  chunk ``i`` occupying words ``[W - (i+1)*cw, W - i*cw)``;
* a data chunk is split into equally sized **pages** of one size class
  ``c`` (``min_page_bytes << c``, section 5.2.2); a page larger than a chunk
  takes a run of ``2**k`` contiguous chunks (the thesis serves those with an
  instance of Ouroboros whose chunk size is a multiple of the base one);
* every size class has a **page queue** of free page handles (the page-based
  queue, section 5.3.1, *Ouro-P*).  Allocation dequeues; when the class
  queue holds fewer pages than requested, new chunks are split and all their
  pages enqueued first (Algorithm 7, ``allocChunk``), so freed pages are
  always reused before new memory is taken;
* emptied **QueueChunks** go to the **chunk reuse queue** and are taken
  before the bump counter grows.

Addresses are relative to the top of the region: a page handle ``h`` means
words ``[W - h, W - h + page_words)``.  Growing the region (section 5.2.1,
"re-initialize in a larger area") therefore copies two ranges (bottom linear
region, top chunk region) and changes no handle.

Queue variants (``queue=``), all FIFO, all holding int32 indices:

* ``"array"`` - *standard* ring buffer (section 5.2.3) in an array of its
  own, doubled when full (the thesis sizes it statically);
* ``"va"`` - virtualized array-hierarchy queue (*VAQ*, 5.4.1): the entries
  live on QueueChunks taken from this allocator; a small ring of chunk
  pointers maps virtual position ``p`` to QueueChunk ``ptrs[(p // S) % P]``;
* ``"vl"`` - virtualized linked-chunk queue (*VLQ*, 5.4.2): QueueChunks linked
  by a ``next`` word; ``front`` / ``back`` chunk pointers and a walk along the
  links replace the pointer ring.

A QueueChunk carries a header (``virtual_start``, ``countA`` = entries
enqueued on it, ``countB`` = entries still in it, ``next``) followed by
``S = chunk_words - 4`` slots.  When ``countA == S`` and ``countB == 0`` every
entry was dequeued and the chunk goes back to the chunk reuse queue.

Batch semantics.  The thesis serves one thread per request with atomics, a
*bulk semaphore* (Algorithm 6) arbitrating who allocates a new chunk.  Here a
whole batch of requests of one class is served at once: the semaphore's count
is the queue's fill, the shortfall ``ceil((n - count) / pages_per_chunk)``
chunks are allocated once (no waiters remain between batches, so *expected*
and *reserved* are zero), and request ``i`` takes queue entry ``front + i``.
Loops run over size classes and over QueueChunks of a batch, never over pages.
Only the page-based (*P*) variants are implemented: data chunks keep their
size class for life, as the thesis notes for them (chunk-based *C* queues,
5.3.2, which can recycle data chunks, are not).
"""
from __future__ import annotations

import math

import numpy as np

from . import backend

QUEUE_VARIANTS = ("array", "va", "vl")
HEADER_WORDS = 4                   # QueueChunk header: virtual_start, countA, countB, next
H_VSTART, H_COUNT_A, H_COUNT_B, H_NEXT = 0, 1, 2, 3
KIND_FREE, KIND_DATA, KIND_QUEUE, KIND_RUN = 0, 1, 2, 3   # KIND_RUN: a follower chunk of a multi-chunk page
NO_CHUNK = -1


# =============================================================================
# queues
# =============================================================================
class ArrayQueue:
    """The standard index queue: a ring buffer with monotone ``front`` / ``back`` (section 5.2.3).

    ``push`` appends a batch at the back, ``pop(n)`` removes the ``n`` oldest.
    The ring doubles (entries re-laid in order) when a push would overflow it.
    """

    def __init__(self, xp, capacity: int = 64):
        self.xp = xp
        self.ring = xp.full(max(int(capacity), 1), -1, dtype=np.int32)
        self.front = 0
        self.back = 0

    def __len__(self) -> int:
        return self.back - self.front

    @property
    def capacity(self) -> int:
        return int(self.ring.shape[0])

    def _positions(self, start: int, n: int):
        return (start + self.xp.arange(n, dtype=np.int64)) % self.capacity

    def contents(self):
        """Entries front to back (a copy)."""
        return self.ring[self._positions(self.front, len(self))].copy()

    def push(self, values) -> None:
        values = self.xp.asarray(values).astype(np.int32, copy=False)
        n = int(values.shape[0])
        if n == 0:
            return
        if len(self) + n > self.capacity:
            cap = self.capacity
            while len(self) + n > cap:
                cap *= 2
            live = self.contents()
            self.ring = self.xp.full(cap, -1, dtype=np.int32)
            self.ring[:live.shape[0]] = live
            self.front, self.back = 0, int(live.shape[0])
        self.ring[self._positions(self.back, n)] = values
        self.back += n

    def pop(self, n: int):
        n = int(n)
        if n > len(self):
            raise IndexError(f"pop({n}) from a queue of {len(self)}")
        pos = self._positions(self.front, n)
        out = self.ring[pos].copy()
        self.ring[pos] = -1                     # the deletion marker of Algorithm 5
        self.front += n
        return out

    def storage_bytes(self) -> int:
        return 4 * self.capacity


class _VirtualQueue:
    """Shared part of VAQ and VLQ: entries on QueueChunks of ``allocator``, virtual positions."""

    def __init__(self, allocator: Ouroboros):
        self.alloc = allocator
        self.xp = allocator.xp
        self.slots = allocator.chunk_words - HEADER_WORDS
        self.front = 0
        self.back = 0

    def __len__(self) -> int:
        return self.back - self.front

    # -- QueueChunk header access ---------------------------------------------------------
    def _base(self, chunk):
        return self.alloc.chunk_base(chunk)

    def _new_queue_chunk(self, cp: int) -> int:
        """A fresh QueueChunk for chunk position ``cp`` (virtual start ``cp * S``)."""
        c = self.alloc.take_chunks(1, KIND_QUEUE)[0]
        b = self._base(c)
        m = self.alloc.memory
        m[b:b + self.alloc.chunk_words] = -1        # deletion markers
        m[b + H_VSTART] = cp * self.slots
        m[b + H_COUNT_A] = 0
        m[b + H_COUNT_B] = 0
        m[b + H_NEXT] = NO_CHUNK
        return c

    def _chunks_for(self, start: int, n: int, for_push: bool):
        """QueueChunk ids of chunk positions ``start // S .. (start + n - 1) // S`` (subclass)."""
        raise NotImplementedError

    def _slot_words(self, start: int, n: int, chunks):
        """Word index of virtual positions ``start .. start + n - 1`` given their QueueChunks."""
        xp = self.xp
        p = start + xp.arange(n, dtype=np.int64)
        first_cp = start // self.slots
        cidx = p // self.slots - first_cp
        bases = self._base(xp.asarray(chunks, dtype=np.int64))
        return bases[cidx] + HEADER_WORDS + p % self.slots, cidx

    def _count(self, chunks, cidx, field: int, sign: int) -> None:
        xp = self.xp
        per = xp.bincount(cidx, minlength=len(chunks)) if cidx.shape[0] else xp.zeros(len(chunks), np.int64)
        idx = self._base(xp.asarray(chunks, dtype=np.int64)) + field
        self.alloc.memory[idx] += (sign * per).astype(np.int32)

    def push(self, values) -> None:
        values = self.xp.asarray(values).astype(np.int32, copy=False)
        n = int(values.shape[0])
        if n == 0:
            return
        chunks = self._chunks_for(self.back, n, True)
        words, cidx = self._slot_words(self.back, n, chunks)
        self.alloc.memory[words] = values
        self._count(chunks, cidx, H_COUNT_A, +1)
        self._count(chunks, cidx, H_COUNT_B, +1)
        self.back += n

    def pop(self, n: int):
        n = int(n)
        if n > len(self):
            raise IndexError(f"pop({n}) from a queue of {len(self)}")
        if n == 0:
            return self.xp.zeros(0, dtype=np.int32)
        chunks = self._chunks_for(self.front, n, False)
        words, cidx = self._slot_words(self.front, n, chunks)
        m = self.alloc.memory
        out = m[words].copy()
        m[words] = -1
        self._count(chunks, cidx, H_COUNT_B, -1)
        self.front += n
        # emptied QueueChunks (every slot enqueued and dequeued) go back for reuse (5.4.1)
        heads = backend.to_numpy(m[self._base(self.xp.asarray(chunks, dtype=np.int64))[:, None]
                                   + self.xp.asarray([H_COUNT_A, H_COUNT_B])])
        done = [c for c, (a, b) in zip(chunks, heads.tolist()) if a == self.slots and b == 0]
        if done:
            self._retire(done)
        return out

    def contents(self):
        if len(self) == 0:
            return self.xp.zeros(0, dtype=np.int32)
        chunks = self._chunks_for(self.front, len(self), False)
        words, _ = self._slot_words(self.front, len(self), chunks)
        return self.alloc.memory[words].copy()


class VirtualArrayQueue(_VirtualQueue):
    """VAQ (5.4.1): a ring of QueueChunk pointers; position ``p`` lives on ``ptrs[(p // S) % P]``."""

    def __init__(self, allocator: Ouroboros, pointers: int = 8):
        super().__init__(allocator)
        self.ptrs = self.xp.full(max(int(pointers), 1), NO_CHUNK, dtype=np.int32)
        self.placed = 0            # chunk positions < placed have had a QueueChunk
        self.released = 0          # chunk positions < released were retired
        self._place(0)             # "we also place one chunk during initialization"

    def _place(self, cp: int) -> None:
        live = cp + 1 - self.released
        if live > self.ptrs.shape[0]:            # the pointer ring grows (re-laid by chunk position)
            cap = int(self.ptrs.shape[0])
            while live > cap:
                cap *= 2
            old = self.ptrs
            self.ptrs = self.xp.full(cap, NO_CHUNK, dtype=np.int32)
            for q in range(self.released, self.placed):
                self.ptrs[q % cap] = old[q % old.shape[0]]
        self.ptrs[cp % self.ptrs.shape[0]] = self._new_queue_chunk(cp)
        self.placed = cp + 1

    def _chunks_for(self, start, n, for_push):
        first, last = start // self.slots, (start + n - 1) // self.slots
        if for_push:
            for cp in range(self.placed, last + 1):
                self._place(cp)
        ring = backend.to_numpy(self.ptrs)
        return [int(ring[cp % ring.shape[0]]) for cp in range(first, last + 1)]

    def _retire(self, done) -> None:
        done = set(done)
        ring = backend.to_numpy(self.ptrs)
        for cp in range(self.released, self.placed):
            c = int(ring[cp % ring.shape[0]])
            if c not in done:
                break
            self.ptrs[cp % ring.shape[0]] = NO_CHUNK
            self.alloc.release_chunks([c])
            self.released = cp + 1
        if self.released == self.placed:          # keep one QueueChunk in place, as at initialisation
            self._place(self.placed)

    def storage_bytes(self) -> int:
        return 4 * int(self.ptrs.shape[0]) + self.alloc.chunk_bytes * (self.placed - self.released)


class VirtualLinkedQueue(_VirtualQueue):
    """VLQ (5.4.2): QueueChunks in a linked list; ``front_chunk`` / ``back_chunk`` start the walks."""

    def __init__(self, allocator: Ouroboros):
        super().__init__(allocator)
        c = self._new_queue_chunk(0)
        self.front_chunk = self.back_chunk = c
        self.live_chunks = 1

    def _header(self, chunk: int, field: int) -> int:
        return int(self.alloc.memory[self.alloc.chunk_base(chunk) + field])

    def _chunks_for(self, start, n, for_push):
        first, last = start // self.slots, (start + n - 1) // self.slots
        c = self.back_chunk if for_push else self.front_chunk
        out = []
        cp = self._header(c, H_VSTART) // self.slots
        while cp <= last:                       # walk along the links; a push appends missing chunks
            if cp >= first:
                out.append(c)
            if cp == last:
                break
            nxt = self._header(c, H_NEXT)
            if nxt == NO_CHUNK:
                if not for_push:
                    raise RuntimeError("VLQ walk ran off the list")
                nxt = self._new_queue_chunk(cp + 1)
                self.alloc.memory[self.alloc.chunk_base(c) + H_NEXT] = nxt
                self.live_chunks += 1
            c, cp = nxt, cp + 1
        if for_push:
            # Algorithm 10: back moves to the first chunk that is not full after this push
            end_cp = (start + n) // self.slots
            self.back_chunk = out[-1] if end_cp == last else self._ensure_next(out[-1], last)
        return out

    def _ensure_next(self, chunk, cp):
        nxt = self._header(chunk, H_NEXT)
        if nxt == NO_CHUNK:
            nxt = self._new_queue_chunk(cp + 1)
            self.alloc.memory[self.alloc.chunk_base(chunk) + H_NEXT] = nxt
            self.live_chunks += 1
        return nxt

    def _retire(self, done) -> None:
        done = set(done)
        while self.front_chunk in done:          # front moves along; the emptied chunks are reused
            c = self.front_chunk
            nxt = self._header(c, H_NEXT)
            if nxt == NO_CHUNK:                   # keep one chunk: start a fresh one after it
                nxt = self._ensure_next(c, self._header(c, H_VSTART) // self.slots)
            if self.back_chunk == c:
                self.back_chunk = nxt
            self.front_chunk = nxt
            self.alloc.release_chunks([c])
            self.live_chunks -= 1

    def storage_bytes(self) -> int:
        return 12 + self.alloc.chunk_bytes * self.live_chunks


# =============================================================================
# the allocator
# =============================================================================
class Ouroboros:
    """Chunk / page allocator with one page queue per size class (page-based Ouroboros).

    ``allocate(classes)`` returns one page handle per request (int64 array),
    ``free(handles, classes)`` gives pages back.  ``page_words(c)`` is the size
    of class ``c`` in int32 words; ``address(handles)`` the first word of a page.
    """

    def __init__(self, xp=np, chunk_bytes: int = 8192, min_page_bytes: int = 16, queue: str = "array",
                 initial_bytes: int = 0, grow: float = 1.5):
        if queue not in QUEUE_VARIANTS:
            raise ValueError(f"queue must be one of {QUEUE_VARIANTS}, not {queue!r}")
        if chunk_bytes & (chunk_bytes - 1) or min_page_bytes & (min_page_bytes - 1):
            raise ValueError("chunk and page sizes are powers of two")
        if not 4 <= min_page_bytes <= chunk_bytes or chunk_bytes < 4 * (HEADER_WORDS + 4):
            raise ValueError("need 4 <= min_page_bytes <= chunk_bytes and room for a QueueChunk")
        self.xp = xp
        self.queue_kind = queue
        self.chunk_bytes = int(chunk_bytes)
        self.chunk_words = self.chunk_bytes // 4
        self.min_page_words = int(min_page_bytes) // 4
        self.grow = float(grow)
        words = max(int(initial_bytes) // 4, 2 * self.chunk_words)
        words = -(-words // self.chunk_words) * self.chunk_words
        self.memory = xp.zeros(words, dtype=np.int32)
        self.linear_words = 0
        self.chunk_top = 0
        # per chunk metadata (the thesis keeps it in the chunk's 128 B header; here beside it)
        self.chunk_kind = xp.zeros(0, dtype=np.int8)
        self.chunk_class = xp.zeros(0, dtype=np.int16)
        self.chunk_reuse = ArrayQueue(xp, 16)
        self.queues: list = []                  # per size class, created on first use
        self.pages_created: list[int] = []
        self.stats = {"grows": 0, "chunks_bumped": 0, "chunks_reused": 0, "pages_allocated": 0,
                      "pages_freed": 0}

    # -- geometry --------------------------------------------------------------------------
    @property
    def words(self) -> int:
        return int(self.memory.shape[0])

    def page_words(self, c: int) -> int:
        return self.min_page_words << int(c)

    def page_words_of(self, classes):
        """Page size in words of every class of an array (a shift on ``xp``)."""
        return self.xp.left_shift(np.int64(self.min_page_words), self.xp.asarray(classes, dtype=np.int64))

    def pages_per_chunk(self, c: int) -> int:
        return max(1, self.chunk_words // self.page_words(c))

    def chunks_per_page(self, c: int) -> int:
        return max(1, self.page_words(c) // self.chunk_words)

    def class_for_words(self, words):
        """Smallest size class whose pages hold ``words`` int32 words (array in, int64 array out)."""
        xp = self.xp
        w = xp.maximum(xp.asarray(words, dtype=np.int64), 1)
        units = (w + self.min_page_words - 1) // self.min_page_words
        c = xp.ceil(xp.log2(units.astype(np.float64))).astype(np.int64)
        c = xp.maximum(c, 0)
        # exact correction of the float estimate
        c = c + (self.page_words_of(c) < w).astype(np.int64)
        c = c - ((c > 0) & (self.page_words_of(xp.maximum(c - 1, 0)) >= w)).astype(np.int64)
        return c

    def chunk_base(self, chunk):
        """First word of chunk ``chunk`` (int or array)."""
        return self.words - (chunk + 1) * self.chunk_words

    def address(self, handles):
        """First word of each page."""
        return self.words - handles

    # -- the region ------------------------------------------------------------------------
    def _ensure_words(self, linear_words: int, chunk_top: int) -> None:
        need = linear_words + chunk_top * self.chunk_words
        if need <= self.words:
            return
        new = max(need, int(math.ceil(self.words * self.grow)))
        new = -(-new // self.chunk_words) * self.chunk_words
        xp, old, top = self.xp, self.memory, self.chunk_top * self.chunk_words
        mem = xp.zeros(new, dtype=np.int32)
        mem[:self.linear_words] = old[:self.linear_words]            # the two copies of a re-init
        if top:
            mem[new - top:] = old[self.words - top:]
        self.memory = mem
        self.stats["grows"] += 1

    def reserve_total(self, words: int) -> None:
        """Make the region at least ``words`` long now (a measured first reservation)."""
        if words > self.words:
            grow, self.grow = self.grow, 1.0
            self._ensure_words(int(words) - self.chunk_top * self.chunk_words, self.chunk_top)
            self.grow = grow
            self.stats["grows"] -= 1                 # a reservation, not a growth

    def reserve_linear(self, words: int) -> None:
        """Make the bottom linear region at least ``words`` long (growing the region if needed)."""
        if words > self.linear_words:
            self._ensure_words(int(words), self.chunk_top)
            self.linear_words = int(words)

    def take_chunks(self, n: int, kind: int) -> list:
        """``n`` single chunks: from the chunk reuse queue first, then the bump counter."""
        xp = self.xp
        reused = min(n, len(self.chunk_reuse))
        ids = backend.to_numpy(self.chunk_reuse.pop(reused)).astype(np.int64).tolist()
        self.stats["chunks_reused"] += reused
        fresh = n - reused
        if fresh:
            ids += list(range(self._bump(fresh), self.chunk_top))
        idx = xp.asarray(np.asarray(ids, dtype=np.int64))
        self.chunk_kind[idx] = kind
        return ids

    def _bump(self, n: int) -> int:
        """``n`` new contiguous chunks from the top; returns the first index."""
        xp = self.xp
        first = self.chunk_top
        self._ensure_words(self.linear_words, first + n)
        self.chunk_top += n
        if self.chunk_top > self.chunk_kind.shape[0]:
            cap = max(self.chunk_top, 2 * int(self.chunk_kind.shape[0]), 16)
            kind = xp.zeros(cap, dtype=np.int8)
            cls = xp.full(cap, -1, dtype=np.int16)
            kind[:self.chunk_kind.shape[0]] = self.chunk_kind
            cls[:self.chunk_class.shape[0]] = self.chunk_class
            self.chunk_kind, self.chunk_class = kind, cls
        self.stats["chunks_bumped"] += n
        return first

    def release_chunks(self, ids) -> None:
        """Whole chunks back to the chunk reuse queue (emptied QueueChunks)."""
        idx = self.xp.asarray(np.asarray(ids, dtype=np.int64))
        self.chunk_kind[idx] = KIND_FREE
        self.chunk_reuse.push(idx)

    def make_queue(self):
        """A new index queue of this allocator's variant (its storage on QueueChunks for va / vl)."""
        if self.queue_kind == "array":
            return ArrayQueue(self.xp)
        if self.queue_kind == "va":
            return VirtualArrayQueue(self)
        return VirtualLinkedQueue(self)

    def _queue(self, c: int):
        while len(self.queues) <= c:
            self.queues.append(self.make_queue())
            self.pages_created.append(0)
        return self.queues[c]

    # -- allocation ------------------------------------------------------------------------
    def _alloc_chunks_for(self, c: int, n_chunks: int) -> None:
        """Algorithm 7 ``allocChunk``: new chunks of class ``c``, all their pages enqueued."""
        xp = self.xp
        k, ppc, pw = self.chunks_per_page(c), self.pages_per_chunk(c), self.page_words(c)
        if k == 1:
            firsts = xp.asarray(np.asarray(self.take_chunks(n_chunks, KIND_DATA), dtype=np.int64))
        else:                                   # multi-chunk pages: contiguous runs from the bump counter
            first = self._bump(n_chunks * k)
            firsts = first + k * xp.arange(n_chunks, dtype=np.int64)
            runs = first + xp.arange(n_chunks * k, dtype=np.int64)
            self.chunk_kind[runs] = KIND_RUN
            self.chunk_kind[firsts] = KIND_DATA
            self.chunk_class[runs] = c
        self.chunk_class[firsts] = c
        j = xp.arange(ppc, dtype=np.int64)
        handles = ((firsts[:, None] + k) * self.chunk_words - j[None, :] * pw).reshape(-1)
        self._queue(c).push(handles.astype(np.int32))
        self.pages_created[c] += int(handles.shape[0])

    def allocate(self, classes):
        """One page of class ``classes[i]`` per request; handles (int64) in request order."""
        xp = self.xp
        classes = xp.asarray(classes, dtype=np.int64)
        n = int(classes.shape[0])
        out = xp.full(n, -1, dtype=np.int64)
        if n == 0:
            return out
        order = xp.argsort(classes, kind="stable")
        sc = classes[order]
        present, counts = _runs(xp, sc)
        start = 0
        for c, cnt in zip(present.tolist(), counts.tolist()):        # a loop over size classes
            if c < 0:
                raise ValueError("negative size class")
            q = self._queue(c)
            short = cnt - len(q)
            if short > 0:
                self._alloc_chunks_for(c, -(-short // self.pages_per_chunk(c)))
            out[order[start:start + cnt]] = q.pop(cnt).astype(np.int64)
            start += cnt
        self.stats["pages_allocated"] += n
        return out

    def free(self, handles, classes) -> None:
        """Pages back to their class queues (enqueue at the back: FIFO reuse)."""
        xp = self.xp
        handles = xp.asarray(handles, dtype=np.int64)
        classes = xp.asarray(classes, dtype=np.int64)
        n = int(handles.shape[0])
        if n == 0:
            return
        order = xp.argsort(classes, kind="stable")
        sc = classes[order]
        present, counts = _runs(xp, sc)
        start = 0
        for c, cnt in zip(present.tolist(), counts.tolist()):
            self._queue(c).push(handles[order[start:start + cnt]])
            start += cnt
        self.stats["pages_freed"] += n

    # -- accounting ------------------------------------------------------------------------
    def free_pages(self, c: int) -> int:
        return len(self.queues[c]) if c < len(self.queues) else 0

    def live_pages(self, c: int) -> int:
        return (self.pages_created[c] - len(self.queues[c])) if c < len(self.queues) else 0

    @staticmethod
    def external_bytes(queue) -> int:
        """Bytes a queue keeps outside the region: its ring (array), pointer ring (VAQ), 3 pointers (VLQ).

        QueueChunks of the virtualized variants are chunks of ``memory``, counted with the region."""
        if isinstance(queue, ArrayQueue):
            return queue.storage_bytes()
        if isinstance(queue, VirtualArrayQueue):
            return 4 * int(queue.ptrs.shape[0])
        return 12

    def queue_storage_bytes(self) -> int:
        """Queue storage outside the region: the chunk reuse queue and every class queue."""
        return self.chunk_reuse.storage_bytes() + sum(self.external_bytes(q) for q in self.queues)

    def report(self) -> dict:
        live_page_bytes = sum(4 * self.page_words(c) * self.live_pages(c) for c in range(len(self.queues)))
        queue_chunks = int((backend.to_numpy(self.chunk_kind[:self.chunk_top]) == KIND_QUEUE).sum())
        return {
            "region_bytes": 4 * self.words,
            "linear_bytes": 4 * self.linear_words,
            "chunks_in_use": int(self.chunk_top - len(self.chunk_reuse)),
            "chunks_bumped": int(self.chunk_top),
            "chunks_reusable": len(self.chunk_reuse),
            "queue_chunks": queue_chunks,
            "live_page_bytes": int(live_page_bytes),
            "free_pages_per_class": [self.free_pages(c) for c in range(len(self.queues))],
            "live_pages_per_class": [self.live_pages(c) for c in range(len(self.queues))],
            "queue_storage_bytes": int(self.queue_storage_bytes()),
            "grows": self.stats["grows"],
        }


def _runs(xp, ordered):
    """(distinct values, run lengths) of a sorted array, on the host (a sort-free, hash-free unique)."""
    if ordered.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = xp.ones(ordered.shape[0], dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    first = xp.nonzero(starts)[0]
    ends = xp.concatenate([first[1:], xp.asarray([ordered.shape[0]], dtype=first.dtype)])
    return backend.to_numpy(ordered[first]), backend.to_numpy(ends - first)
