"""A SlabAlloc-style pool of 128-byte slabs: pre-allocated, handed out and reclaimed on the device.

SlabHash (Ashkiani et al., the hash table under hashGraph; see
``papers/dynamic-graphs-slides.txt``, "Dynamic Graph Setup: a large block of
memory for slabs", and the thesis's hashGraph survey, section 2.3) never calls
``malloc`` per bucket: every bucket is a chain of fixed-size *slabs* of 32
32-bit words (128 bytes, one word per lane of a warp, so a warp reads a whole
slab in one coalesced load), served from one pre-allocated pool.

This component is that pool, independent of the hash table:

* ``words`` - the pool itself, ``capacity x 32`` int32 words.  A free slab holds
  ``EMPTY_WORD`` (-1) in every word, so a slab comes out of the allocator ready
  to be used as an empty bucket slab (empty slots, no next slab).
* ``queue`` - a ring buffer of the ids of the free slabs with monotone
  ``head`` / ``tail`` counters.  A batch takes ``n`` slabs at once as the queue
  entries ``[head, head + n)`` (callers hand a contiguous piece of it to each of
  their requests by a prefix sum, as the GPU allocators of the thesis do; no
  per-slab lock); freed slabs are written back at ``tail``.  The ring never
  overflows because it holds every slab id exactly once (free) or not at all
  (in use).
* ``allocated`` - one flag per slab, the allocator's own bookkeeping, which makes
  double frees and frees of foreign ids errors instead of silent corruption.

Growth: when a request does not fit in the free slabs the pool is reallocated
with ``grow_factor`` times the capacity (at least what is needed); the old
slabs keep their ids and contents, the new ids join the queue behind the free
ones.  :meth:`check` verifies the accounting (every id free xor allocated,
nothing handed out twice, nothing lost, free slabs blank).
"""
from __future__ import annotations

import math

import numpy as np

from .backend import to_numpy

WORDS_PER_SLAB = 32           # one 32-bit word per warp lane
SLAB_BYTES = 4 * WORDS_PER_SLAB
EMPTY_WORD = -1               # every word of a free slab


