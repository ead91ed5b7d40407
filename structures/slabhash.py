"""slabhash: hashGraph (Awad et al., "Dynamic Graphs on the GPU") - one SlabHash hash table per vertex.

Sources: ``papers/dynamic-graphs-slides.txt`` ("GPU Hash Tables", "Hash Table
Buckets", "Implementation Details", both "Insert Edge" approaches, "Additional
Details", "Memory Usage") and the hashGraph survey in
``papers/gpu-dynamic-graph-thesis.txt`` (section 2.3).

Layout (struct-of-arrays on ``self.xp``):

* **Slabs** (:mod:`structures.slab_alloc`): every bucket is a linked list of
  128-byte slabs of 32 int32 words, one word per warp lane.  Weighted (the
  default): words ``0..29`` hold 15 (key, weight) pairs - key at ``2i``, the
  float32 weight's bits at ``2i+1``; unweighted (``weighted=False``): words
  ``0..29`` hold 30 keys.  Word 30 is unused (SlabHash's control word), word 31
  is the next slab's id (-1 ends the chain).  A key is the edge's target id;
  ``EMPTY`` (-1) is a free slot, ``TOMBSTONE`` (-2) a deleted edge.  Slabs come
  from one pre-allocated pool with a free-id queue (the SlabAlloc role) and go
  back to it when a table is flushed, resized or dropped.
* **Vertex table** (hashGraph's vertex array, indexed by internal id, doubled
  when an id does not fit): ``alive``, ``edge_count`` (live out-degree),
  ``tombstones``, ``in_degree``, and the hash table of the vertex:
  ``bucket_start`` / ``num_buckets`` into the bucket directory.
* **Bucket directory**: per bucket its ``bucket_head`` and ``bucket_tail`` slab
  and ``bucket_fill``, the slots used in its chain (live + tombstones).  A
  vertex's buckets are one contiguous directory range, handed out by a bump
  pointer; the directory is compacted (a prefix sum over live ranges) when
  freed ranges make up more than half of it.

Mechanisms:

* **Sizing** (thesis 2.3): a vertex's table is created by its first edge batch
  with ``ceil(degree / (load_factor * slots_per_slab))`` buckets (load factor
  0.7 by default).  When an insert would make a chain longer than
  ``max_chain`` slabs, the vertex is **re-sized**: its live edges and the batch's
  new ones are rehashed into a fresh table of at least twice the buckets.
* **Hashing**: bucket ``(a * key + b) mod p mod num_buckets`` (universal hashing as
  in SlabHash, ``p = 2**32 - 5``).  Queries hash to one bucket and scan its
  chain: O(1) expected.
* **Slots fill densely**: a new key takes the first empty slot of its chain,
  never a tombstone (hashGraph: "edge insertions ignore these locations"), so
  the used slots of a chain are always a prefix and a scan stops at the first
  empty slot.  Before the keys are written, every touched chain is extended by
  the slabs it will need (``ceil((fill + new) / slots)`` slabs, all popped from
  the pool at once by a prefix sum), so the insert kernels never allocate.
* **Two insert strategies** (the slides), ``insert_strategy="thread"|"warp"``,
  on the GPU (:mod:`structures.slabhash_kernels`): one thread per edge walking
  its chain and claiming the first empty slot with ``atomicCAS`` (checking for
  the key on the way), or warp-cooperative work sharing (``__ballot_sync`` for
  the lanes with work, ``__ffs`` for the next one, ``__shfl_sync`` to broadcast
  its edge, the 32 lanes reading the 32 words of a slab at once).  The array
  program (the reference, and the CPU path) writes the same slots in a
  deterministic order: the new keys of a bucket, sorted, take the slots after
  its fill.  Both leave the same edges, weights, degrees and slab counts.
* **Deletes** replace the key by a tombstone.  A **flush** rehashes a vertex's
  live edges into a table sized for its live degree, which reclaims the
  tombstones and returns the emptied slabs to the pool (a vertex left without
  edges keeps no slab).  It runs automatically on the vertices of a delete
  batch whose tombstones are at least ``flush_fraction`` of their used slots, or
  on demand with :meth:`flush`.
* **Vertices**: inserting one costs nothing until its first edge; deleting one
  drops its table (slabs back to the pool) and tombstones its in-edges, found
  by one data-parallel scan of the pool's keys (``slab_owner`` names the source)
  when its in-degree is non-zero.  The id can be reused at once.
* **Phase concurrency** (slides, "Phase-Concurrent Operations"):
  ``concurrent_phases`` - see :meth:`apply_edge_phases`.

Every mechanism here is an array program over ``xp``; loops run over chain
depth (bounded by ``max_chain``) or fixed-size chunks, never over vertices or edges.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from . import backend
from . import slabhash_kernels as sk
from .array_ops import (
    LOW32,
    dedupe_keys,
    doublings,
    edge_keys,
    extended,
    grown_capacity,
    member,
    offsets_of,
    repeat,
    scatter_add,
    segmented_arange,
)
from .base import DynamicGraph
from .csr_types import CSR, VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch
from .options import MAX_ENTRIES, MAX_VERTEX_CAPACITY, Option
from .registry import register
from .slab_alloc import SLAB_BYTES, WORDS_PER_SLAB, SlabAllocator
from .vertex_table import AliveVertexTable

EMPTY = -1                 # a free slot, a missing next slab, a vertex without table
TOMBSTONE = -2             # a deleted edge (slot stays used until the vertex is flushed)
NEXT_WORD = 31             # word 31 of a slab: the next slab of the chain
KEY_WORDS = 30             # words 0..29 hold keys (or key/weight pairs)
HASH_A, HASH_B, HASH_P = 2654435761, 97, 4294967291      # (a * k + b) mod p, p prime < 2**32
VERTEX_ENTRY_BYTES = 29    # alive 1, edge_count 8, tombstones 4, in_degree 4, bucket_start 8, num_buckets 4
BUCKET_ENTRY_BYTES = 12    # bucket_head 4, bucket_tail 4, bucket_fill 4
LOOKUP_CHUNK = 1 << 17     # keys gathered per step of the array lookup (bounds its temporaries)
INSERT_STRATEGIES = ("thread", "warp")


def bucket_hash(xp, keys, num_buckets):
    """Bucket of each key in a table of ``num_buckets`` (> 0): ``((a*k + b) mod p) mod num_buckets``."""
    k = xp.asarray(keys).astype(np.uint64)
    h = (k * np.uint64(HASH_A) + np.uint64(HASH_B)) % np.uint64(HASH_P)
    return (h % xp.asarray(num_buckets).astype(np.uint64)).astype(np.int64)


def _runs(xp, sorted_values):
    """Distinct values of a sorted array and their run lengths."""
    n = sorted_values.shape[0]
    if n == 0:
        return sorted_values, xp.zeros(0, dtype=np.int64)
    start = xp.ones(n, dtype=bool)
    start[1:] = sorted_values[1:] != sorted_values[:-1]
    idx = xp.nonzero(start)[0]
    ends = xp.concatenate([idx[1:], xp.asarray([n], dtype=idx.dtype)])
    return sorted_values[idx], (ends - idx).astype(np.int64)


@register
class SlabHash(AliveVertexTable, DynamicGraph):
    """hashGraph: one SlabHash table per vertex, buckets of 128-byte slabs from a slab pool.

    Options: :attr:`options_spec`.
    """

    name = "slabhash"

    #: Deletions and insertions of *disjoint* edge sets may run at the same time (hashGraph's
    #: phase-concurrent updates; the batcher guarantees disjointness).  A delete only turns a
    #: found key into a tombstone, an insert only claims empty slots (or rewrites the weight of
    #: a key it found), and both keep every used slot used, so neither can hide a key from the
    #: other.  :meth:`apply_edge_phases` runs the two kernels on two given CUDA streams.
    concurrent_phases = True

    options_spec: ClassVar[dict[str, Option]] = {
        "weighted": Option(bool, True, "15 key/weight pairs per slab (False: 30 keys, weights read 1.0)"),
        "load_factor": Option(float, 0.7, "a table's keys per slot when it is sized", low=0.0, low_open=True,
                              high=1.0),
        "max_chain": Option(int, 2, "slabs per chain before a vertex's table is re-sized", low=1, high=MAX_ENTRIES),
        "flush_fraction": Option(float, 0.5, "flush a table whose tombstones are at least this fraction of its "
                                 "used slots", low=0.0, high=1.0),
        "auto_flush": Option(bool, True, "flush after each delete batch"),
        "insert_strategy": Option(str, "thread", "the GPU inserts: one thread or one warp per edge",
                                  choices=INSERT_STRATEGIES),
        "initial_slabs": Option(int, 1024, "slabs of the first pool", low=1, high=MAX_ENTRIES),
        "initial_vertex_capacity": Option(int, 0, "vertex entries reserved at the start", low=0,
                                          high=MAX_VERTEX_CAPACITY),
        "fused": Option(bool, True, "the fused CUDA kernels on CuPy (False: the array program)", internal=True),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        opt = self.options
        self.weighted = opt["weighted"]
        self.slots_per_slab = 15 if self.weighted else 30
        self.key_stride = 2 if self.weighted else 1
        self.key_words = xp.arange(0, KEY_WORDS, self.key_stride, dtype=np.int64)
        self.load_factor = opt["load_factor"]
        self.max_chain = opt["max_chain"]
        self.flush_fraction = opt["flush_fraction"]
        self.auto_flush = opt["auto_flush"]
        self.insert_strategy = opt["insert_strategy"]
        self.fused = opt["fused"] and backend.is_gpu(xp)
        # -- slab pool (SlabAlloc) and the owner of every slab (for in-edge scans) ----------
        self.alloc = SlabAllocator(xp, initial_slabs=opt["initial_slabs"])
        self.slab_owner = xp.full(self.alloc.capacity, EMPTY, dtype=np.int32)
        # -- vertex table ------------------------------------------------------------------
        self.capacity = 0
        self.alive = xp.zeros(0, dtype=bool)
        self.edge_count = xp.zeros(0, dtype=np.int64)
        self.tombstones = xp.zeros(0, dtype=np.int32)
        self.in_degree = xp.zeros(0, dtype=np.int32)
        self.bucket_start = xp.zeros(0, dtype=np.int64)
        self.num_buckets = xp.zeros(0, dtype=np.int32)
        # -- bucket directory ----------------------------------------------------------------
        self.dir_capacity = 0
        self.bucket_head = xp.zeros(0, dtype=np.int32)
        self.bucket_tail = xp.zeros(0, dtype=np.int32)
        self.bucket_fill = xp.zeros(0, dtype=np.int32)
        self.dir_top = 0            # bump pointer
        self.dir_live = 0           # buckets of live tables
        # -- counters ------------------------------------------------------------------------
        self._num_vertices = 0
        self._num_edges = 0
        self._num_tombstones = 0
        self.stats = {"tables_created": 0, "resizes": 0, "flushes": 0, "slabs_linked": 0,
                      "directory_compactions": 0, "vertex_doublings": 0}
        init_cap = opt["initial_vertex_capacity"]
        if init_cap > 0:
            self._ensure_vertex_capacity(init_cap - 1)
            self.stats["vertex_doublings"] = 0

    # =========================================================================
    # vertex table
    # =========================================================================
    def _ensure_vertex_capacity(self, max_id: int) -> None:
        """Double the vertex table until ``max_id`` fits."""
        if max_id < self.capacity:
            return
        xp = self.xp
        new_cap = grown_capacity(self.capacity, max_id + 1)
        self.stats["vertex_doublings"] += doublings(self.capacity, new_cap)
        self.alive = extended(xp, self.alive, new_cap, False)
        self.edge_count = extended(xp, self.edge_count, new_cap, 0)
        self.tombstones = extended(xp, self.tombstones, new_cap, 0)
        self.in_degree = extended(xp, self.in_degree, new_cap, 0)
        self.bucket_start = extended(xp, self.bucket_start, new_cap, 0)
        self.num_buckets = extended(xp, self.num_buckets, new_cap, 0)
        self.capacity = new_cap

    def delete_vertices(self, ids):
        """Drop the tables of ``ids`` (slabs back to the pool) and tombstone their in-edges."""
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        ids = ids[self._live(ids)]
        srcs, dsts = [], []
        if ids.shape[0] == 0:
            return xp.zeros(0, dtype=VERTEX_DTYPE), xp.zeros(0, dtype=VERTEX_DTYPE)
        ids = xp.sort(ids)
        ids = ids[xp.concatenate([xp.ones(1, dtype=bool), ids[1:] != ids[:-1]])]
        # out-edges: the whole table at once
        row, out_dst, _ = self._extract(ids)
        srcs.append(ids[row])
        dsts.append(out_dst)
        scatter_add(xp, self.in_degree, out_dst, xp.full(out_dst.shape[0], -1, dtype=np.int32))
        self._num_edges -= int(out_dst.shape[0])
        self.edge_count[ids] = 0
        self._drop_tables(ids)
        self.alive[ids] = False
        self._num_vertices -= int(ids.shape[0])
        # in-edges: one scan of the pool's key words against the sorted dying ids
        if int(self.in_degree[ids].sum()) > 0:
            flat = self.alloc.flat
            slabs = xp.nonzero(self.alloc.allocated)[0]
            word = (slabs[:, None] * WORDS_PER_SLAB + self.key_words[None, :]).reshape(-1)
            keys = flat[word].astype(np.int64)
            hit = xp.nonzero((keys >= 0) & member(xp, ids, keys))[0]
            hit_word = word[hit]
            owner = self.slab_owner[hit_word // WORDS_PER_SLAB].astype(np.int64)
            gone = keys[hit]
            flat[hit_word] = TOMBSTONE
            self._count_removed(owner, gone)
            srcs.append(owner)
            dsts.append(gone)
            self._flush_where_due(owner)
        self.in_degree[ids] = 0
        return xp.concatenate(srcs).astype(VERTEX_DTYPE), xp.concatenate(dsts).astype(VERTEX_DTYPE)

    # =========================================================================
    # slabs, the bucket directory, tables
    # =========================================================================
    def _allocate(self, n: int, owners):
        """``n`` blank slabs from the pool, owned by ``owners`` (vertex per slab)."""
        ids = self.alloc.allocate(n)
        if self.slab_owner.shape[0] < self.alloc.capacity:         # the pool grew
            grown = self.xp.full(self.alloc.capacity, EMPTY, dtype=np.int32)
            grown[:self.slab_owner.shape[0]] = self.slab_owner
            self.slab_owner = grown
        if n:
            self.slab_owner[ids] = owners.astype(np.int32)
        return ids

    def _free_slabs(self, ids) -> None:
        self.slab_owner[ids] = EMPTY
        self.alloc.free(ids)

    def _table_sizes(self, counts):
        """Buckets for ``counts`` edges at the load factor: ceil(count / (lf * slots)), at least 1."""
        xp = self.xp
        per_bucket = self.load_factor * self.slots_per_slab
        return xp.maximum(xp.ceil(counts.astype(np.float64) / per_bucket).astype(np.int64), 1)

    def _dir_reserve(self, n: int) -> None:
        """Room for ``n`` more buckets at the bump pointer: compact when half the directory is
        garbage (ranges of dropped tables), else grow by doubling."""
        if self.dir_top + n <= self.dir_capacity:
            return
        if self.dir_top - self.dir_live > self.dir_live:
            self._compact_directory()
        if self.dir_top + n > self.dir_capacity:
            new_cap = max(2 * self.dir_capacity, self.dir_top + n, 64)
            xp = self.xp

            def grown(arr):
                out = xp.full(new_cap, EMPTY if arr is not self.bucket_fill else 0, dtype=np.int32)
                out[:self.dir_capacity] = arr
                return out

            self.bucket_head, self.bucket_tail, self.bucket_fill = (
                grown(self.bucket_head), grown(self.bucket_tail), grown(self.bucket_fill))
            self.dir_capacity = new_cap

    def _compact_directory(self) -> None:
        """Move the live tables' bucket ranges to the front (prefix sum of their sizes)."""
        xp = self.xp
        verts = xp.nonzero(self.num_buckets > 0)[0]
        nb = self.num_buckets[verts].astype(np.int64)
        _, old_idx = segmented_arange(xp, self.bucket_start[verts], nb)
        total = int(old_idx.shape[0])
        head, tail, fill = (xp.full(self.dir_capacity, EMPTY, dtype=np.int32),
                            xp.full(self.dir_capacity, EMPTY, dtype=np.int32),
                            xp.zeros(self.dir_capacity, dtype=np.int32))
        head[:total] = self.bucket_head[old_idx]
        tail[:total] = self.bucket_tail[old_idx]
        fill[:total] = self.bucket_fill[old_idx]
        self.bucket_head, self.bucket_tail, self.bucket_fill = head, tail, fill
        self.bucket_start[verts] = xp.cumsum(nb) - nb
        self.dir_top = total
        self.stats["directory_compactions"] += 1

    def _create_tables(self, verts, sizes) -> None:
        """Tables of ``sizes`` buckets for ``verts`` (distinct, without table), one blank head slab each."""
        xp = self.xp
        total = int(sizes.sum()) if sizes.shape[0] else 0
        if total == 0:
            return
        self._dir_reserve(total)
        self.bucket_start[verts] = self.dir_top + xp.cumsum(sizes) - sizes
        self.num_buckets[verts] = sizes.astype(np.int32)
        heads = self._allocate(total, repeat(xp, verts, sizes))
        idx = self.dir_top + xp.arange(total, dtype=np.int64)
        self.bucket_head[idx] = heads
        self.bucket_tail[idx] = heads
        self.bucket_fill[idx] = 0
        self.dir_top += total
        self.dir_live += total
        self.stats["tables_created"] += int(verts.shape[0])

    def _buckets_of(self, verts):
        """Directory indices of every bucket of ``verts`` and the index (into ``verts``) of its vertex."""
        xp = self.xp
        nb = self.num_buckets[verts].astype(np.int64)
        return segmented_arange(xp, self.bucket_start[verts], nb)

    def _drop_tables(self, verts) -> None:
        """Free every slab of the tables of ``verts``; their directory ranges become garbage."""
        _, buckets = self._buckets_of(verts)
        if buckets.shape[0]:
            _, table, _ = self._chain_table(buckets)
            self._free_slabs(table)
            self.bucket_head[buckets] = EMPTY
            self.bucket_tail[buckets] = EMPTY
            self.bucket_fill[buckets] = 0
        self.dir_live -= int(buckets.shape[0])
        self._num_tombstones -= int(self.tombstones[verts].sum())
        self.tombstones[verts] = 0
        self.num_buckets[verts] = 0

    def _chain_slabs(self, fill):
        """Slabs of a chain holding ``fill`` used slots (dense fill; the head slab always exists)."""
        spp = self.slots_per_slab
        return self.xp.maximum((fill.astype(np.int64) + spp - 1) // spp, 1)

    def _chain_table(self, buckets, nslabs=None):
        """Every slab of the chains of ``buckets`` in chain order, found by following the next words.

        Returns ``(starts, table, nslabs)``: ``table[starts[i] + j]`` is slab ``j`` of bucket
        ``buckets[i]``; one step per chain depth for all buckets at once.
        """
        xp = self.xp
        if nslabs is None:
            nslabs = self._chain_slabs(self.bucket_fill[buckets])
        ends = xp.cumsum(nslabs)
        starts = ends - nslabs
        total = int(ends[-1]) if nslabs.shape[0] else 0
        table = xp.empty(total, dtype=np.int32)
        flat = self.alloc.flat
        active = xp.arange(buckets.shape[0], dtype=np.int64)
        cur = self.bucket_head[buckets].astype(np.int64)
        depth = 0
        while active.shape[0]:
            table[starts[active] + depth] = cur
            depth += 1
            more = nslabs[active] > depth
            active = active[more]
            cur = flat[cur[more] * WORDS_PER_SLAB + NEXT_WORD].astype(np.int64)
        return starts, table, nslabs

    def _extract(self, verts):
        """Live entries of the tables of ``verts``: (index into ``verts``, target, weight), grouped by vertex."""
        xp = self.xp
        row, buckets = self._buckets_of(verts)
        if buckets.shape[0] == 0:
            z = xp.zeros(0, dtype=np.int64)
            return z, z, xp.zeros(0, dtype=WEIGHT_DTYPE)
        _, table, nslabs = self._chain_table(buckets)
        slab_row = repeat(xp, row, nslabs)
        word = (table.astype(np.int64)[:, None] * WORDS_PER_SLAB + self.key_words[None, :]).reshape(-1)
        keys = self.alloc.flat[word]
        live = keys >= 0
        rows = xp.broadcast_to(slab_row[:, None], (slab_row.shape[0], self.slots_per_slab)).reshape(-1)
        if self.weighted:
            w = self.alloc.flat_float[word[live] + 1]
        else:
            w = xp.ones(int(live.sum()), dtype=WEIGHT_DTYPE)
        return rows[live], keys[live].astype(np.int64), w

    # =========================================================================
    # lookup, placement, tombstones: the array program and its kernels
    # =========================================================================
    def _bucket(self, verts, keys):
        return self.bucket_start[verts] + bucket_hash(self.xp, keys, self.num_buckets[verts])

    def _lookup(self, verts, keys):
        """Word index of the key ``keys[i]`` in the table of ``verts[i]`` (which has one), -1 if absent.

        The array program reads a whole slab per key per step, as the warp does: the
        slab's key words are compared at once; a slab with an empty slot ends the
        chain (slots fill densely), otherwise the next word leads on.
        """
        xp = self.xp
        n = int(verts.shape[0])
        if self.fused:
            out = xp.empty(n, dtype=np.int64)
            sk.launch(xp, "sh_find", n, *self._kernel_keys(verts, keys), *self._kernel_tables(), out)
            return out
        out = xp.full(n, EMPTY, dtype=np.int64)
        flat = self.alloc.flat
        kw = self.key_words
        for lo in range(0, n, LOOKUP_CHUNK):
            idx = xp.arange(lo, min(lo + LOOKUP_CHUNK, n), dtype=np.int64)
            want = keys[idx]
            cur = self.bucket_head[self._bucket(verts[idx], want)].astype(np.int64)
            while idx.shape[0]:
                base = cur * WORDS_PER_SLAB
                slab_keys = flat[base[:, None] + kw[None, :]]
                hit = slab_keys == want[:, None]
                found = hit.any(axis=1)
                out[idx[found]] = base[found] + kw[xp.argmax(hit[found], axis=1)]
                nxt = flat[base + NEXT_WORD].astype(np.int64)
                more = ~found & ~(slab_keys == EMPTY).any(axis=1) & (nxt >= 0)
                idx, want, cur = idx[more], want[more], nxt[more]
        return out

    def _kernel_keys(self, verts, keys):
        xp = self.xp
        return (xp.ascontiguousarray(verts.astype(np.int32)), xp.ascontiguousarray(keys.astype(np.int32)),
                sk.i64(verts.shape[0]))

    def _kernel_tables(self):
        return (sk.i64(self.capacity), self.bucket_start, self.num_buckets, self.bucket_head,
                self.alloc.flat, sk.i32(self.key_stride), sk.i32(self.slots_per_slab))

    def _prepare_chains(self, verts, keys):
        """Extend the chains that ``keys`` (new, distinct) hash to by the slabs they will need.

        Returns ``(buckets of the keys, distinct buckets, their key counts, index of each key's
        bucket)``.  The new slabs are popped for all chains at once and linked behind each
        chain's tail; ``bucket_fill`` is raised by the counts.
        """
        xp = self.xp
        b = self._bucket(verts, keys)
        order = xp.argsort(b, kind="stable")
        ub, cnt = _runs(xp, b[order])
        fill = self.bucket_fill[ub].astype(np.int64)
        need = self._chain_slabs(fill + cnt) - self._chain_slabs(fill)
        total = int(need.sum())
        if total:
            first_key = xp.cumsum(cnt) - cnt
            owner = verts[order][first_key]
            seg, j = segmented_arange(xp, xp.zeros_like(need), need)
            ids = self._allocate(total, owner[seg])
            k = xp.arange(total, dtype=np.int64)
            prev = xp.where(j == 0, self.bucket_tail[ub[seg]].astype(np.int64), ids[xp.maximum(k - 1, 0)])
            self.alloc.flat[prev * WORDS_PER_SLAB + NEXT_WORD] = ids
            last = xp.cumsum(need) - 1
            has = need > 0
            self.bucket_tail[ub[has]] = ids[last[has]]
            self.stats["slabs_linked"] += total
        self.bucket_fill[ub] = (fill + cnt).astype(np.int32)
        return b, order, ub, cnt, fill

    def _place(self, verts, keys, weights, prepared) -> None:
        """Array program of the insert: the sorted new keys of a bucket take the slots after its
        old fill, slab ``pos // slots``, slot ``pos % slots`` of the (extended) chain."""
        xp = self.xp
        b, order, ub, cnt, fill = prepared
        starts, table, _ = self._chain_table(ub)
        sb = b[order]
        sd = keys[order]
        # within a bucket, keys in ascending order (deterministic)
        order2 = xp.lexsort(xp.stack([sd, sb]))
        sb, sd, sw = sb[order2], sd[order2], weights[order][order2]
        bi = xp.searchsorted(ub, sb)
        rank = xp.arange(sb.shape[0], dtype=np.int64) - (xp.cumsum(cnt) - cnt)[bi]
        pos = fill[bi] + rank
        slab = table[starts[bi] + pos // self.slots_per_slab].astype(np.int64)
        word = slab * WORDS_PER_SLAB + self.key_words[pos % self.slots_per_slab]
        self.alloc.flat[word] = sd.astype(np.int32)
        if self.weighted:
            self.alloc.flat_float[word + 1] = sw

    def _fill_kernel(self, verts, keys, weights) -> object:
        """The GPU insert of new keys into prepared chains, by the chosen strategy; returns the
        per-key status array (1 inserted, 0 found, -1 no room: never expected)."""
        xp = self.xp
        n = int(verts.shape[0])
        status = xp.full(n, -1, dtype=np.int8)
        wbits = xp.ascontiguousarray(weights.astype(np.float32)).view(np.int32)
        name = "sh_insert_thread" if self.insert_strategy == "thread" else "sh_insert_warp"
        sk.launch(xp, name, n, *self._kernel_keys(verts, keys), wbits, *self._kernel_tables(),
                  sk.i32(int(self.weighted)), status)
        return status

    def _add_to_tables(self, verts, keys, weights, defer: bool = False):
        """Insert new distinct keys into existing tables: extend chains, then place (array program)
        or launch the insert kernel.  With ``defer`` the placement is returned as a closure."""
        if verts.shape[0] == 0:
            return (lambda: None) if defer else None
        prepared = self._prepare_chains(verts, keys)

        def place():
            if self.fused:
                return self._fill_kernel(verts, keys, weights)
            self._place(verts, keys, weights, prepared)
            return None

        return place if defer else place()

    def _rebuild(self, verts, extra_src, extra_dst, extra_w, grow: bool) -> None:
        """Rehash the live edges of ``verts`` (distinct, sorted) plus extra new edges into fresh
        tables sized for them (at least twice the old buckets when ``grow``): resize and flush."""
        xp = self.xp
        if verts.shape[0] == 0:
            return
        row, d, w = self._extract(verts)
        s = verts[row]
        old_nb = self.num_buckets[verts].astype(np.int64)
        self._drop_tables(verts)
        s, d, w = (xp.concatenate([s, extra_src]), xp.concatenate([d, extra_dst]),
                   xp.concatenate([w, extra_w.astype(WEIGHT_DTYPE)]))
        counts = xp.zeros(verts.shape[0], dtype=np.int64)
        if s.shape[0]:
            scatter_add(xp, counts, xp.searchsorted(verts, s), xp.ones(s.shape[0], dtype=np.int64))
        sizes = self._table_sizes(counts)
        if grow:
            sizes = xp.where(old_nb > 0, xp.maximum(sizes, 2 * old_nb), sizes)
        keep = counts > 0
        self._create_tables(verts[keep], sizes[keep])
        self._add_to_tables(s, d, w)

    # =========================================================================
    # edge batches
    # =========================================================================
    def _plan_insert(self, batch: CSRBatch):
        """Everything of an insert but the placement of the new keys into extended chains:
        upserts, mask, (re)built tables, chain extension, counters.  Returns (mask, place)."""
        xp = self.xp
        src = batch.sources().astype(np.int64)
        dst = xp.asarray(batch.cols).astype(np.int64)
        n = int(dst.shape[0])
        mask = xp.zeros(n, dtype=bool)
        if n == 0:
            return mask, (lambda: None)
        if int(src.min()) < 0 or int(dst.min()) < 0:
            raise ValueError("vertex ids must be >= 0")
        w = (xp.asarray(batch.weights, dtype=WEIGHT_DTYPE) if batch.weights is not None
             else xp.ones(n, dtype=WEIGHT_DTYPE))
        self._activate(xp.concatenate([src, dst]))
        ukeys, last, first = dedupe_keys(xp, edge_keys(xp, src, dst))
        us, ud, uw = ukeys >> 32, ukeys & LOW32, w[last]
        # existing edges: weight upsert in place (hash lookup)
        has_table = self.num_buckets[us] > 0
        found = xp.full(us.shape[0], EMPTY, dtype=np.int64)
        at = xp.nonzero(has_table)[0]
        if at.shape[0]:
            found[at] = self._lookup(us[at], ud[at])
        exists = found >= 0
        if self.weighted:
            self.alloc.flat_float[found[exists] + 1] = uw[exists]
        new = ~exists
        mask[first[new]] = True
        ns, nd, nw = us[new], ud[new], uw[new]
        if ns.shape[0] == 0:
            return mask, (lambda: None)
        # vertices needing a fresh table: none yet, or a chain would pass max_chain slabs
        tab = self.num_buckets[ns] > 0
        ts, td = ns[tab], nd[tab]
        b = self._bucket(ts, td)
        order = xp.argsort(b, kind="stable")
        ub, cnt = _runs(xp, b[order])
        over = self._chain_slabs(self.bucket_fill[ub].astype(np.int64) + cnt) > self.max_chain
        over_key = xp.zeros(ts.shape[0], dtype=bool)
        over_key[order] = repeat(xp, over, cnt)
        rebuild = xp.sort(xp.concatenate([ns[~tab], ts[over_key]]))
        if rebuild.shape[0]:
            rebuild = rebuild[xp.concatenate([xp.ones(1, dtype=bool), rebuild[1:] != rebuild[:-1]])]
            self.stats["resizes"] += int(xp.count_nonzero(self.num_buckets[rebuild] > 0))
        in_rebuild = member(xp, rebuild, ns)
        self._rebuild(rebuild, ns[in_rebuild], nd[in_rebuild], nw[in_rebuild], grow=True)
        rest = ~in_rebuild
        place = self._add_to_tables(ns[rest], nd[rest], nw[rest], defer=True)
        # counters (sources are sorted: runs)
        vs, vc = _runs(xp, ns)
        self.edge_count[vs] += vc
        scatter_add(xp, self.in_degree, nd, xp.ones(nd.shape[0], dtype=np.int32))
        self._num_edges += int(ns.shape[0])
        return mask, place

    def insert_edges(self, batch: CSRBatch):
        """Insert (upsert) the batch's edges; True where the edge was new."""
        mask, place = self._plan_insert(batch)
        self._check_status(place())
        return mask

    def _check_status(self, status) -> None:
        if status is not None and status.shape[0] and int(status.min()) < 1:
            raise RuntimeError("slabhash insert kernel: a new key found no slot or was already there")

    def _plan_delete(self, batch: CSRBatch):
        """The keys of a delete batch whose source has a table: (mask, keys' sources, targets, their
        batch positions)."""
        xp = self.xp
        src = batch.sources().astype(np.int64)
        dst = xp.asarray(batch.cols).astype(np.int64)
        mask = xp.zeros(int(dst.shape[0]), dtype=bool)
        if dst.shape[0] == 0:
            return mask, None
        ukeys, _, first = dedupe_keys(xp, edge_keys(xp, src, dst))
        us, ud = ukeys >> 32, ukeys & LOW32
        ok = self._live(us) & (ud >= 0)
        ok[ok] = self.num_buckets[us[ok]] > 0
        sel = xp.nonzero(ok)[0]
        return mask, (us[sel], ud[sel], first[sel])

    def _tombstone(self, verts, keys):
        """Replace found keys by tombstones; bool array, True where one was there."""
        xp = self.xp
        if self.fused:
            removed = xp.empty(verts.shape[0], dtype=np.int8)
            sk.launch(xp, "sh_delete", verts.shape[0], *self._kernel_keys(verts, keys),
                      *self._kernel_tables(), removed)
            return removed > 0
        found = self._lookup(verts, keys)
        hit = found >= 0
        self.alloc.flat[found[hit]] = TOMBSTONE
        return hit

    def _finish_delete(self, mask, plan, removed):
        us, ud, first = plan
        mask[first] = removed
        rs, rd = us[removed], ud[removed]
        self._count_removed(rs, rd)
        self._flush_where_due(rs)
        return mask

    def delete_edges(self, batch: CSRBatch):
        """Tombstone the batch's edges (then flush where tombstones dominate); True where one was removed."""
        mask, plan = self._plan_delete(batch)
        if plan is None or plan[0].shape[0] == 0:
            return mask
        return self._finish_delete(mask, plan, self._tombstone(plan[0], plan[1]))

    def apply_edge_phases(self, inserts: CSRBatch, deletes: CSRBatch, streams=None):
        """Insert ``inserts`` and delete ``deletes`` (disjoint edge sets) as concurrent phases.

        The insert is planned first (upserts, table (re)builds, chain extension), then
        the delete kernel and the insert kernel run - on ``streams = (delete_stream,
        insert_stream)`` (CuPy streams) when given, otherwise one after the other -
        and the delete's counters and flushes follow once both are done.  The
        result equals ``insert_edges(inserts)`` then ``delete_edges(deletes)``.
        Returns ``(insert mask, delete mask)``.
        """
        xp = self.xp
        ins_mask, place = self._plan_insert(inserts)
        del_mask, plan = self._plan_delete(deletes)
        has_del = plan is not None and plan[0].shape[0] > 0
        if streams is None or not self.fused:
            status = place()
            removed = self._tombstone(plan[0], plan[1]) if has_del else None
        else:
            del_stream, ins_stream = streams
            ready = xp.cuda.get_current_stream().record()
            del_stream.wait_event(ready)
            ins_stream.wait_event(ready)
            with del_stream:
                removed = self._tombstone(plan[0], plan[1]) if has_del else None
            with ins_stream:
                status = place()
            current = xp.cuda.get_current_stream()
            current.wait_event(del_stream.record())
            current.wait_event(ins_stream.record())
        self._check_status(status)
        if has_del:
            self._finish_delete(del_mask, plan, removed)
        return ins_mask, del_mask

    def _count_removed(self, src, dst) -> None:
        """Counters after removing edges (src, dst) by tombstones."""
        xp = self.xp
        if src.shape[0] == 0:
            return
        one = xp.ones(src.shape[0], dtype=np.int32)
        scatter_add(xp, self.edge_count, src, -one.astype(np.int64))
        scatter_add(xp, self.tombstones, src, one)
        scatter_add(xp, self.in_degree, dst, -one)
        self._num_edges -= int(src.shape[0])
        self._num_tombstones += int(src.shape[0])

    # =========================================================================
    # flush
    # =========================================================================
    def _flush_where_due(self, touched) -> None:
        """Flush the ``touched`` vertices whose tombstones are >= flush_fraction of their used slots."""
        if not self.auto_flush or touched.shape[0] == 0:
            return
        xp = self.xp
        v = xp.sort(touched)
        v = v[xp.concatenate([xp.ones(1, dtype=bool), v[1:] != v[:-1]])]
        t = self.tombstones[v].astype(np.float64)
        due = (t > 0) & (t >= self.flush_fraction * (t + self.edge_count[v]))
        self._flush_vertices(v[due])

    def _flush_vertices(self, verts) -> None:
        xp = self.xp
        if verts.shape[0] == 0:
            return
        self.stats["flushes"] += int(verts.shape[0])
        z = xp.zeros(0, dtype=np.int64)
        self._rebuild(verts, z, z, xp.zeros(0, dtype=WEIGHT_DTYPE), grow=False)

    def flush(self, vertices=None) -> None:
        """Reclaim the tombstones of ``vertices`` (default: every vertex that has some): rehash the
        live edges into tables sized for them and return the emptied slabs to the pool."""
        xp = self.xp
        if vertices is None:
            verts = xp.nonzero(self.tombstones > 0)[0]
        else:
            verts = xp.asarray(vertices, dtype=np.int64)
            verts = verts[self._live(verts)]
            verts = xp.sort(verts)
            if verts.shape[0]:
                verts = verts[xp.concatenate([xp.ones(1, dtype=bool), verts[1:] != verts[:-1]])]
        self._flush_vertices(verts.astype(np.int64))

    # =========================================================================
    # queries
    # =========================================================================
    def _query_words(self, src, dst):
        """Word index of each queried edge's key (any order, repeats allowed), -1 where absent."""
        xp = self.xp
        src = xp.asarray(src, dtype=np.int64)
        dst = xp.asarray(dst, dtype=np.int64)
        n = int(src.shape[0])
        if n == 0 or self.capacity == 0:
            return xp.full(n, EMPTY, dtype=np.int64)
        if self.fused:                     # the kernel checks ids and tables itself
            return self._lookup(src, dst)
        out = xp.full(n, EMPTY, dtype=np.int64)
        ok = (src >= 0) & (src < self.capacity) & (dst >= 0) & (dst <= np.iinfo(np.int32).max)
        ok[ok] = self.num_buckets[src[ok]] > 0
        at = xp.nonzero(ok)[0]
        if at.shape[0]:
            out[at] = self._lookup(src[at], dst[at])
        return out

    def contains(self, src, dst):
        return self._query_words(src, dst) >= 0

    def edge_weights(self, src, dst):
        xp = self.xp
        word = self._query_words(src, dst)
        hit = word >= 0
        if not self.weighted:
            return xp.where(hit, np.float32(1.0), np.float32(np.nan)).astype(np.float32)
        w = self.alloc.flat_float[xp.where(hit, word + 1, 0)]
        return xp.where(hit, w, np.float32(np.nan)).astype(np.float32)

    def degree(self, vertices=None):
        return self._per_vertex(self.edge_count, vertices)

    def adjacency(self, vertices=None) -> CSR:
        """CSR of the requested rows (in that order); a row lists its table bucket by bucket."""
        xp = self.xp
        v = (xp.arange(self.capacity, dtype=np.int64) if vertices is None
             else xp.asarray(vertices, dtype=np.int64))
        counts = self.degree(v)
        offsets = offsets_of(xp, counts)
        rows = v[counts > 0]
        _, cols, w = self._extract(rows)
        return CSR(offsets=offsets, cols=cols.astype(VERTEX_DTYPE), weights=w.astype(WEIGHT_DTYPE))

    # =========================================================================
    # sizes and memory
    # =========================================================================
    def memory(self) -> dict:
        """Reserved: vertex table, bucket directory, the whole slab pool with its queue, flags and
        owners.  Used: live vertices, live buckets, slabs in use (with their owner entries)."""
        pool = self.alloc.memory()
        slabs_used = pool["slabs_in_use"]
        reserved = (VERTEX_ENTRY_BYTES * self.capacity + BUCKET_ENTRY_BYTES * self.dir_capacity
                    + self.alloc.nbytes() + 4 * self.alloc.capacity)
        used = (VERTEX_ENTRY_BYTES * self._num_vertices + BUCKET_ENTRY_BYTES * self.dir_live
                + (SLAB_BYTES + 4) * slabs_used)
        slots = slabs_used * self.slots_per_slab
        e = self._num_edges
        return {
            "reserved_bytes": int(reserved),
            "used_bytes": int(used),
            **pool,
            "slab_bytes_in_use": int(SLAB_BYTES * slabs_used),
            "bytes_per_edge": (used / e) if e else 0.0,
            "slab_bytes_per_edge": (SLAB_BYTES * slabs_used / e) if e else 0.0,
            "slot_fill": (e / slots) if slots else 0.0,
            "slots_per_slab": int(self.slots_per_slab),
            "buckets": int(self.dir_live),
            "directory_capacity": int(self.dir_capacity),
            "tombstones": int(self._num_tombstones),
            "load_factor": self.load_factor,
            "vertex_capacity": int(self.capacity),
            "resizes": int(self.stats["resizes"]),
            "flushes": int(self.stats["flushes"]),
        }
