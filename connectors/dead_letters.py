"""The Parquet dead-letter sink: every rejected event with its reason and source position.

``OUT/dead_letter.parquet`` (DESIGN.md "Export and monitoring") is a directory of
Parquet part files, ``part-<first row>-<rows>.parquet``, which
``pyarrow.parquet.read_table("OUT/dead_letter.parquet")`` (or any Parquet dataset
reader) reads as one table.  Dead letters are appended: rows are buffered and
written as a new part when ``flush()`` is called (the application does so before
it commits or checkpoints) or when ``max_buffered_rows`` are waiting, so memory
stays bounded however many dead letters a run has, and nothing is rewritten.

The results sink flushes this one before every summary append (a summary row never
counts dead letters that are not on disk), so a run with a steady trickle of bad input
would write a part a second: as the summary's parts, ``FANOUT`` trailing parts of one
size class (log base ``FANOUT`` of their rows) are merged into one, leaving O(FANOUT log n)
parts.  A merge writes its part before it removes the ones it holds; one interrupted
in between leaves parts inside another's range, which opening the sink removes (and
:func:`~vinestream.connectors.parquet.read_results` skips).

Exactly once across restarts: a part is named by the number of dead letters
before it, and a checkpoint records how many were durable when it was taken;
restoring it calls :meth:`rollback` with that number, which removes the parts
written after the checkpoint (the restarted worker writes those dead letters
again, as it re-reads their messages).  The Kafka dead-letter topic is
:class:`~vinestream.connectors.kafka.KafkaDeadLetterSink` (at least once there:
its key ``topic:partition:offset`` identifies a repeat).
"""
from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA

from .base import remove_stale_temp_files
from .parquet import DEAD_PART, FANOUT, nested_parts, size_class, write_atomic

log = logging.getLogger(__name__)


class ParquetDeadLetterSink:
    """Rejected events with reason and source position, appended as parts under ``out_dir/dead_letter.parquet``.

    Opening the sink also removes temporary files that killed writers left in ``out_dir``.
    """

    DEAD = "dead_letter.parquet"

    def __init__(self, out_dir: str | os.PathLike, *, max_buffered_rows: int = 100_000,
                 interval_s: float | None = None, clock=None):
        # interval_s=0 (the rewritten-file API of earlier versions) means "durable after every write"
        if interval_s == 0:
            max_buffered_rows = 1
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        removed = remove_stale_temp_files(out_dir)
        if removed:
            log.info("removed %d temporary file(s) left by killed writers in %s", removed, out_dir)
        self.path = out_dir / self.DEAD
        if self.path.is_file():              # the single-file layout of earlier versions: becomes part 0
            old = pq.read_table(self.path)
            tmp = out_dir / f".{self.DEAD}.{os.getpid()}.old"
            os.replace(self.path, tmp)
            self.path.mkdir()
            os.replace(tmp, self.path / f"part-{0:015d}-{old.num_rows:09d}.parquet")
        self.max_buffered_rows = max_buffered_rows
        self._buffer: list[pa.Table] = []
        self._buffered = 0
        parts = [(first, first + n, path) for first, n, path in self._parts()]
        for path in nested_parts(parts):            # left by an interrupted merge: the merged part holds them
            path.unlink()
        self.durable = max((first + n for first, n, _ in self._parts()), default=0)

    def _parts(self):
        if not self.path.is_dir():           # created with the first part: a clean run leaves nothing
            return
        for p in self.path.iterdir():
            m = DEAD_PART.match(p.name)
            if m:
                yield int(m.group(1)), int(m.group(2)), p

    @property
    def rows(self) -> int:
        """Dead letters handed to the sink so far (durable or buffered), the restored ones included."""
        return self.durable + self._buffered

    def write(self, table: pa.Table) -> None:
        if table is None or table.num_rows == 0:
            return
        self._buffer.append(table.select(DEAD_LETTER_SCHEMA.names).cast(DEAD_LETTER_SCHEMA))
        self._buffered += table.num_rows
        if self._buffered >= self.max_buffered_rows:
            self.flush()

    def flush(self) -> None:
        """Write what is buffered as one new part (atomically, fsynced)."""
        if not self._buffered:
            return
        table = pa.concat_tables(self._buffer)
        self.path.mkdir(exist_ok=True)
        write_atomic(table, self._part_path(self.durable, table.num_rows))
        self.durable += table.num_rows
        self._buffer, self._buffered = [], 0
        self._merge_tail()

    def _part_path(self, first: int, rows: int) -> Path:
        return self.path / f"part-{first:015d}-{rows:09d}.parquet"

    def _merge_tail(self) -> None:
        """``FANOUT`` trailing parts of one size class become one part (the module docstring)."""
        parts = sorted(self._parts())
        while len(parts) >= FANOUT:
            tail = parts[-FANOUT:]
            if len({size_class(n) for _, n, _ in tail}) != 1:
                return
            first, rows = tail[0][0], sum(n for _, n, _ in tail)
            merged = self._part_path(first, rows)
            write_atomic(pa.concat_tables([pq.read_table(p).cast(DEAD_LETTER_SCHEMA) for *_, p in tail]), merged)
            for *_, p in tail:
                if p != merged:
                    p.unlink()
            parts[-FANOUT:] = [(first, rows, merged)]

    def rollback(self, rows: int) -> None:
        """Keep exactly the first ``rows`` dead letters (a restored checkpoint's count); drop the rest."""
        self._buffer, self._buffered = [], 0
        for first, n, path in sorted(self._parts()):
            if first >= rows:
                path.unlink()
            elif first + n > rows:           # a part across the cut (not written by this loop; be safe)
                write_atomic(pq.read_table(path).slice(0, rows - first), path)
                shutil.move(path, self.path / f"part-{first:015d}-{rows - first:09d}.parquet")
        self.durable = max((first + n for first, n, _ in self._parts()), default=0)

    def table(self) -> pa.Table | None:
        """Every durable dead letter, in order (None when there is none)."""
        parts = sorted(self._parts())
        if not parts:
            return None
        return pa.concat_tables([pq.read_table(p).cast(DEAD_LETTER_SCHEMA) for *_, p in parts])

    def close(self) -> None:
        self.flush()
