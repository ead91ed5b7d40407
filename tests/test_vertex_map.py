"""VertexMap against a dict model: lookups, reverse lookups, FIFO reuse of freed internal ids."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.backends import BACKENDS
from vinestream.stream.batching.vertex_map import UNMAPPED, VertexMap

ids = st.integers(-(2**63), 2**63 - 1)
small_ids = st.integers(-20, 20)
step = st.tuples(st.booleans(), st.lists(st.one_of(ids, small_ids), max_size=25))


@pytest.mark.parametrize("xp", BACKENDS)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, max_size=12))
def test_vertex_map_matches_dict(xp, steps):
    vm = VertexMap(xp, capacity=2)
    model: dict[int, int] = {}
    free: list[int] = []
    next_id = 0
    for is_assign, keys in steps:
        keys = list(dict.fromkeys(keys))     # distinct, order kept
        if is_assign:
            new = [k for k in keys if k not in model]
            got = vm.assign(xp.asarray(new, dtype=np.int64)).tolist()
            expect = []
            for _ in new:
                if free:
                    expect.append(free.pop(0))
                else:
                    expect.append(next_id)
                    next_id += 1
            assert got == expect
            model.update(zip(new, got))
        else:
            released = vm.release(xp.asarray(keys, dtype=np.int64)).tolist()
            assert sorted(released) == sorted(model[k] for k in keys if k in model)
            for k in keys:
                if k in model:
                    free.append(model.pop(k))
            if released:   # the queue order is the release order
                free[-len(released):] = released
        probe = list(model) + [k for k in keys if k not in model]
        looked = vm.lookup(xp.asarray(probe, dtype=np.int64)).tolist()
        assert looked == [model.get(k, UNMAPPED) for k in probe]
        assert vm.num_vertices == len(model)
        if model:
            internal = xp.asarray(list(model.values()), dtype=np.int32)
            assert vm.external(internal).tolist() == list(model.keys())
        assert bool((vm.keys[1:] > vm.keys[:-1]).all())


def test_state_round_trip():
    vm = VertexMap(np)
    vm.assign(np.array([50, -3, 7, 2**62], dtype=np.int64))
    vm.release(np.array([7], dtype=np.int64))
    again = VertexMap.from_state(vm.state(), np)
    probe = np.array([50, -3, 7, 2**62, 1], dtype=np.int64)
    assert again.lookup(probe).tolist() == vm.lookup(probe).tolist()
    assert again.assign(np.array([99], dtype=np.int64)).tolist() == vm.assign(np.array([99])).tolist()


def test_released_keys_come_back_in_place_and_compaction_keeps_the_map():
    """A key released and assigned again (from base or from the pending extra part) stays one entry;
    a forced compaction changes nothing visible."""
    vm = VertexMap(np, min_pending=10**9)           # never compact on its own
    vm.assign(np.arange(0, 100, 2, dtype=np.int64))
    vm._compact()
    vm.assign(np.array([1, 3, 5], dtype=np.int64))  # pending in extra
    vm.release(np.array([2, 3], dtype=np.int64))    # one tombstone in base, one in extra
    got = vm.assign(np.array([3, 2], dtype=np.int64))
    probe = np.array([2, 3, 5, 4, 7], dtype=np.int64)
    before = vm.lookup(probe).tolist()
    assert before[:2] == got.tolist()[::-1] and before[4] == UNMAPPED
    vm._compact()
    assert vm.lookup(probe).tolist() == before
    assert vm.keys.tolist() == sorted(set(range(0, 100, 2)) | {1, 3, 5}) and vm.num_vertices == 53
