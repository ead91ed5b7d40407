"""SortedEdgeIndex maintenance: the batch is searched in the big arrays, never the other way round."""
import math

import numpy as np
import pytest

from tests.algo_support import backends
from vinestream.algorithms.edge_index import SortedEdgeIndex, _drop_sorted, insert_sorted
from vinestream.structures.array_ops import unique_sorted
from vinestream.structures.backend import to_numpy


@pytest.mark.parametrize("xp", backends())
def test_insert_and_drop_sorted_agree_with_python_sets(xp):
    rng = np.random.default_rng(2)
    for size_a, size_b in ((0, 5), (5, 0), (1, 1), (1000, 7), (7, 1000), (3000, 3000)):
        a = unique_sorted(np, rng.integers(0, 20_000, size_a))
        b = unique_sorted(np, rng.integers(0, 20_000, size_b))
        only_b = np.setdiff1d(b, a)
        merged = to_numpy(insert_sorted(xp, xp.asarray(a), xp.asarray(only_b)))
        assert merged.tolist() == sorted(set(a.tolist()) | set(only_b.tolist()))
        dropped = to_numpy(_drop_sorted(xp, xp.asarray(a), xp.asarray(b)))     # absent keys of b ignored
        assert dropped.tolist() == sorted(set(a.tolist()) - set(b.tolist()))


def test_small_batches_on_large_pending_arrays_cost_the_batch_not_the_pending_keys():
    """With many keys pending (dead and extra near the compaction limit), a batch of k changes reads
    k log(size) keys plus one pass over each pending array it rewrites: no search per pending key."""
    rng = np.random.default_rng(3)
    keys = unique_sorted(np, rng.integers(0, 2**40, 400_000))
    index = SortedEdgeIndex(np, keys.copy(), min_pending=10**9)        # never compacts here
    gone = keys[rng.choice(keys.shape[0], 20_000, replace=False)]
    index.remove(gone >> 32, gone & 0xFFFFFFFF)
    new = rng.integers(2**40, 2**41, 20_000)
    index.add(new >> 32, new & 0xFFFFFFFF)
    index.take_work()
    model = (set(keys.tolist()) - set(gone.tolist())) | set(new.tolist())
    k = 20
    more_gone = np.concatenate([keys[:k], new[:k]])                       # base keys and extra keys
    more_new = np.concatenate([gone[:k], rng.integers(2**41, 2**42, k)])  # dead keys come back, fresh ones
    index.remove(more_gone >> 32, more_gone & 0xFFFFFFFF)
    index.add(more_new >> 32, more_new & 0xFFFFFFFF)
    work = index.take_work()
    pending = index.pending
    log = math.ceil(math.log2(keys.shape[0]))
    assert work <= 4 * 2 * k * 3 * log + 3 * pending                       # batch searches + rewrites
    model = (model - set(more_gone.tolist())) | set(more_new.tolist())
    assert index.compactions == 0 and len(index) == len(model)
    assert index.keys.tolist() == sorted(model)


@pytest.mark.parametrize("xp", backends())
def test_last_position_agrees_with_a_dict_of_the_last_row_per_key(xp):
    """array_ops.last_position (the TTL window's and bench's "last delete_vertex row of each endpoint")."""
    from vinestream.structures.array_ops import last_position
    rng = np.random.default_rng(4)
    for n in (0, 1, 50, 2000):
        keys = rng.integers(0, 40, n)
        positions = rng.permutation(10 * n)[:n]
        queries = rng.integers(-5, 45, 300)
        reference = {}
        for k, p in zip(keys.tolist(), positions.tolist()):
            reference[k] = max(reference.get(k, -1), p)
        got = to_numpy(last_position(xp, xp.asarray(keys), xp.asarray(positions), xp.asarray(queries), missing=-7))
        assert got.tolist() == [reference.get(q, -7) for q in queries.tolist()]
