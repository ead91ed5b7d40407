"""External int64 vertex ids <-> dense internal int32 ids, on the device.

The map is a sorted key array with the internal id of each key beside it
(lookup = searchsorted + gather), plus the reverse table ``external_of``
indexed by internal id.  So that a batch never touches all vertices, the sorted
arrays form a small log-structured merge: ``base`` (the bulk) and ``extra``
(keys assigned since the last compaction, merged in by rank); a released key
becomes a tombstone (internal id -1) where it stands, and a key assigned again
while its tombstone is in ``base`` is revived in place.  Once tombstones and
``extra`` exceed ``max(min_pending, 2 sqrt(|base| k))`` for a batch of ``k``
keys, both are folded into ``base`` (one pass).  Each sorted array has one
spare value slot at its end, where searches that miss write, so updates
scatter without compacting (no host sync on a GPU).  Freed internal ids go to a FIFO free queue and are handed out
again before fresh ids (faimGraph's vertex index queue, Winter's thesis
section 4), so the structures' vertex slots stay dense under churn.

On a GPU (``fused``, the default on CuPy) ``lookup``, ``release`` of mapped keys and
``assign`` of up to ``vertex_map_kernels.ASSIGN_CAPACITY`` keys are one launch each
(:mod:`stream.batching.vertex_map_kernels`), leaving the same state as the array
program here, which stays the reference (and runs on NumPy).
"""
from __future__ import annotations

import math

import numpy as np

from vinestream.stream.batching import vertex_map_kernels as vk
from vinestream.structures.array_ops import compact, compact_together, merge_sorted
from vinestream.structures.backend import as_contiguous, is_gpu, to_numpy
from vinestream.structures.csr_types import VERTEX_DTYPE

EXTERNAL_DTYPE = np.int64
UNMAPPED = -1                     # lookup result for unknown ids
_NO_EXTERNAL = np.iinfo(np.int64).min   # reverse-table value of a free slot


def _length(ids) -> int:
    """Number of ids in an array or a host sequence (no operation on the device)."""
    return int(ids.shape[0]) if hasattr(ids, "shape") else len(ids)


