"""The fused vertex map (its kernels run by their host emulation) against the array program, state for state.

Random assign / release streams drive two maps, one per path, with compactions forced
often (a small ``min_pending``): after every step the sorted arrays (keys, values, the
extra part and its spare slot), the tombstone count, the free queue in its order,
``next_id``, the reverse table and every answer must be equal.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import vertex_map_emulation as emu
from vinestream.stream.batching.vertex_map import VertexMap
from vinestream.structures.backend import count_operations

pytestmark = pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation")

key = st.one_of(st.integers(-12, 12), st.integers(-12, 12), st.integers(-12, 12),
                st.integers(-(2**63), 2**63 - 1))
step = st.tuples(st.sampled_from(["assign", "assign_sorted", "release", "release_any"]),
                 st.lists(key, max_size=30), st.booleans())


def assert_same_state(fused: VertexMap, array: VertexMap) -> None:
    for name in ("base_keys", "base_values", "extra_keys", "extra_values", "free", "external_of"):
        got, want = getattr(fused, name), getattr(array, name)
        assert got.dtype == want.dtype and got.tolist() == want.tolist(), name
    for name in ("next_id", "_count", "_tombstones"):
        assert getattr(fused, name) == getattr(array, name), name


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, max_size=14), order=st.integers(0, 2), seed=st.integers(1, 1000),
       min_pending=st.sampled_from([1, 8, 10**9]))
def test_fused_vertex_map_matches_the_array_program(steps, order, seed, min_pending):
    fused = VertexMap(np, capacity=2, min_pending=min_pending, fused=True)
    array = VertexMap(np, capacity=2, min_pending=min_pending, fused=False)
    with emu.emulated(order, seed) as launcher:
        for kind, keys, flag in steps:
            keys = np.array(list(dict.fromkeys(keys)), dtype=np.int64)
            if kind.startswith("assign"):
                keys = keys[array.lookup(keys) < 0]
                if kind == "assign_sorted":
                    keys = np.sort(keys)
                revived = int(array.released(keys).sum()) if flag else None
                got = fused.assign(keys.copy(), revived=revived)
                want = array.assign(keys.copy(), revived=revived)
            elif kind == "release":          # mapped keys: the fused path
                keys = keys[array.lookup(keys) >= 0]
                got = fused.release(keys.copy(), all_mapped=True)
                want = array.release(keys.copy(), all_mapped=True)
            else:                            # any keys: the array program on both
                got, want = fused.release(keys.copy()), array.release(keys.copy())
            assert got.tolist() == want.tolist()
            assert_same_state(fused, array)
            probe = np.concatenate([keys, np.array([0, 1, -1, 2**62], dtype=np.int64)])
            assert fused.lookup(probe).tolist() == array.lookup(probe).tolist()
            assert fused.released(probe).tolist() == array.released(probe).tolist()
    if any(kind == "assign" and keys for kind, keys, _ in steps):
        assert launcher.launches.get("vm_assign", 0) > 0


def test_each_fused_operation_is_one_launch():
    """assign (from the free queue and fresh, reviving tombstones), release and lookup: one operation each,
    no read when the caller knows the revived count."""
    with emu.emulated(), count_operations() as c:
        vm = VertexMap(np, fused=True, min_pending=10**9)
        vm.assign(np.arange(0, 200, 2, dtype=np.int64))
        vm._compact()
        vm.assign(np.arange(1, 41, 2, dtype=np.int64))
        gone = np.array([4, 8, 5, 7], dtype=np.int64)
        probe = np.arange(-5, 60, dtype=np.int64)
        back, again = np.array([4, 5, 1001, 1003], dtype=np.int64), np.array([7, 8], dtype=np.int64)
        for body, expected in [(lambda: vm.lookup(probe), 1),
                               (lambda: vm.release(gone, all_mapped=True), 1),
                               (lambda: vm.assign(back, revived=2), 1),
                               (lambda: vm.assign(again), 2)]:          # + the read of the revived count
            mark = c.mark()
            body()
            assert c.since(mark) == expected, c.kinds
    array = VertexMap(np, fused=False, min_pending=10**9)
    array.assign(np.arange(0, 200, 2, dtype=np.int64))
    array._compact()
    array.assign(np.arange(1, 41, 2, dtype=np.int64))
    array.release(np.array([4, 8, 5, 7], dtype=np.int64), all_mapped=True)
    array.assign(np.array([4, 5, 1001, 1003], dtype=np.int64), revived=2)
    array.assign(np.array([7, 8], dtype=np.int64))
    assert_same_state(vm, array)
