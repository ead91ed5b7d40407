"""The SlabAlloc-style slab pool on its own: nothing handed out twice, nothing lost, blank slabs, growth."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backends import BACKENDS
from vinestream.structures.backend import to_numpy
from vinestream.structures.slab_alloc import EMPTY_WORD, SLAB_BYTES, WORDS_PER_SLAB, SlabAllocator


def test_slab_is_128_bytes_of_32_words():
    assert WORDS_PER_SLAB == 32 and SLAB_BYTES == 128
    a = SlabAllocator(np, initial_slabs=4)
    assert a.words.shape == (4, 32) and a.words.dtype == np.int32 and a.words.nbytes == 4 * 128


@pytest.mark.parametrize("xp", BACKENDS)
def test_allocate_free_reuse_in_queue_order(xp):
    a = SlabAllocator(xp, initial_slabs=8)
    first = to_numpy(a.allocate(5)).tolist()
    assert first == [0, 1, 2, 3, 4]
    assert a.in_use == 5 and a.free_count == 3
    a.words[xp.asarray([1, 3])] = 7                   # a user writes into its slabs
    a.free(xp.asarray([3, 1]))
    a.check()
    assert a.in_use == 3
    # the remaining never-used slabs come first, then the freed ones, blank again
    nxt = to_numpy(a.allocate(5)).tolist()
    assert nxt == [5, 6, 7, 3, 1]
    assert (to_numpy(a.words)[[3, 1]] == EMPTY_WORD).all()
    assert a.stats["grows"] == 0
    a.check()


def test_double_free_and_foreign_ids_are_errors():
    a = SlabAllocator(np, initial_slabs=4)
    ids = a.allocate(2)
    a.free(ids[:1])
    with pytest.raises(ValueError):
        a.free(ids[:1])                                # freed twice
    with pytest.raises(ValueError):
        a.free(np.asarray([ids[1], ids[1]]))            # repeated in one call
    with pytest.raises(ValueError):
        a.free(np.asarray([3]))                         # never allocated
    with pytest.raises(ValueError):
        a.free(np.asarray([99]))                        # outside the pool
    a.check()
    assert a.in_use == 1


def test_growth_keeps_ids_and_contents():
    a = SlabAllocator(np, initial_slabs=2, grow_factor=2.0)
    ids = a.allocate(2)
    a.words[ids, 0] = [11, 22]
    more = a.allocate(5)                                # does not fit: one reallocation to 8
    assert a.capacity == 8 and a.stats["grows"] == 1
    assert a.words[0, 0] == 11 and a.words[1, 0] == 22
    assert sorted(np.concatenate([ids, more]).tolist()) == list(range(7))
    a.check()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 40)), min_size=1, max_size=40),
       st.integers(0, 2**32 - 1))
def test_random_sequences_never_hand_out_twice_never_lose(ops, seed):
    rng = np.random.default_rng(seed)
    a = SlabAllocator(np, initial_slabs=int(rng.integers(0, 16)), grow_factor=1.5)
    held: set[int] = set()
    for is_alloc, k in ops:
        if is_alloc or not held:
            ids = a.allocate(k).tolist()
            assert len(set(ids)) == len(ids), "handed out twice in one call"
            assert not held & set(ids), "handed out a slab already in use"
            assert (a.words[ids] == EMPTY_WORD).all()
            held |= set(ids)
            a.words[ids] = rng.integers(0, 100, (len(ids), 32))      # dirty them
        else:
            pick = rng.choice(sorted(held), size=min(k, len(held)), replace=False).tolist()
            a.free(np.asarray(pick, dtype=np.int64))
            held -= set(pick)
        assert a.in_use == len(held)
        assert set(np.nonzero(a.allocated)[0].tolist()) == held
        a.check()
    # everything back: the pool is whole again
    a.free(np.asarray(sorted(held), dtype=np.int64))
    a.check()
    assert a.in_use == 0 and a.free_count == a.capacity
    assert a.stats["allocated"] - a.stats["freed"] == 0


def test_memory_counts_pool_queue_and_flags():
    a = SlabAllocator(np, initial_slabs=10)
    a.allocate(3)
    m = a.memory()
    assert m["slabs_reserved"] == 10 and m["slabs_in_use"] == 3 and m["slabs_free"] == 7
    assert m["slab_pool_bytes"] == 1280
    assert m["allocator_bytes"] == a.words.nbytes + a.queue.nbytes + a.allocated.nbytes