class VertexMap:
    """``fused``: the small-batch kernels of :mod:`vertex_map_kernels` (default: on CuPy)."""

    def __init__(self, xp=np, capacity: int = 1024, min_pending: int = 1024, fused: bool | None = None):
        self.xp = xp
        self.fused = is_gpu(xp) if fused is None else bool(fused)
        self.base_keys = xp.zeros(0, dtype=EXTERNAL_DTYPE)           # sorted external ids
        self.base_values = xp.full(1, UNMAPPED, dtype=VERTEX_DTYPE)  # internal id of base_keys[i]; + spare
        self.extra_keys = xp.zeros(0, dtype=EXTERNAL_DTYPE)
        self.extra_values = xp.full(1, UNMAPPED, dtype=VERTEX_DTYPE)
        self.external_of = xp.full(max(capacity, 1), _NO_EXTERNAL, dtype=EXTERNAL_DTYPE)
        self.free = xp.zeros(0, dtype=VERTEX_DTYPE)         # FIFO queue of reusable internal ids
        self.next_id = 0                                    # first never-used internal id
        self.min_pending = int(min_pending)
        self._count = 0                                     # mapped keys
        self._tombstones = 0
        #: bumped by every update (assign, release): a reader that launched work on the map's arrays
        #: (the pipeline's resolve ahead) checks that the map is still the one it read
        self.version = 0
        # the answer to an empty batch, made once: a batch without vertex changes costs no operation
        self._no_ids = xp.zeros(0, dtype=VERTEX_DTYPE)

    # -- sizes -------------------------------------------------------------------
    @property
    def num_vertices(self) -> int:
        return self._count

    @property
    def capacity(self) -> int:
        """One more than the largest internal id ever handed out."""
        return self.next_id

    @property
    def keys(self):
        """All mapped external ids, sorted (compacts first)."""
        self._compact()
        return self.base_keys

    @property
    def values(self):
        """Internal id of each of :attr:`keys` (compacts first)."""
        self._compact()
        return self.base_values[:-1]

    def nbytes(self) -> int:
        return int(self.base_keys.nbytes + self.base_values.nbytes + self.extra_keys.nbytes
                   + self.extra_values.nbytes + self.external_of.nbytes + self.free.nbytes)

    # -- queries -----------------------------------------------------------------
    def _find(self, keys, queries):
        """(slot of each query in ``keys``, or the spare slot len(keys); found mask)."""
        xp = self.xp
        n = int(keys.shape[0])
        if n == 0:
            return xp.zeros(queries.shape[0], dtype=np.int64), xp.zeros(queries.shape[0], dtype=bool)
        pos = xp.minimum(xp.searchsorted(keys, queries), n - 1)
        found = keys[pos] == queries
        return xp.where(found, pos, n), found

    def lookup(self, external):
        """Internal ids of ``external`` (int32), UNMAPPED (-1) where unknown."""
        xp = self.xp
        if _length(external) == 0:
            return self._no_ids
        external = as_contiguous(xp, external, EXTERNAL_DTYPE)    # itself when it is one: no host microseconds
        if self.fused:
            return vk.lookup(xp, self, external)
        at_base, _ = self._find(self.base_keys, external)
        got = self.base_values[at_base]
        if self.extra_keys.shape[0]:
            at_extra, _ = self._find(self.extra_keys, external)
            got = xp.where(got >= 0, got, self.extra_values[at_extra])
        return got.astype(VERTEX_DTYPE)

    @property
    def has_tombstones(self) -> bool:
        """Whether released keys still stand in the sorted arrays (until the next compaction)."""
        return self._tombstones > 0

    def released(self, external):
        """Bool array: which of ``external`` are tombstones (released, not yet compacted away)."""
        xp = self.xp
        external = xp.asarray(external, dtype=EXTERNAL_DTYPE)
        out = xp.zeros(external.shape[0], dtype=bool)
        if not self._tombstones:
            return out
        for keys, values in ((self.base_keys, self.base_values), (self.extra_keys, self.extra_values)):
            if keys.shape[0]:
                at, found = self._find(keys, external)
                out |= found & (values[at] < 0)
        return out

    def external(self, internal):
        """External ids of ``internal`` ids (which must be live)."""
        return self.external_of[self.xp.asarray(internal, dtype=np.int64)]

    # -- updates -----------------------------------------------------------------
    def assign(self, external, *, revived: int | None = None):
        """Give each of ``external`` (distinct, not yet mapped) an internal id; return them.

        Ids come from the free queue first (oldest freed first), then fresh ones.
        ``revived``: how many of ``external`` are tombstones, when the caller knows it
        (``net_effect`` counts them with ``released``); saves reading it back.
        """
        xp = self.xp
        k = _length(external)
        if k == 0:
            return self._no_ids
        self.version += 1
        external = as_contiguous(xp, external, EXTERNAL_DTYPE)
        reused = min(k, int(self.free.shape[0]))
        if self.fused and k <= vk.ASSIGN_CAPACITY:
            return self._assign_fused(external, k, reused, revived)
        fresh = xp.arange(self.next_id, self.next_id + (k - reused), dtype=VERTEX_DTYPE)
        ids = xp.concatenate([self.free[:reused], fresh])
        self.free = self.free[reused:]
        self.next_id += k - reused
        self._grow_reverse(self.next_id)
        self.external_of[ids] = external
        # a key whose tombstone sits in base or extra comes back in place; the others join extra
        at_base, known = self._find(self.base_keys, external)
        self.base_values[at_base] = ids
        self.base_values[-1] = UNMAPPED
        if self.extra_keys.shape[0]:
            at_extra, in_extra = self._find(self.extra_keys, external)
            self.extra_values[at_extra] = ids
            self.extra_values[-1] = UNMAPPED
            known = known | in_extra
        # only a tombstone can be revived: without any, none is (and nothing is read back).  A count
        # from the caller was taken before this batch's release, which kept every tombstone unless
        # it compacted them all away (then there are none)
        if not self._tombstones:
            revived = 0
        elif revived is None:
            revived = int(known.sum())
        self._tombstones -= revived
        rest = k - revived
        if rest:
            new_keys, new_ids = compact_together(xp, (external, ids), ~known, rest)
            order = xp.argsort(new_keys)
            keys, values = merge_sorted(xp, self.extra_keys, self.extra_values[:-1], new_keys[order], new_ids[order])
            self.extra_keys = keys
            self.extra_values = xp.concatenate([values, xp.full(1, UNMAPPED, dtype=VERTEX_DTYPE)])
        self._count += k
        self._maybe_compact(k)
        return ids

    def _assign_fused(self, external, k: int, reused: int, revived: int | None):
        """:meth:`assign` as one launch (``vertex_map_kernels.vm_assign``): the same state."""
        self._grow_reverse(self.next_id + k - reused)
        nx = int(self.extra_keys.shape[0])
        ids, new_xkeys, new_xvals, out = vk.assign(self.xp, self, external, reused, self.next_id)
        self.free = self.free[reused:]
        self.next_id += k - reused
        if not self._tombstones:
            revived = 0
        elif revived is None:
            revived = int(out[0])                     # the caller did not know: one read
        self._tombstones -= revived
        rest = k - revived
        if rest:
            self.extra_keys = new_xkeys[:nx + rest]
            self.extra_values = new_xvals[:nx + rest + 1]
        self._count += k
        self._maybe_compact(k)
        return ids

    def release(self, external, *, all_mapped: bool = False):
        """Forget ``external`` ids (those mapped); their internal ids join the free queue.

        Returns the released internal ids, in the order of ``external``'s mapped entries.
        ``all_mapped``: the caller knows every id is mapped (and distinct), so their number
        is the length and nothing is read back from the device.
        """
        xp = self.xp
        if _length(external) == 0 or self._count == 0:
            return self._no_ids
        self.version += 1
        external = as_contiguous(xp, external, EXTERNAL_DTYPE)
        if self.fused and all_mapped:
            count = int(external.shape[0])
            self.free, internal = vk.release(xp, self, external, self.external_of)
            self._count -= count
            self._tombstones += count
            self._maybe_compact(count)
            return internal
        at_base, _ = self._find(self.base_keys, external)
        internal = self.base_values[at_base]
        self.base_values[at_base] = UNMAPPED                  # tombstones (misses hit the spare slot)
        if self.extra_keys.shape[0]:
            at_extra, _ = self._find(self.extra_keys, external)
            internal = xp.where(internal >= 0, internal, self.extra_values[at_extra])
            self.extra_values[at_extra] = UNMAPPED
        if all_mapped:
            count = int(external.shape[0])
        else:
            mapped = internal >= 0
            count = int(mapped.sum())
            internal = compact(xp, internal, mapped, count)
        self.external_of[internal] = _NO_EXTERNAL
        self.free = xp.concatenate([self.free, internal])
        self._count -= count
        self._tombstones += count
        self._maybe_compact(count)
        return internal

    def _maybe_compact(self, batch: int) -> None:
        pending = int(self.extra_keys.shape[0]) + self._tombstones
        limit = max(self.min_pending, 2 * math.isqrt(int(self.base_keys.shape[0]) * max(int(batch), 1)))
        if pending > limit:
            self._compact()

    def _compact(self) -> None:
        """Fold extra into base and drop tombstones (one pass over the map)."""
        xp = self.xp
        if self.extra_keys.shape[0] == 0 and self._tombstones == 0:
            return
        keys, values = merge_sorted(xp, self.base_keys, self.base_values[:-1],
                                    self.extra_keys, self.extra_values[:-1])
        live = values >= 0
        keys, values = keys[live], values[live]
        self.base_keys = keys
        self.base_values = xp.concatenate([values, xp.full(1, UNMAPPED, dtype=VERTEX_DTYPE)])
        self.extra_keys = xp.zeros(0, dtype=EXTERNAL_DTYPE)
        self.extra_values = xp.full(1, UNMAPPED, dtype=VERTEX_DTYPE)
        self._tombstones = 0

    def _grow_reverse(self, needed: int) -> None:
        if needed <= self.external_of.shape[0]:
            return
        cap = int(self.external_of.shape[0])
        while cap < needed:
            cap *= 2
        grown = self.xp.full(cap, _NO_EXTERNAL, dtype=EXTERNAL_DTYPE)
        grown[: self.external_of.shape[0]] = self.external_of
        self.external_of = grown

    # -- checkpoints -------------------------------------------------------------
    def state(self) -> dict:
        return {"keys": to_numpy(self.keys), "values": to_numpy(self.values),
                "free": to_numpy(self.free), "next_id": np.int64(self.next_id)}

    @classmethod
    def from_state(cls, state: dict, xp=np, fused: bool | None = None) -> VertexMap:
        vm = cls(xp, capacity=max(int(state["next_id"]), 1), fused=fused)
        vm.base_keys = xp.asarray(state["keys"], dtype=EXTERNAL_DTYPE)
        values = xp.asarray(state["values"], dtype=VERTEX_DTYPE)
        vm.base_values = xp.concatenate([values, xp.full(1, UNMAPPED, dtype=VERTEX_DTYPE)])
        vm.free = xp.asarray(state["free"], dtype=VERTEX_DTYPE)
        vm.next_id = int(state["next_id"])
        vm._count = int(vm.base_keys.shape[0])
        vm.external_of[values] = vm.base_keys
        return vm
