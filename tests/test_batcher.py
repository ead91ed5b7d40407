"""Splitting a batch into bounded zero-copy slices."""
import pyarrow as pa

from tests.strategies import to_table
from vinestream.stream.batching.batcher import split


def table_of(srcs):
    return to_table([(1, s, s + 1, None) for s in srcs])


def test_split_is_zero_copy_slicing():
    t = table_of(range(10))
    parts = list(split(t, 4))
    assert [p.num_rows for p in parts] == [4, 4, 2]
    assert pa.concat_tables(parts).equals(t)