class SlabAllocator:
    """A pool of ``capacity`` slabs of 32 int32 words with a free-id ring queue.

    Parameters: ``xp`` (numpy or cupy), ``initial_slabs`` (the first reservation),
    ``grow_factor`` (capacity multiplier when a request does not fit, >= 1.25).
    """

    def __init__(self, xp=np, initial_slabs: int = 1024, grow_factor: float = 2.0):
        if grow_factor < 1.25:
            raise ValueError("grow_factor must be >= 1.25")
        self.xp = xp
        self.grow_factor = float(grow_factor)
        self.capacity = 0
        self.words = xp.zeros((0, WORDS_PER_SLAB), dtype=np.int32)
        self.queue = xp.zeros(0, dtype=np.int32)
        self.allocated = xp.zeros(0, dtype=bool)
        self.head = 0             # monotone counters; positions are taken modulo capacity
        self.tail = 0
        self.stats = {"allocated": 0, "freed": 0, "grows": 0}
        if initial_slabs > 0:
            self._grow(int(initial_slabs))
            self.stats["grows"] = 0

    # -- accounting ---------------------------------------------------------------------
    @property
    def free_count(self) -> int:
        return self.tail - self.head

    @property
    def in_use(self) -> int:
        return self.capacity - self.free_count

    @property
    def flat(self):
        """The pool as one flat int32 array (word ``s * 32 + j`` is word ``j`` of slab ``s``)."""
        return self.words.reshape(-1)

    @property
    def flat_float(self):
        """The same words seen as float32 (weights are stored as their bit patterns)."""
        return self.words.reshape(-1).view(np.float32)

    # -- allocate / free ----------------------------------------------------------------
    def reserve(self, n: int) -> None:
        """Make sure ``n`` slabs can be allocated without another reallocation."""
        if n > self.free_count:
            target = self.in_use + int(n)
            new_cap = max(self.capacity, 1)
            while new_cap < target:
                new_cap = max(new_cap + 1, math.ceil(new_cap * self.grow_factor))
            self._grow(new_cap)

    def allocate(self, n: int):
        """Hand out ``n`` free slabs (int32 ids, all words EMPTY_WORD): queue entries ``[head, head+n)``."""
        xp = self.xp
        n = int(n)
        if n <= 0:
            return xp.zeros(0, dtype=np.int32)
        self.reserve(n)
        pos = (self.head + xp.arange(n, dtype=np.int64)) % self.capacity
        ids = self.queue[pos]
        self.head += n
        self.allocated[ids] = True
        self.stats["allocated"] += n
        return ids

    def free(self, ids) -> None:
        """Take slabs back: blank them and write their ids at the queue tail.

        Raises ``ValueError`` on an id that is not allocated or that is repeated
        (a double free), before changing anything.
        """
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        n = int(ids.shape[0])
        if n == 0:
            return
        if int(ids.min()) < 0 or int(ids.max()) >= self.capacity:
            raise ValueError("free: slab id outside the pool")
        s = xp.sort(ids)
        if bool((s[1:] == s[:-1]).any()) or not bool(self.allocated[ids].all()):
            raise ValueError("free: slab freed twice or never allocated")
        self.words[ids] = EMPTY_WORD
        self.allocated[ids] = False
        pos = (self.tail + xp.arange(n, dtype=np.int64)) % self.capacity
        self.queue[pos] = ids.astype(np.int32)
        self.tail += n
        self.stats["freed"] += n

    def _grow(self, new_cap: int) -> None:
        """Reallocate the pool with ``new_cap`` slabs; the new ids queue up behind the free ones."""
        xp = self.xp
        old = self.capacity
        words = xp.full((new_cap, WORDS_PER_SLAB), EMPTY_WORD, dtype=np.int32)
        words[:old] = self.words
        allocated = xp.zeros(new_cap, dtype=bool)
        allocated[:old] = self.allocated
        free_now = self.free_count
        queue = xp.empty(new_cap, dtype=np.int32)
        if free_now:
            queue[:free_now] = self.queue[(self.head + xp.arange(free_now, dtype=np.int64)) % old]
        queue[free_now:free_now + new_cap - old] = xp.arange(old, new_cap, dtype=np.int32)
        self.words, self.allocated, self.queue = words, allocated, queue
        self.head, self.tail = 0, free_now + new_cap - old
        self.capacity = new_cap
        self.stats["grows"] += 1

    # -- checks and memory ----------------------------------------------------------------
    def free_ids(self):
        """The ids in the queue (host numpy), in queue order."""
        if self.capacity == 0:
            return np.zeros(0, dtype=np.int32)
        return to_numpy(self.queue)[(self.head + np.arange(self.free_count)) % self.capacity]

    def check(self) -> None:
        """Assert the accounting: free ids distinct and unallocated, free + allocated = the pool,
        free slabs blank (host-side; for tests)."""
        free = self.free_ids()
        alloc = to_numpy(self.allocated)
        assert 0 <= self.free_count <= self.capacity
        assert len(np.unique(free)) == len(free), "a free slab is queued twice"
        assert not alloc[free].any(), "a slab is both free and allocated"
        assert int(alloc.sum()) + len(free) == self.capacity, "a slab is lost"
        assert int(alloc.sum()) == self.in_use
        assert (to_numpy(self.words)[free] == EMPTY_WORD).all(), "a free slab is not blank"

    def nbytes(self) -> int:
        """Reserved bytes: the pool, its queue (4 B per slab) and the allocated flags (1 B per slab)."""
        return self.capacity * (SLAB_BYTES + 4 + 1)

    def memory(self) -> dict:
        return {"slabs_reserved": int(self.capacity), "slabs_in_use": int(self.in_use),
                "slabs_free": int(self.free_count), "slab_pool_bytes": int(self.capacity * SLAB_BYTES),
                "allocator_bytes": int(self.nbytes()), "pool_grows": int(self.stats["grows"])}
