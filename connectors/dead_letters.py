"""The Parquet dead-letter sink: every rejected event with its reason and source position.

``OUT/dead_letter.parquet`` (DESIGN.md "Export and monitoring"); the Kafka
dead-letter topic is :class:`~vinestream.connectors.kafka.KafkaDeadLetterSink`.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA

from .parquet import RewrittenTable


class ParquetDeadLetterSink(RewrittenTable):
    """Rejected events with reason and source position in ``out_dir/dead_letter.parquet``."""

    DEAD = "dead_letter.parquet"

    def __init__(self, out_dir: str | os.PathLike, *, interval_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic):
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        super().__init__(out_dir / self.DEAD, interval_s, clock)
        self._dead: list[pa.Table] = []
        if self.path.exists():
            self._dead = [pq.read_table(self.path).cast(DEAD_LETTER_SCHEMA)]

    def write(self, table: pa.Table) -> None:
        if table is None or table.num_rows == 0:
            return
        self._dead.append(table.select(DEAD_LETTER_SCHEMA.names).cast(DEAD_LETTER_SCHEMA))
        self.changed()

    def table(self) -> pa.Table | None:
        """Every dead letter so far (None before the first: no file is written for a clean run)."""
        if len(self._dead) > 1:
            self._dead = [pa.concat_tables(self._dead)]
        return self._dead[0] if self._dead else None

    def close(self) -> None:
        self.flush()
