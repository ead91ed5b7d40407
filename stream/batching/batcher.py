"""Micro-batching: cut a stream of event tables into batches by event count and by latency.

A batch is emitted when ``batch_size`` events are pending, or when the oldest
pending event has waited ``max_latency_s`` (so a trickle of events is not held
back forever).  Batches never exceed ``batch_size``: a large input is sliced
(zero-copy Arrow slices), which is also how an oversized batch is split to fit
device memory.
"""
from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator

import pyarrow as pa

from vinestream.stream.events.schema import EVENT_SCHEMA


class MicroBatcher:
    def __init__(self, batch_size: int = 100_000, max_latency_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic):
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.batch_size = int(batch_size)
        self.max_latency_s = float(max_latency_s)
        self.clock = clock
        self._tables: deque[pa.Table] = deque()
        self._pending = 0
        self._oldest: float | None = None      # arrival time of the oldest pending event

    @property
    def pending(self) -> int:
        return self._pending

    def add(self, events: pa.Table) -> None:
        if events.num_rows == 0:
            return
        if self._oldest is None:
            self._oldest = self.clock()
        self._tables.append(events)
        self._pending += events.num_rows

    def due(self) -> bool:
        """True when a batch should be cut now (full, or the oldest event waited long enough)."""
        if self._pending >= self.batch_size:
            return True
        return self._pending > 0 and self.clock() - self._oldest >= self.max_latency_s

    def take(self) -> pa.Table:
        """Up to ``batch_size`` of the oldest pending events, as one table (may be empty)."""
        parts, need = [], self.batch_size
        while self._tables and need > 0:
            head = self._tables[0]
            if head.num_rows <= need:
                parts.append(self._tables.popleft())
                need -= head.num_rows
            else:
                parts.append(head.slice(0, need))
                self._tables[0] = head.slice(need)
                need = 0
        taken = self.batch_size - need
        self._pending -= taken
        self._oldest = self.clock() if self._pending else None
        if not parts:
            return EVENT_SCHEMA.empty_table()
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]

    def drain(self) -> Iterator[pa.Table]:
        """Every pending event, in batches of at most ``batch_size``."""
        while self._pending:
            yield self.take()


def split(events: pa.Table, batch_size: int) -> Iterator[pa.Table]:
    """Zero-copy slices of at most ``batch_size`` rows."""
    for start in range(0, events.num_rows, batch_size):
        yield events.slice(start, batch_size)
