"""``array_ops.fill_at``: ``target[index] = value`` (one launch on CuPy) against NumPy's fancy assignment."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backends import BACKENDS
from vinestream.structures.array_ops import fill_at
from vinestream.structures.backend import to_numpy

TARGETS = [(np.bool_, True), (np.uint8, 2), (np.int32, -7), (np.int64, 1 << 40), (np.float32, 0.5), (np.float64, 1.0)]


@pytest.mark.parametrize("xp", BACKENDS)
@pytest.mark.parametrize("dtype, value", TARGETS)
@settings(max_examples=30, deadline=None)
@given(size=st.integers(1, 300), picks=st.lists(st.integers(0, 10**6), max_size=60),
       index_dtype=st.sampled_from([np.int32, np.int64]))
def test_fill_at_equals_fancy_assignment(xp, dtype, value, size, picks, index_dtype):
    """Any in-range ids, repeats included, as int32 or int64: the same array as ``a[index] = value``; the
    entries not named keep their values."""
    rng = np.random.default_rng(size)
    start = (rng.random(size) * 10).astype(dtype)
    index = (np.asarray(picks, dtype=np.int64) % size).astype(index_dtype)
    expect = start.copy()
    expect[index] = value
    target = xp.asarray(start)
    fill_at(xp, target, xp.asarray(index), value)
    assert np.array_equal(to_numpy(target), expect)
