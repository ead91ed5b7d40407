"""External int64 vertex ids <-> dense internal int32 ids, on the device.

The map is a sorted key array with the internal id of each key beside it
(lookup = searchsorted + gather), plus the reverse table ``external_of``
indexed by internal id.  New keys are merged in by a searchsorted merge (each
old key moves right by the number of new keys below it), never by re-sorting
everything.  Freed internal ids go to a FIFO free queue and are handed out
again before fresh ids (faimGraph's vertex index queue, Winter's thesis
section 4), so the structures' vertex slots stay dense under churn.
"""
from __future__ import annotations

import numpy as np

from vinestream.structures.backend import to_numpy
from vinestream.structures.csr_types import VERTEX_DTYPE

EXTERNAL_DTYPE = np.int64
UNMAPPED = -1                     # lookup result for unknown ids
_NO_EXTERNAL = np.iinfo(np.int64).min   # reverse-table value of a free slot


class VertexMap:
    def __init__(self, xp=np, capacity: int = 1024):
        self.xp = xp
        self.keys = xp.zeros(0, dtype=EXTERNAL_DTYPE)       # sorted external ids
        self.values = xp.zeros(0, dtype=VERTEX_DTYPE)       # internal id of keys[i]
        self.external_of = xp.full(max(capacity, 1), _NO_EXTERNAL, dtype=EXTERNAL_DTYPE)
        self.free = xp.zeros(0, dtype=VERTEX_DTYPE)         # FIFO queue of reusable internal ids
        self.next_id = 0                                    # first never-used internal id

    # -- sizes -------------------------------------------------------------------
    @property
    def num_vertices(self) -> int:
        return int(self.keys.shape[0])

    @property
    def capacity(self) -> int:
        """One more than the largest internal id ever handed out."""
        return self.next_id

    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.values.nbytes + self.external_of.nbytes + self.free.nbytes)

    # -- queries -----------------------------------------------------------------
    def lookup(self, external):
        """Internal ids of ``external`` (int32), UNMAPPED (-1) where unknown."""
        xp = self.xp
        external = xp.asarray(external, dtype=EXTERNAL_DTYPE)
        if self.keys.shape[0] == 0 or external.shape[0] == 0:
            return xp.full(external.shape[0], UNMAPPED, dtype=VERTEX_DTYPE)
        pos = xp.searchsorted(self.keys, external)
        pos = xp.minimum(pos, self.keys.shape[0] - 1)
        found = self.keys[pos] == external
        return xp.where(found, self.values[pos], UNMAPPED).astype(VERTEX_DTYPE)

    def external(self, internal):
        """External ids of ``internal`` ids (which must be live)."""
        return self.external_of[self.xp.asarray(internal, dtype=np.int64)]

    # -- updates -----------------------------------------------------------------
    def assign(self, external):
        """Give each of ``external`` (distinct, not yet mapped) an internal id; return them.

        Ids come from the free queue first (oldest freed first), then fresh ones.
        """
        xp = self.xp
        external = xp.asarray(external, dtype=EXTERNAL_DTYPE)
        k = int(external.shape[0])
        if k == 0:
            return xp.zeros(0, dtype=VERTEX_DTYPE)
        reused = min(k, int(self.free.shape[0]))
        fresh = xp.arange(self.next_id, self.next_id + (k - reused), dtype=VERTEX_DTYPE)
        ids = xp.concatenate([self.free[:reused], fresh])
        self.free = self.free[reused:]
        self.next_id += k - reused
        self._grow_reverse(self.next_id)
        self.external_of[ids] = external
        self._merge(external, ids)
        return ids

    def release(self, external):
        """Forget ``external`` ids (those mapped); their internal ids join the free queue.

        Returns the released internal ids, in the order of ``external``'s mapped entries.
        """
        xp = self.xp
        external = xp.asarray(external, dtype=EXTERNAL_DTYPE)
        if external.shape[0] == 0 or self.keys.shape[0] == 0:
            return xp.zeros(0, dtype=VERTEX_DTYPE)
        pos = xp.searchsorted(self.keys, external)
        pos = xp.minimum(pos, self.keys.shape[0] - 1)
        pos = pos[self.keys[pos] == external]
        internal = self.values[pos]
        keep = xp.ones(self.keys.shape[0], dtype=bool)
        keep[pos] = False
        self.keys = self.keys[keep]
        self.values = self.values[keep]
        self.external_of[internal] = _NO_EXTERNAL
        self.free = xp.concatenate([self.free, internal])
        return internal

    def _merge(self, new_keys, new_values) -> None:
        """Merge unsorted, distinct ``new_keys`` into the sorted key array without a full re-sort."""
        xp = self.xp
        order = xp.argsort(new_keys)
        new_keys, new_values = new_keys[order], new_values[order]
        n, k = int(self.keys.shape[0]), int(new_keys.shape[0])
        keys = xp.empty(n + k, dtype=EXTERNAL_DTYPE)
        values = xp.empty(n + k, dtype=VERTEX_DTYPE)
        # final slot of each new key: its rank among old keys + its own rank
        new_slot = xp.searchsorted(self.keys, new_keys) + xp.arange(k)
        old_slot = xp.arange(n) + xp.searchsorted(new_keys, self.keys)
        keys[new_slot], values[new_slot] = new_keys, new_values
        keys[old_slot], values[old_slot] = self.keys, self.values
        self.keys, self.values = keys, values

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
    def from_state(cls, state: dict, xp=np) -> VertexMap:
        vm = cls(xp, capacity=max(int(state["next_id"]), 1))
        vm.keys = xp.asarray(state["keys"], dtype=EXTERNAL_DTYPE)
        vm.values = xp.asarray(state["values"], dtype=VERTEX_DTYPE)
        vm.free = xp.asarray(state["free"], dtype=VERTEX_DTYPE)
        vm.next_id = int(state["next_id"])
        vm.external_of[vm.values] = vm.keys
        return vm
