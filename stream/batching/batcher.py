"""Splitting a batch: zero-copy Arrow slices of at most ``batch_size`` events.

This is how the pipeline applies a batch too large for device memory in parts.
Gathering polls into batches by count and latency is the application loop's
job (``stream/app/application.py``), where the source positions travel with them.
"""
from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa


def split(events: pa.Table, batch_size: int) -> Iterator[pa.Table]:
    """Zero-copy slices of at most ``batch_size`` rows."""
    for start in range(0, events.num_rows, batch_size):
        yield events.slice(start, batch_size)
