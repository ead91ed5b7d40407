"""The jobs' output columns made by one launch on CuPy (``pagerank.normalised_ranks``, ``bfs.parent_ids``) against
the array programs they replace, on random slot arrays; on NumPy the array programs themselves."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backends import BACKENDS
from vinestream.algorithms.bfs import parent_ids
from vinestream.algorithms.pagerank import normalised_ranks
from vinestream.structures.backend import to_numpy


@pytest.mark.parametrize("xp", BACKENDS)
@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 2000), dead=st.floats(0, 1), zero=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_normalised_ranks_equal_the_array_program(xp, n, dead, zero, seed):
    """``(z + r) / sum(z + r)``, dead slots (0 in both) staying 0 and an all-zero state staying all zero."""
    rng = np.random.default_rng(seed)
    z, r = rng.random(n), rng.random(n) * 1e-3 - 5e-4
    gone = rng.random(n) < dead
    z[gone] = r[gone] = 0.0
    if zero:
        z[:] = r[:] = 0.0
    total = (z + r).sum()
    expect = (z + r) / (total if total > 0 else 1.0)
    got = normalised_ranks(xp, xp.asarray(z), xp.asarray(r))
    assert isinstance(got, xp.ndarray) and got.shape == (n,)
    np.testing.assert_allclose(to_numpy(got), expect, rtol=1e-12, atol=0)
    assert not to_numpy(got)[gone].any()


@pytest.mark.parametrize("xp", BACKENDS)
@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 2000), slots=st.integers(1, 3000), none=st.floats(0, 1),
       parent_dtype=st.sampled_from([np.int32, np.int64]), seed=st.integers(0, 2**32 - 1))
def test_parent_ids_equal_the_array_program(xp, n, slots, none, parent_dtype, seed):
    """Each slot's parent's external id where it has a parent (>= 0), 0 and invalid where not."""
    rng = np.random.default_rng(seed)
    external_of = rng.integers(-2**40, 2**40, slots)
    parent = rng.integers(0, slots, n).astype(parent_dtype)
    parent[rng.random(n) < none] = -1
    ext, has = parent_ids(xp, xp.asarray(parent), xp.asarray(external_of))
    want_has = parent >= 0
    assert np.array_equal(to_numpy(has), want_has)
    assert to_numpy(ext).dtype == np.int64
    assert np.array_equal(to_numpy(ext), np.where(want_has, external_of[np.maximum(parent, 0)], 0))
