"""The dense vertex table (structures/vertex_table.py) that Hornet, cuSTINGER, GPMA, DiffCSR and SlabHash share:
vertex counts against a set oracle, a vertex phase that costs the batch and not the table, and vouched-for
insertions that read nothing back."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vinestream.structures import registry
from vinestream.structures.backend import count_transfers
from vinestream.structures.vertex_table import AliveVertexTable

TABLE_STRUCTURES = sorted(n for n in registry.available() if issubclass(registry.get(n), AliveVertexTable))


def test_the_table_structures_are_found():
    assert {"hornet", "custinger", "gpma", "diffcsr", "slabhash"} <= set(TABLE_STRUCTURES)


@pytest.mark.parametrize("name", TABLE_STRUCTURES)
@settings(max_examples=25, deadline=None)
@given(batches=st.lists(st.lists(st.integers(0, 300), max_size=40), min_size=1, max_size=6))
def test_vertex_counts_match_a_set(name, batches):
    """Repeats within a batch and ids that are already live count once, whatever the order."""
    g = registry.create(name)
    seen = set()
    for ids in batches:
        g.insert_vertices(np.array(ids, dtype=np.int64))
        seen |= set(ids)
        assert g.num_vertices == len(seen)
        assert sorted(g.vertices().tolist()) == sorted(seen)
        probe = np.arange(-2, 310, dtype=np.int64)
        assert g._live(probe).tolist() == [int(v) in seen for v in probe]
        assert g.degree(probe).tolist() == [0] * probe.shape[0]


class _NoWholePass(np.ndarray):
    """An ``alive`` mask that refuses reductions over itself: a vertex phase must touch its ids only."""

    def _refuse(self, *args, **kwargs):
        raise AssertionError("a pass over the whole vertex table")

    sum = any = all = nonzero = _refuse

    def __array_function__(self, func, types, args, kwargs):
        if func in (np.count_nonzero, np.sum, np.nonzero, np.flatnonzero, np.any, np.all):
            self._refuse()
        return super().__array_function__(func, types, args, kwargs)


@pytest.mark.parametrize("name", TABLE_STRUCTURES)
def test_activation_costs_the_batch_not_the_table(name):
    g = registry.create(name)
    g.insert_vertices(np.array([0, (1 << 17) - 1], dtype=np.int64))     # a large table, two live vertices
    assert g.vertex_capacity >= 1 << 17
    g.alive = g.alive.view(_NoWholePass)
    g.insert_vertices(np.array([5, 70_000, 70_000, 3, 0, 65_536], dtype=np.int64))
    assert g.num_vertices == 6
    g.insert_new_vertices(np.array([70_001, 70_003], dtype=np.int64), id_bound=70_004)
    assert g.num_vertices == 8
    assert isinstance(g.alive, _NoWholePass)                          # no growth replaced the mask


@pytest.mark.parametrize("name", TABLE_STRUCTURES)
def test_vouched_for_insertions_read_nothing_back(name):
    g = registry.create(name)
    g.insert_vertices(np.arange(100, dtype=np.int64))
    with count_transfers() as c:
        g.insert_new_vertices(np.array([100, 104, 150], dtype=np.int64), id_bound=200)
        assert c.count == 0
    assert g.num_vertices == 103 and g.vertex_capacity >= 200
    assert g._live(np.array([104, 105, 150], dtype=np.int64)).tolist() == [True, False, True]
