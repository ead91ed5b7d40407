"""``array_ops.compact_together`` (and ``compact``, one array of it): each array's entries where the mask holds, in
order, against boolean indexing; the scatter form a GPU runs checked on NumPy too, by a namespace that is not
``np`` (so the prefix-sum branch runs)."""
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backends import BACKENDS
from vinestream.structures.array_ops import compact, compact_together
from vinestream.structures.backend import to_numpy

#: NumPy seen through a namespace that is not ``np``: compact_together takes its device branch
SCATTER_FORM = types.SimpleNamespace(where=np.where, cumsum=np.cumsum, empty=np.empty, asarray=np.asarray)


@pytest.mark.parametrize("xp", [*BACKENDS, SCATTER_FORM])
@settings(max_examples=60, deadline=None)
@given(flags=st.lists(st.booleans(), max_size=400), seed=st.integers(0, 2**16))
def test_compact_together_equals_boolean_indexing(xp, flags, seed):
    """Every array compacted by the one mask is that array's masked entries, in order and with its dtype."""
    rng = np.random.default_rng(seed)
    n = len(flags)
    mask = np.asarray(flags, dtype=bool)
    arrays = [rng.integers(-2**40, 2**40, n, dtype=np.int64), rng.integers(0, 2**31 - 1, n).astype(np.int32),
              rng.random(n).astype(np.float32)]
    count = int(mask.sum())
    out = compact_together(xp, [xp.asarray(a) for a in arrays], xp.asarray(mask), count)
    assert len(out) == len(arrays)
    for got, a in zip(out, arrays):
        got = to_numpy(got)
        assert got.dtype == a.dtype and np.array_equal(got, a[mask])
    single = to_numpy(compact(xp, xp.asarray(arrays[0]), xp.asarray(mask), count))
    assert np.array_equal(single, arrays[0][mask])
