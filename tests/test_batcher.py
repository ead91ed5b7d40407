"""Micro-batching by count and latency: order kept, nothing lost, sizes bounded."""
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import to_table
from vinestream.stream.batching.batcher import MicroBatcher, split


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def table_of(srcs):
    return to_table([(1, s, s + 1, None) for s in srcs])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=12), st.integers(1, 40))
def test_batches_keep_order_and_bound_size(sizes, batch_size):
    mb = MicroBatcher(batch_size=batch_size, max_latency_s=10.0, clock=FakeClock())
    sent, got, start = [], [], 0
    for n in sizes:
        srcs = list(range(start, start + n))
        start += n
        sent += srcs
        mb.add(table_of(srcs))
        while mb.pending >= batch_size:
            assert mb.due()
            batch = mb.take()
            assert batch.num_rows == batch_size
            got += batch.column("src").to_pylist()
    for batch in mb.drain():
        assert 0 < batch.num_rows <= batch_size
        got += batch.column("src").to_pylist()
    assert got == sent and mb.pending == 0


def test_latency_cuts_a_small_batch():
    clock = FakeClock()
    mb = MicroBatcher(batch_size=1000, max_latency_s=0.5, clock=clock)
    assert not mb.due()
    mb.add(table_of([1, 2, 3]))
    assert not mb.due()
    clock.now = 0.4
    mb.add(table_of([4]))
    assert not mb.due()
    clock.now = 0.5          # the oldest event has waited 0.5 s
    assert mb.due()
    assert mb.take().column("src").to_pylist() == [1, 2, 3, 4]
    assert not mb.due()


def test_split_is_zero_copy_slicing():
    t = table_of(range(10))
    parts = list(split(t, 4))
    assert [p.num_rows for p in parts] == [4, 4, 2]
    assert pa.concat_tables(parts).equals(t)
