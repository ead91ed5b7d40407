"""Hornet (Busato, Green, Bombieri, Bader, HPEC 2018): power-of-two blocks from per-size block arrays.

Sources: graphvine.txt (related work: "edge blocks ... have sizes in multiples
of 2 ... querying empty blocks from an array of B+ trees (each index is
associated with edge blocks of size 2^index) ... using a vectorized bit-tree,
the empty location ... gets located"), the thesis survey
(gpu-dynamic-graph-thesis.txt section 2.2) and the layout slide of
dynamic-graphs-slides.txt.

Layout:

* **Vertex arrays** (:mod:`structures.contiguous`): degree and a pointer
  (``row_start``) per vertex; the vertex's adjacency is ONE contiguous block of
  capacity ``2^c``, the smallest power of two >= its degree (no block at degree 0).
* **Block arrays**: a block of size class ``c`` lives in a *block array* of
  that class: a region of the edge pool holding ``blocks_per_array(c) =
  max(1, block_array_entries >> c)`` blocks of ``2^c`` entries each
  (structure-of-arrays: ``pool_cols`` / ``pool_weights``).  A class gains a new
  block array (as many as it already has, so the count doubles) only when all
  of its blocks are in use; the pool itself grows by doubling.
* **Free-block tracking** (the role of Hornet's array of B+ trees over block
  arrays plus the bit-tree inside each): per size class one *counting
  bit-tree* in heap layout over all block slots of the class (leaf = 1 when the
  slot is free, inner node = free blocks below it).  The ``r``-th free block is
  found by descending from the root in ``log2(slots)`` steps, so a batch takes
  ``k`` blocks at once with ranks ``0 .. k-1``: distinct ranks are distinct
  leaves, and the taken leaves are zeroed (and their ancestors recounted)
  before the next request, so no block is ever handed out twice.
* **Growth / shrink**: when a batch makes a degree pass the block's capacity,
  the adjacency moves to a block of the new (next) size class - allocated,
  copied in parallel, the old block freed; when deletions bring the degree to
  half the capacity or below it moves down the same way (to no block at 0).

Batch updates follow Hornet's batch algorithm: sort the batch, remove
duplicates within it and against the graph, compute every vertex's new degree,
reallocate where needed, copy in parallel, write.  ``Hornet.from_csr`` is the
bulk initialisation from a CSR (every block allocated at once; the paper's
"locating empty blocks for each vertex's adjacency list based on its degree").

Beyond Hornet, which keeps the vertex set static: vertex insertion and deletion
(the latter as one edge-deletion batch, see :mod:`structures.contiguous`).
Block arrays are never returned to the pool (as in Hornet); their blocks are
reused through the bit-trees.
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from . import contiguous_kernels as ck
from .contiguous import ENTRY_BYTES, VERTEX_ENTRY_BYTES, ContiguousAdjacency
from .options import MAX_ENTRIES, Option
from .registry import register

MAX_CLASS = 40


def ceil_log2(xp, x):
    """ceil(log2(x)) for int64 x >= 1, exact (float estimate corrected both ways)."""
    x = x.astype(np.int64)
    c = xp.ceil(xp.log2(x.astype(np.float64))).astype(np.int64)
    one = np.int64(1)
    c = c + (xp.left_shift(one, c) < x).astype(np.int64)
    c = c - ((c > 0) & (xp.left_shift(one, xp.maximum(c - 1, 0)) >= x)).astype(np.int64)
    return c


def _dedupe_sorted(xp, a):
    """Distinct values of a sorted array (neighbour compare)."""
    if a.shape[0] <= 1:
        return a
    keep = xp.ones(a.shape[0], dtype=bool)
    keep[1:] = a[1:] != a[:-1]
    return a[keep]


class SizeClass:
    """The block arrays of one size class ``2^c`` and the counting bit-tree over their block slots."""

    def __init__(self, xp, c: int, blocks_per_array: int, fused: bool = False):
        self.xp = xp
        self.fused = fused                                 # descend in the hn_select_free kernel
        self.c = c
        self.block_size = 1 << c
        self.blocks_per_array = blocks_per_array
        self.array_starts = xp.zeros(0, dtype=np.int64)     # pool offset of each block array
        self.slots = 0                                     # block slots over all arrays
        self.leaves = 1                                    # tree leaves (power of two >= slots)
        self.tree = xp.zeros(2, dtype=np.int32)            # heap layout; tree[1] = free blocks
        self.free = 0                                      # host mirror of tree[1]

    @property
    def num_arrays(self) -> int:
        return int(self.array_starts.shape[0])

    def add_arrays(self, starts) -> None:
        """New block arrays at pool offsets ``starts``: their slots join the tree as free leaves."""
        xp = self.xp
        self.array_starts = xp.concatenate([self.array_starts, xp.asarray(starts, dtype=np.int64)])
        old_slots = self.slots
        self.slots = self.num_arrays * self.blocks_per_array
        leaves = max(1, 1 << math.ceil(math.log2(self.slots)))
        if leaves != self.leaves:                          # a bigger tree: copy the leaves, recount
            tree = xp.zeros(2 * leaves, dtype=np.int32)
            tree[leaves:leaves + old_slots] = self.tree[self.leaves:self.leaves + old_slots]
            self.tree, self.leaves = tree, leaves
        self.tree[self.leaves + old_slots:self.leaves + self.slots] = 1
        level = self.leaves // 2
        while level >= 1:                                  # one step per tree level
            idx = xp.arange(level, 2 * level)
            self.tree[idx] = self.tree[2 * idx] + self.tree[2 * idx + 1]
            level //= 2
        self.free += self.slots - old_slots

    def take(self, k: int):
        """The first ``k`` free block slots (ranks 0..k-1 found by descending the tree), marked used."""
        xp = self.xp
        assert k <= self.free
        if k == 0:
            return xp.zeros(0, dtype=np.int64)
        if self.fused:
            leaf = xp.empty(k, dtype=np.int64)
            ck.launch(xp, "hn_select_free", k, self.tree, ck.i64(self.leaves), ck.i64(k), leaf)
        else:
            node = xp.ones(k, dtype=np.int64)
            rem = xp.arange(k, dtype=np.int64)
            for _ in range(self.leaves.bit_length() - 1):  # log2(leaves) steps, all requests in lockstep
                left = 2 * node
                c = self.tree[left].astype(np.int64)
                right = rem >= c
                rem = rem - xp.where(right, c, 0)
                node = left + right
            leaf = node - self.leaves
        self._set(leaf, 0)
        self.free -= k
        return leaf

    def give_back(self, slots) -> None:
        """Mark ``slots`` free again."""
        self._set(slots, 1)
        self.free += int(slots.shape[0])

    def _set(self, slots, value: int) -> None:
        """Set leaves, then recount their ancestors level by level."""
        xp = self.xp
        if slots.shape[0] == 0:
            return
        node = xp.sort(slots.astype(np.int64) + self.leaves)
        self.tree[node] = value
        while True:
            node = _dedupe_sorted(xp, node >> 1)
            if int(node[0]) < 1:
                break
            self.tree[node] = self.tree[2 * node] + self.tree[2 * node + 1]
            if int(node[0]) == 1:
                break

    def addresses(self, slots):
        """Pool offsets of block ``slots``."""
        bpa = self.blocks_per_array
        return self.array_starts[slots // bpa] + (slots % bpa) * self.block_size

    def tree_bytes(self) -> int:
        return int(self.tree.nbytes + self.array_starts.nbytes)


@register
class Hornet(ContiguousAdjacency):
    """Hornet: one power-of-two block per vertex from per-size block arrays with counting bit-trees.

    Options: :attr:`options_spec`.
    """

    name = "hornet"

    options_spec: ClassVar[dict[str, Option]] = {
        **ContiguousAdjacency.options_spec,
        "block_array_entries": Option(int, 1 << 16, "entries per block array (a class whose blocks are bigger "
                                      "gets one block per array)", low=1, high=MAX_ENTRIES),
        "min_block_size": Option(int, 1, "the smallest block", low=1, high=MAX_ENTRIES, power_of_two=True),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        self.block_array_entries = self.options["block_array_entries"]
        self.min_class = int(math.log2(self.options["min_block_size"]))
        self.classes: dict[int, SizeClass] = {}
        self.pool_top = 0                          # pool entries handed to block arrays so far
        self.stats.update(block_arrays_added=0, pool_doublings=0, blocks_taken=0, blocks_freed=0)

    # -- allocator hooks -----------------------------------------------------------------------
    def _target_capacity(self, degree, capacity, growing: bool):
        """2^c, the smallest power of two >= degree (and >= min_block_size); 0 for no edges.

        Growth moves up when the degree passes the capacity; shrinking moves down when the
        degree is at most half of it; both land on exactly this size."""
        xp = self.xp
        c = xp.maximum(ceil_log2(xp, xp.maximum(degree, 1)), self.min_class)
        return xp.where(degree > 0, xp.left_shift(np.int64(1), c), 0)

    def _size_class(self, c: int) -> SizeClass:
        sc = self.classes.get(c)
        if sc is None:
            sc = SizeClass(self.xp, c, max(1, self.block_array_entries >> c), self.fused)
            self.classes[c] = sc
        return sc

    def _add_block_arrays(self, sc: SizeClass, count: int) -> None:
        """``count`` new block arrays for class ``sc`` at the pool's top (the pool doubles as needed)."""
        xp = self.xp
        span = sc.blocks_per_array * sc.block_size
        need = self.pool_top + count * span
        size = int(self.pool_cols.shape[0])
        if need > size:
            new_size = max(size, 1)
            while new_size < need:
                new_size *= 2
                self.stats["pool_doublings"] += 1
            self._grow_pool_arrays(new_size)
        sc.add_arrays(self.pool_top + span * xp.arange(count, dtype=np.int64))
        self.pool_top = need
        self.stats["block_arrays_added"] += count

    def _allocate(self, capacities):
        xp = self.xp
        n = int(capacities.shape[0])
        classes = ceil_log2(xp, capacities)
        starts = xp.empty(n, dtype=np.int64)
        handles = xp.empty(n, dtype=np.int64)
        order = xp.argsort(classes, kind="stable")
        sorted_classes = classes[order]
        present = _dedupe_sorted(xp, sorted_classes)
        bounds = xp.searchsorted(sorted_classes, present, side="right")
        lo = 0
        for c, hi in zip(present.tolist(), bounds.tolist()):     # a loop over size classes
            sc = self._size_class(int(c))
            k = hi - lo
            if k > sc.free:
                missing = math.ceil((k - sc.free) / sc.blocks_per_array)
                self._add_block_arrays(sc, max(missing, sc.num_arrays))
            slots = sc.take(k)
            idx = order[lo:hi]
            starts[idx] = sc.addresses(slots)
            handles[idx] = slots
            self.stats["blocks_taken"] += k
            lo = hi
        return starts, handles

    def _release(self, starts, capacities, handles) -> None:
        xp = self.xp
        if capacities.shape[0] == 0:
            return
        classes = ceil_log2(xp, capacities)
        order = xp.argsort(classes, kind="stable")
        sorted_classes = classes[order]
        present = _dedupe_sorted(xp, sorted_classes)
        bounds = xp.searchsorted(sorted_classes, present, side="right")
        lo = 0
        for c, hi in zip(present.tolist(), bounds.tolist()):
            self.classes[int(c)].give_back(handles[order[lo:hi]])
            self.stats["blocks_freed"] += hi - lo
            lo = hi

    # -- memory ------------------------------------------------------------------------------
    def blocks_in_use(self) -> dict:
        """Blocks in use per block size."""
        return {sc.block_size: sc.slots - sc.free for sc in self.classes.values()}

    def memory(self) -> dict:
        """Reserved: vertex arrays, the whole pool, the bit-trees; used: live vertices, blocks in
        use, the bit-trees."""
        rows = self._row_memory()
        tree_bytes = sum(sc.tree_bytes() for sc in self.classes.values())
        reserved = rows["vertex_bytes"] + rows["pool_bytes"] + tree_bytes
        used = VERTEX_ENTRY_BYTES * self._num_vertices + rows["row_bytes_held"] + tree_bytes
        free_blocks = {sc.block_size: sc.free for sc in self.classes.values()}
        return {
            "reserved_bytes": int(reserved),
            "used_bytes": int(used),
            **rows,
            "pool_top_entries": int(self.pool_top),
            "bit_tree_bytes": int(tree_bytes),
            "block_arrays": int(sum(sc.num_arrays for sc in self.classes.values())),
            "blocks_in_use": int(sum(self.blocks_in_use().values())),
            "free_blocks": int(sum(free_blocks.values())),
            "free_block_bytes": int(sum(b * f * ENTRY_BYTES for b, f in free_blocks.items())),
        }
