"""The one-launch array helpers against the NumPy forms they replace: ``array_ops.fill_at`` (``target[index] =
value``) against fancy assignment, ``array_ops.sum_of_sums`` against ``(a + b).sum()``."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backends import BACKENDS
from vinestream.structures.array_ops import fill_at, sum_of_sums
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


@pytest.mark.parametrize("xp", BACKENDS)
@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)), max_size=3000))
def test_sum_of_sums_equals_the_sum_of_the_sum(xp, values):
    """One element, on the arrays' device, equal to ``(a + b).sum()`` within the rounding of a different order of
    additions; zero for empty arrays."""
    a = np.asarray([x for x, _ in values], dtype=np.float64)
    b = np.asarray([y for _, y in values], dtype=np.float64)
    got = sum_of_sums(xp, xp.asarray(a), xp.asarray(b))
    assert isinstance(got, xp.ndarray) and got.shape == (1,)
    scale = float(np.abs(a).sum() + np.abs(b).sum())
    assert abs(float(to_numpy(got)[0]) - float((a + b).sum())) <= 1e-12 * max(scale, 1.0)
