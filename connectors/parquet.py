"""Parquet replay of recorded event logs, and the Parquet results sink.

DESIGN.md, "The worker": ``vinestream replay LOG.parquet`` streams a recorded
log (``pyarrow.dataset`` streaming scan, batches by event count or by ``ts``
windows, optional pacing ``--speed``).  DESIGN.md, "Export and monitoring":
the results directory layout is a contract (hive-partitioned, so ``pyarrow.dataset``,
pandas, DuckDB and Spark read it as datasets)::

    OUT/summary.parquet/part-<first>-<last>.parquet   one row per epoch, appended as part files
    OUT/<job>/epoch=<n>/part-0.parquet                the job's output at epoch n
    OUT/dead_letter.parquet                           rejected events with reason and source position
    OUT/_run.json                                     what wrote it (structure, jobs, options)

:func:`read_results` reads it all back as Arrow tables.
"""
from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import math
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from vinestream.stream.events.cudf_decode import device_readable, validate_frame
from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA, EVENT_SCHEMA
from vinestream.stream.events.validate import parse_ts, validate

from .base import Polled, add_rejected, error_text, naming_file, position_offset, table_of_rows

__all__ = ["ParquetResultsSink", "ReplayBatch", "ReplaySource", "RewrittenTable", "clear_results", "read_results",
           "results_in", "write_atomic", "written_results"]

DEFAULT_BATCH_SIZE = 100_000
_SCAN_BATCH = 65_536
#: rows (events and dead letters) a replay's reader thread keeps decoded ahead of the loop, at most (and
#: at least one batch): ``vinestream replay``'s default (``ReplaySource(read_ahead_rows=...)``)
READ_AHEAD_ROWS = 1_000_000


# =============================================================================================
# replay
@dataclass
class ReplayBatch:
    """One replay micro-batch: valid events, dead letters, and where in the log it came from.

    Rows ``first_row..last_row`` (inclusive, 0-based) of ``file``.  A batch never spans two
    files, so (file, last_row) is a complete resume position.
    """
    events: pa.Table
    dead: pa.Table
    file: str
    first_row: int
    last_row: int
    #: seconds ``--speed`` waited for the batch's event time: no decode work, so the decode time leaves it out
    paced: float = 0.0

    @property
    def position(self) -> tuple[str, int, int]:
        return (self.file, self.first_row, self.last_row)

    @property
    def num_rows(self) -> int:
        return self.last_row - self.first_row + 1


@dataclass
class _Unreadable:
    """Where a log stops being readable: the row group, its first row, and what reading it raised."""
    path: str
    group: int
    first_row: int
    rows: int
    cause: BaseException

    def error(self) -> ValueError:
        """One line (a user's file, not a bug): which rows cannot be read, and that those before them were."""
        return ValueError(f"{self.path}: row group {self.group} (rows {self.first_row:,} to "
                          f"{self.first_row + self.rows - 1:,}) cannot be read ({error_text(self.cause)}); "
                          f"the rows before it were replayed. Write the file again (e.g. from its "
                          "source with vinestream convert) and replay it with --overwrite")


def _row_groups_from(path: str, row: int, cause: BaseException) -> Iterator[pa.Table | _Unreadable]:
    """The rows of ``path`` from ``row`` on, one row group at a time, to the first that cannot be read, then
    an :class:`_Unreadable` for it (``cause``, the scan's error, where even the footer fails)."""
    try:
        pf = pq.ParquetFile(path)
    except (OSError, pa.ArrowException):
        yield _Unreadable(path, 0, row, 1, cause)
        return
    meta, first = pf.metadata, 0
    for group in range(meta.num_row_groups):
        rows = meta.row_group(group).num_rows
        if first + rows > row:
            try:
                table = pf.read_row_group(group, columns=pf.schema_arrow.names)
            except (OSError, pa.ArrowException) as exc:
                yield _Unreadable(path, group, first, rows, exc)
                return
            if table.num_rows > max(0, row - first):
                yield table.slice(max(0, row - first))
        first += rows
    # every row group read alone: the scan's failure was elsewhere (say so rather than end quietly)
    yield _Unreadable(path, meta.num_row_groups - 1, max(0, first - 1), 1, cause)


def log_fingerprint(path) -> str:
    """A Parquet log's identity: its size and a digest of its footer (the schema, every row group's rows, byte
    offsets and column statistics), read from the end of the file without reading its rows.  The same file copied
    or moved keeps it; one written again with other rows, or cut short, does not."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(size - 8)
        length = int.from_bytes(f.read(4), "little")        # the footer's length, then the magic b"PAR1"
        f.seek(max(0, size - 8 - length))
        footer = f.read(length)
    return f"{size}:{hashlib.sha256(footer).hexdigest()[:32]}"


def _name_key(path: str):
    """Names in their natural order: digit runs by value, so that ``part-2`` comes before ``part-10``."""
    parts = re.split(r"(\d+)", path)
    return [int(t) if i % 2 else t for i, t in enumerate(parts)], path


def directory_logs(directory) -> list[str]:
    """The Parquet files under ``directory``, in the order a replay applies them: by path, numbers in names by
    value.  By plain string order pyarrow's ``write_dataset`` output (``part-0`` ... ``part-10``, ``part-11``, ...)
    replayed ``part-10`` before ``part-2``, and a delete before the add it undoes; zero-padded and dated names keep
    their order either way."""
    return sorted((str(f) for f in Path(directory).rglob("*.parquet") if f.is_file()), key=_name_key)


def _files(paths) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += directory_logs(p)
        elif p.exists():
            out.append(str(p))
        else:
            raise FileNotFoundError(f"no such replay log: {p}")
    if not out:
        raise FileNotFoundError(f"no Parquet files in {list(map(str, paths))}")
    return out


def _ts_ms(table: pa.Table) -> np.ndarray | None:
    """``ts`` as float milliseconds (NaN where null or unreadable), or None if there is no ts.

    Read by the validation's own parser, so that windows and pacing see exactly the event times the events get:
    a text column's times (which the events keep) count, and a time the validation rejects (past the year 2200,
    past int64 once in ms) is NaN - its row is a ``bad_timestamp`` dead letter, and as a window's time it would
    have put every later row of the file into its window, or slept the paced replay for centuries."""
    if "ts" not in table.column_names:
        return None
    ms, null, bad = parse_ts(table.column("ts"), table.num_rows)
    return np.where(null | bad, np.nan, ms.astype(np.float64))


class ReplaySource:
    """Stream one or more event Parquet files (or a directory of them) as validated batches.

    - ``batch_size``: rows per batch (default 100,000 when no ``window`` is given);
    - ``window``: a ``datetime.timedelta``; a batch holds the events of one ``ts`` window,
      windows aligned to multiples of ``window`` since the epoch.  Late events (ts below the
      current window) join the current window, so an unsorted log still gives few batches;
      with ``batch_size`` too, a window is further cut into batches of at most that size;
    - ``speed``: pacing against ``ts`` (10.0 = ten times real time): a batch is released
      when the scaled clock passes its last event (size batches) or its window end.

    ``device``: read each row group with ``cudf.read_parquet`` into GPU memory and validate it
    there (``stream/events/cudf_decode.validate_frame``); batches whose rows are all valid events
    reach the pipeline without a host copy, others (and files whose column types the device
    check does not take) are validated on the host, so every row has the outcome it would have
    had.  Size batches only.

    Reading is a streaming ``pyarrow.dataset`` scan (``_SCAN_BATCH`` rows at a time);
    ``total_rows`` comes from the Parquet footers (for a progress bar).  ``clock`` / ``sleep``
    may be replaced (tests use a fake clock).  ``start`` = (file, row) skips everything before
    that row of that file (resume after a checkpoint).

    ``read_ahead_rows``: ``poll`` takes its batches from a reader thread that reads, decodes and
    validates the next batches (in order, at most this many rows queued, at least one batch)
    while the loop applies the current one, and from :meth:`start_reading` on while the pipeline
    is being built (pyarrow's scans and compute release the GIL; what holds it then competes
    with nothing).  0 (the default) reads in ``poll``.  Not with ``speed`` (pacing releases a
    batch at its time) or ``device``.  Each batch is the one ``poll`` would have read, with the
    same rows, outcomes and positions; an error reading it is raised by the ``poll`` that
    reaches it.
    """

    def __init__(self, paths, *, batch_size: int | None = None, window: _dt.timedelta | None = None,
                 speed: float | None = None, start: tuple[str, int] | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] | None = None,
                 device: bool = False, read_ahead_rows: int = 0):
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if window is not None and window.total_seconds() <= 0:
            raise ValueError("window must be positive")
        if speed is not None and speed <= 0:
            raise ValueError("speed must be positive")
        if device and (window is not None or speed is not None):
            raise ValueError("the cuDF replay cuts batches by size only (no window, no speed)")
        self.files = _files(paths)
        self.batch_size = batch_size if (batch_size or window) else DEFAULT_BATCH_SIZE
        self.window_ms = None if window is None else window.total_seconds() * 1000.0
        self.speed = speed
        self.start = start
        # pacing waits on an event, so that a stop ends the wait at once (wake); tests pass a fake clock and sleep
        self._wake = threading.Event()
        self.clock, self.sleep = clock, sleep if sleep is not None else self._wake.wait
        self.rows_per_file = [pq.ParquetFile(f).metadata.num_rows for f in self.files]
        self.fingerprints = [log_fingerprint(f) for f in self.files]
        self.total_rows = int(sum(self.rows_per_file))
        self._t0_ts: float | None = None      # first event time (ms) of the replay
        self._t0_wall: float | None = None
        self._batches: Iterator[ReplayBatch] | None = None    # the stream behind poll()
        self._done = False
        self.consumed = 0                     # rows read so far, over all files (progress, lag)
        self.device = device                  # read with cudf.read_parquet, events stay on the GPU
        self.read_ahead_rows = 0 if (speed is not None or device) else max(0, int(read_ahead_rows))
        self._reader: _Reader | None = None

    def __len__(self) -> int:
        return self.total_rows

    # -- scanning ----------------------------------------------------------------------------
    def _scan(self, path: str) -> Iterator[pa.Table | _Unreadable]:
        """The file's rows in order, as tables; where a part cannot be read (a corrupt page), the readable rows
        before it and then an :class:`_Unreadable` naming the row group.

        The dataset scan reads ahead and raises at the first batch it hands out after a failing read, rows of
        good row groups not handed out yet (a log corrupt in its third row group replayed its first only): the
        rest is read again one row group at a time from the last row handed out."""
        done = 0
        try:
            for batch in ds.dataset(path, format="parquet").to_batches(batch_size=_SCAN_BATCH):
                if batch.num_rows:
                    yield pa.Table.from_batches([batch])
                    done += batch.num_rows
        except (OSError, pa.ArrowException) as exc:
            yield from _row_groups_from(path, done, exc)

    def _cuts(self, path: str, skip: int) -> Iterator[tuple[pa.Table, int, float]]:
        """(rows, first row, due ts in ms or NaN) for each batch of one file."""
        pending: list[pa.Table] = []
        pending_rows = 0
        row = 0                   # file row of pending[0]'s first row
        current = -np.inf         # current window index (running max)
        for table in self._scan(path):
            if isinstance(table, _Unreadable):
                yield from self._last_cuts(pending, row, current)   # the rows before the unreadable part first
                raise table.error()
            if skip and self.window_ms is not None:
                # a resume inside the file: the window the rows before it reached, which a late row after it joins
                # (a window capped at batch_size resumes between its pieces; started from no window, the late row
                # began a window of its own and the batches, so the epochs, differed from the run's that never stopped)
                ts = _ts_ms(table.slice(0, skip))
                if ts is not None and np.isfinite(ts).any():
                    current = max(current, float(np.floor(np.nanmax(ts) / self.window_ms)))
            if skip >= table.num_rows:
                skip -= table.num_rows
                row += table.num_rows
                continue
            if skip:
                table, row, skip = table.slice(skip), row + skip, 0
            if self.window_ms is None:
                pending.append(table)
                pending_rows += table.num_rows
                while pending_rows >= self.batch_size:
                    merged = pa.concat_tables(pending)
                    out = merged.slice(0, self.batch_size)
                    yield out, row, self._due(out)
                    row += self.batch_size
                    rest = merged.slice(self.batch_size)
                    pending, pending_rows = ([rest] if rest.num_rows else []), rest.num_rows
                continue
            # windows: index per row, running max across the file, cut where it rises
            ts = _ts_ms(table)
            idx = np.floor(ts / self.window_ms) if ts is not None else np.full(table.num_rows, np.nan)
            idx = np.where(np.isnan(idx), -np.inf, idx)
            run = np.maximum.accumulate(np.concatenate([[current], idx]))[1:]
            rises = np.flatnonzero(run > np.concatenate([[current], run[:-1]]))
            lo = 0
            for cut in rises:
                if cut > lo or pending_rows:
                    piece = table.slice(lo, cut - lo)
                    merged = pa.concat_tables([*pending, piece])
                    yield from self._split(merged, row, (current + 1) * self.window_ms)
                    row += merged.num_rows
                    pending, pending_rows = [], 0
                lo = cut
                current = run[cut]
            rest = table.slice(lo)
            pending.append(rest)
            pending_rows += rest.num_rows
        yield from self._last_cuts(pending, row, current)

    def _last_cuts(self, pending: list, row: int, current: float) -> Iterator[tuple[pa.Table, int, float]]:
        """:meth:`_cuts`'s batches of the rows still pending where its file's readable rows end (``row``: the file row
        of the first; ``current``: the window index reached)."""
        if not any(t.num_rows for t in pending):          # (a window's rest may be an empty slice)
            return
        merged = pa.concat_tables(pending)
        if self.window_ms is not None:
            yield from self._split(merged, row, (current + 1) * self.window_ms)
        else:
            yield merged, row, self._due(merged)

    def _device_cuts(self, path: str, skip: int) -> Iterator[tuple[object, int]]:
        """(cuDF frame, first row) for each size batch of one file, read one row group at a time."""
        import cudf
        meta = pq.ParquetFile(path).metadata
        columns = [c for c in EVENT_SCHEMA.names if c in meta.schema.names]
        pending: list = []
        pending_rows = 0
        row = 0
        for group in range(meta.num_row_groups):
            rows = meta.row_group(group).num_rows
            if skip >= rows:
                skip, row = skip - rows, row + rows
                continue
            frame = cudf.read_parquet(path, row_groups=[group], columns=columns)
            if skip:
                frame, row, skip = frame.iloc[skip:], row + skip, 0
            pending.append(frame)
            pending_rows += len(frame)
            while pending_rows >= self.batch_size:
                merged = cudf.concat(pending) if len(pending) > 1 else pending[0]
                yield merged.iloc[:self.batch_size], row
                row += self.batch_size
                rest = merged.iloc[self.batch_size:]
                pending, pending_rows = ([rest] if len(rest) else []), len(rest)
        if pending_rows:
            yield (cudf.concat(pending) if len(pending) > 1 else pending[0]), row

    def _device_batches(self, path: str, skip: int) -> Iterator[ReplayBatch]:
        for frame, first in self._device_cuts(path, skip):
            last = first + len(frame) - 1
            events = validate_frame(frame, len(frame))
            if events is not None:
                yield ReplayBatch(events, DEAD_LETTER_SCHEMA.empty_table(), path, first, last)
                continue
            events, dead = validate(frame.to_arrow(preserve_index=False), source=path,
                                    positions=np.arange(first, last + 1, dtype=np.int64))
            yield ReplayBatch(events, dead, path, first, last)

    def _split(self, merged: pa.Table, row: int, due: float):
        """Cap a window's batch at batch_size rows (all pieces share the window's due time)."""
        if not self.batch_size or merged.num_rows <= self.batch_size:
            yield merged, row, due
            return
        for lo in range(0, merged.num_rows, self.batch_size):
            yield merged.slice(lo, self.batch_size), row + lo, due

    def _due(self, table: pa.Table) -> float:
        """When a size batch is due: its latest event time where the replay is paced (``speed``), else NaN
        (nothing reads it; a pass over the batch's times saved)."""
        return self._max_ts(table) if self.speed is not None else float("nan")

    @staticmethod
    def _max_ts(table: pa.Table) -> float:
        ts = _ts_ms(table)
        return float(np.nanmax(ts)) if ts is not None and np.isfinite(ts).any() else float("nan")

    # -- pacing ------------------------------------------------------------------------------
    def _pace(self, rows: pa.Table, due: float) -> None:
        """Sleep until the scaled clock reaches ``due``; time zero is the first event played."""
        if self.speed is None:
            return
        if self._t0_ts is None:
            ts = _ts_ms(rows)
            if ts is None or not np.isfinite(ts).any():
                return
            self._t0_ts, self._t0_wall = float(ts[np.isfinite(ts)][0]), self.clock()
        if not np.isfinite(due):
            return
        wait = self._t0_wall + (due - self._t0_ts) / 1000.0 / self.speed - self.clock()
        if wait > 0:
            # a slow --speed (1e-300) makes waits past what a lock's timeout takes: threading raised OverflowError
            self.sleep(min(wait, threading.TIMEOUT_MAX))

    def wake(self) -> None:
        """End a pacing wait now, and every later one: a stop was requested (SIGTERM), and a wait for the next
        batch's event time (years at a slow ``speed``) must not hold the run.  The batch waited for is handed
        over early; the run drains it and stops."""
        self._wake.set()

    # -- the stream --------------------------------------------------------------------------
    def __iter__(self) -> Iterator[ReplayBatch]:
        started = self.start is None
        for path in self.files:
            skip = 0
            if not started:
                if os.path.abspath(path) != os.path.abspath(self.start[0]):
                    continue
                started, skip = True, int(self.start[1])
            if self.device and device_readable(pq.read_schema(path)):
                yield from self._device_batches(path, skip)
                continue
            for rows, first, due in self._cuts(path, skip):
                last = first + rows.num_rows - 1
                events, dead = validate(rows, source=path,
                                        positions=np.arange(first, last + 1, dtype=np.int64))
                t0 = time.perf_counter()
                self._pace(rows, due)
                yield ReplayBatch(events, dead, path, first, last, paced=time.perf_counter() - t0)

    # -- the source contract (connectors/base.py) ----------------------------------------------
    commits = False          # nothing to commit: a checkpoint's positions are where a replay resumes
    pausable = False         # the loop waits instead of polling while batches are in flight
    whole_batches = True     # every poll is one batch, cut by size or event-time window

    def seek(self, positions: dict) -> None:
        """Resume after checkpointed ``positions`` ({(file, 0): next row}): the latest file named wins."""
        self.close()                          # a reader started before the seek read from the old start
        by_path: dict[str, int] = {}
        for key, row in positions.items():     # a checkpoint of an older version may name one log twice
            path = os.path.abspath(str(key[0]))   # (relative, and absolute since a resume): the later row wins
            by_path[path] = max(by_path.get(path, 0), int(row))
        if not by_path:
            return
        named = [os.path.abspath(f) for f in self.files]
        unread = sorted(set(by_path) - set(named))
        # every log of the checkpoint must be one of this replay's (more may follow them): with one left out the
        # replay went on from the other logs' rows on a graph holding its events, as if it were there
        if unread:
            raise ValueError(f"the checkpoint is of a replay of {', '.join(sorted(by_path))}, which this replay "
                             f"({', '.join(self.files)}) does not read: replay the same log(s), in the same order "
                             "(more may follow them), or use another --checkpoint-dir")
        last = max(i for i, p in enumerate(named) if p in by_path)
        # the logs before the last one the checkpoint read must be exactly its other logs, each read to its end:
        # a log given before it that it never read (or only partly) was skipped, its rows never applied (a replay
        # of [a, b] stopped in a or b, resumed as [b, a], went on after a and never read b or b's rest).  Logs read
        # whole may come in any order: their rows are all in the checkpoint, the resume reads none of them again
        skipped = [f"{self.files[i]} ({f'read to row {by_path[p]} of {n}' if p in by_path else 'not read'})"
                   for i, (p, n) in enumerate(zip(named[:last], self.rows_per_file)) if by_path.get(p, -1) < n]
        if skipped:
            raise ValueError(f"this replay ({', '.join(self.files)}) gives {', '.join(skipped)} before "
                             f"{self.files[last]}, but the checkpoint read {self.files[last]} first: replay the logs "
                             "in the order the checkpoint read them (more may follow them), or use another "
                             "--checkpoint-dir")
        path = self.files[last]
        self.start = (path, by_path[named[last]])
        self.consumed = self._rows_before(path) + self.start[1]

    def identity(self) -> dict:
        """Each log's fingerprint (:func:`log_fingerprint`) by absolute path: a checkpoint keeps it with the
        positions, which are row numbers in these very files."""
        return {os.path.abspath(f): fp for f, fp in zip(self.files, self.fingerprints)}

    def check_identity(self, saved: dict | None, positions: dict) -> None:
        """Refuse to resume in a log that is not the file the checkpoint read: ``saved`` is the checkpoint's
        :meth:`identity`, ``positions`` its positions.  A log replaced since (``convert`` run again to the same
        output, say) resumed at the old row number of the new file: the graph held the old file's first rows and
        the new file's last ones, and the run ended with exit 0.  Checkpoints older than the fingerprints carry
        none: then only a log shorter than its position is refused."""
        here = {os.path.abspath(f): (fp, rows) for f, fp, rows in zip(self.files, self.fingerprints,
                                                                      self.rows_per_file)}
        for key, row in positions.items():
            path = os.path.abspath(str(key[0]))
            if path not in here:
                continue                  # not this replay's: seek says so
            fingerprint, rows = here[path]
            before = (saved or {}).get(path)
            if before is not None and before != fingerprint:
                raise ValueError(f"{path} is not the file the checkpoint read (it changed since: another size or "
                                 "footer); resuming would mix the two files' rows: replay the log the checkpoint "
                                 "read, or start again with --overwrite (or another --checkpoint-dir)")
            if int(position_offset(row)) > rows:
                raise ValueError(f"{path} has {rows:,} rows, but the checkpoint read {int(position_offset(row)):,} "
                                 "of it: it is not the file the checkpoint read; replay that log, or start again "
                                 "with --overwrite (or another --checkpoint-dir)")

    def _rows_before(self, path: str) -> int:
        return int(sum(self.rows_per_file[:self.files.index(path)]))

    def start_reading(self) -> None:
        """Start the reader thread (``read_ahead_rows``; after any ``seek``): batches are read from now on."""
        if self.read_ahead_rows and self._reader is None and not self._done:
            self._reader = _Reader(iter(self), self.read_ahead_rows)

    def poll(self, max_records: int | None = None, timeout: float = 0.0) -> Polled:
        """The next batch of the log (``max_records`` and ``timeout`` do not apply: batches are cut here)."""
        if self._done:
            return Polled.nothing()
        self.start_reading()
        if self._reader is not None:
            batch, seconds = self._reader.take()      # raises what reading this batch raised
        else:
            if self._batches is None:
                self._batches = iter(self)
            t0 = time.perf_counter()
            try:
                batch = next(self._batches, None)
            except BaseException:
                self._batches = iter(())          # as a generator that raised: nothing after it
                raise
            seconds = time.perf_counter() - t0
        if batch is None:
            self._done = True
            return Polled.nothing()
        self.consumed = self._rows_before(batch.file) + batch.last_row + 1
        # the position names the log by its absolute path: a checkpoint of a replay given a relative path was
        # refused by a resume from another working directory (its path taken against that one) as another log's
        position = {(os.path.abspath(batch.file), 0): batch.last_row + 1}
        return Polled(batch.events, batch.dead, position, messages=batch.num_rows,
                      decode_seconds=max(0.0, seconds - batch.paced))

    def at_end(self) -> bool:
        return self._done

    def commit(self, positions: dict) -> bool:
        return True

    def lag(self) -> dict:
        """Rows of the logs not yet read, as one pseudo-partition."""
        return {("replay", 0): self.total_rows - self.consumed}

    def assignment(self) -> set:
        return {(os.path.abspath(f), 0) for f in self.files}

    def pause(self) -> None:
        pass

    def resume(self) -> None:
        pass

    def is_paused(self) -> bool:
        return False

    def close(self) -> None:
        self._batches = None
        if self._reader is not None:
            self._reader.stop()
            self._reader = None


class _Reader:
    """A thread that runs a batch iterator ahead of its consumer: batches in order, at most ``rows`` rows
    queued (and always one batch); an exception ends the stream and is raised by the ``take`` that reaches
    it, after the batches read before it."""

    def __init__(self, batches: Iterator[ReplayBatch], rows: int):
        self._batches = batches
        self._limit = max(1, int(rows))
        self._queue: list = []               # (batch or None at the end, seconds, exception or None)
        self._rows = 0                       # rows of the queued batches
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="vinestream-replay-reader", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            t0 = time.perf_counter()
            try:
                batch, error = next(self._batches, None), None
            except BaseException as exc:     # raised to the consumer, in its place in the stream
                batch, error = None, exc
            seconds = time.perf_counter() - t0
            rows = batch.num_rows if batch is not None else 0
            with self._cond:
                while self._queue and self._rows + rows > self._limit and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                self._queue.append((batch, seconds, error))
                self._rows += rows
                self._cond.notify_all()
            if batch is None:
                return

    def take(self) -> tuple[ReplayBatch | None, float]:
        """The next batch (None at the end) and the seconds its reading took."""
        with self._cond:
            while not self._queue:
                self._cond.wait()
            batch, seconds, error = self._queue[0]
            if batch is not None:
                self._queue.pop(0)
                self._rows -= batch.num_rows
                self._cond.notify_all()
            elif error is not None:
                self._queue[0] = (None, 0.0, None)      # raised once; the stream ends after it
        if error is not None:
            raise error
        return batch, seconds

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._queue.clear()
            self._cond.notify_all()
        self._thread.join(timeout=5.0)


# =============================================================================================
# results sink
def write_atomic(table: pa.Table, path: str | os.PathLike, *, durable: bool = True, **kwargs) -> None:
    """Write a Parquet file so that ``path`` is always absent or complete (temp file + rename).

    ``durable=False`` skips the fsync before the rename: the file is complete for every
    reader, but only the caller's later :func:`fsync_paths` makes it survive a power loss
    (a sink that syncs a whole batch of files once, before a commit, instead of each file).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with naming_file(path):
            pq.write_table(table, tmp, **kwargs)
            if durable:
                _fsync(tmp)               # durable before it becomes visible
    except OSError:
        tmp.unlink(missing_ok=True)       # a partial file on a full disk holds space the run no longer needs
        raise
    os.replace(tmp, path)


def _write_output(outputs: Mapping, job: str, path) -> None:
    """Job ``job``'s table of ``outputs`` written atomically (on the results sink's writer thread).  Vertex ids
    and values are high-cardinality columns, so dictionary encoding only costs time (2.6x the write time of a
    25k-row output)."""
    write_atomic(outputs[job], path, durable=False, use_dictionary=False)


def _fsync(path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


#: from this many files on, fsync_paths syncs their file systems (one ``syncfs`` each) instead of each file
SYNCFS_FILES = 8


def _syncfs_call():
    """Linux's ``syncfs(2)`` through the C library, or None where there is none."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.syncfs if hasattr(libc, "syncfs") else None
    except OSError:
        return None


_SYNCFS = _syncfs_call()


def _syncfs(path) -> bool:
    """Flush the file system holding ``path`` (its data and metadata, renames included); False where the call is
    missing or fails (the caller then fsyncs file by file)."""
    if _SYNCFS is None:
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        return _SYNCFS(fd) == 0
    finally:
        os.close(fd)


def fsync_paths(paths) -> None:
    """Make each file of ``paths`` that still exists durable (a later ``keep_epochs`` may have removed some).

    A replay's flush covers a file per job and epoch (153 for a 51-epoch replay with three jobs), and an fsync
    each commits the file system's journal each time (50-60 ms for 153 small files here, against 12-18 ms for
    one ``syncfs``), so from SYNCFS_FILES files on each file system holding them is synced once; fewer files, or
    where ``syncfs`` is missing, are fsynced one by one."""
    existing = [Path(p) for p in paths if os.path.exists(p)]
    if len(existing) >= SYNCFS_FILES:
        devices = {}
        for path in existing:
            try:
                devices.setdefault(os.stat(path).st_dev, path)
            except FileNotFoundError:
                pass
        if all(_syncfs(path) for path in devices.values()):
            return
    for path in existing:
        try:
            _fsync(path)
        except FileNotFoundError:
            pass


def _scalar(v):
    """Plain Python scalar for a summary cell (NumPy / CuPy scalars and 0-d arrays included)."""
    if hasattr(v, "item") and getattr(v, "ndim", 0) == 0 and not isinstance(v, (str, bytes)):
        return v.item()
    return v


class RewrittenTable:
    """A Parquet file holding every row so far, rewritten whole and atomically (temp file + rename).

    Rewrites are throttled for long runs: one happens when at least ``interval_s`` seconds
    have passed since the previous one (the first at once), and that interval stretches
    to ``5 x`` the last rewrite's duration, so rewriting costs at most about a sixth of
    the run time however long the file grows.  ``flush()`` always rewrites what is new.
    """

    def __init__(self, path: Path, interval_s: float, clock: Callable[[], float]):
        self.path, self.interval_s, self.clock = path, interval_s, clock
        self._dirty = False
        self._last_write: float | None = None
        self._last_cost = 0.0
        self.rewrites = 0

    def changed(self) -> None:
        self._dirty = True
        now = self.clock()
        interval = max(self.interval_s, 5.0 * self._last_cost)
        if self.interval_s <= 0 or self._last_write is None or now - self._last_write >= interval:
            self.flush()

    def flush(self) -> None:
        if not self._dirty:
            return
        t = time.perf_counter()
        table = self.table()
        if table is not None:
            write_atomic(table, self.path)
        self._last_cost = time.perf_counter() - t
        self._last_write = self.clock()
        self._dirty = False
        self.rewrites += 1

    def table(self) -> pa.Table | None:
        raise NotImplementedError


#: the summary's ``rss_bytes`` is read at most this often (seconds); rows in between repeat the last reading
RSS_EVERY_S = 0.1
_rss_read = [-math.inf, 0]          # (monotonic time, bytes) of the last reading


def _rss_bytes() -> int:
    """This process's resident memory (Linux /proc; the peak from getrusage elsewhere), read at most every
    RSS_EVERY_S seconds.  Reading /proc gives up the interpreter lock, and the apply thread, which asks for it once
    an epoch, then waits to get it back from the reader and results threads: 51 reads cost a replay 35-70 ms on
    this project's 2-core machine, against 20 us for a read alone (bench-results/2026-11-26-session14)."""
    now = time.monotonic()
    if now - _rss_read[0] >= RSS_EVERY_S:
        _rss_read[:] = [now, _read_rss()]
    return _rss_read[1]


def _read_rss() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


_PART = re.compile(r"^part-(\d{12})-(\d{12})\.parquet$")
_EPOCH_DIR = re.compile(r"^epoch=(\d+)$")
#: trailing summary parts of one size class merged into one (bounds the file count to ~FANOUT * log(rows))
FANOUT = 8


def size_class(rows: int) -> int:
    """The size class of a part of ``rows`` rows: ``FANOUT`` trailing parts of one class merge into one."""
    return int(math.log(max(rows, 1), FANOUT) + 1e-9)


def nested_parts(parts) -> list:
    """The paths of ``parts`` ((first, end, path): a part's range of keys or rows) whose range lies inside another
    part's: left by a merge killed between writing the merged part and removing the parts it holds."""
    return [path for first, end, path in parts
            if any(a <= first and end <= b and (a, b) != (first, end) for a, b, _ in parts)]


class AppendedTable:
    """A Parquet dataset directory that grows by part files, never by rewriting what it holds.

    Parts are named ``part-<first epoch>-<last epoch>.parquet`` (sorted names = epoch order),
    each written atomically.  Every part has the same schema (the union of the rows' keys
    so far), so ``pyarrow.parquet.read_table(dir)`` and ``pandas.read_parquet(dir)`` read
    the whole directory as one table.  A new column (or a wider type) is rare: it merges
    every part into one with the new schema.  Otherwise appends cost only the new rows;
    ``FANOUT`` trailing parts of one size class (log base ``FANOUT`` of their rows) are
    merged into one, so a run of n appends leaves O(FANOUT log n) files and rewrites each row
    O(log n) times.  A part left behind by an interrupted merge (its range inside another
    part's) is removed on open.
    """

    def __init__(self, path: Path, key: str = "epoch"):
        self.path, self.key = Path(path), key
        self.schema: pa.Schema | None = None
        self.parts: list[tuple[int, int, int, Path]] = []     # (first, last, rows, path)
        if self.path.is_file():                                # the single-file layout of earlier versions
            legacy = pq.read_table(self.path)
            os.replace(self.path, self.path.with_name(f".{self.path.name}.legacy"))
            self.path.mkdir(parents=True)
            if legacy.num_rows:
                self.append(legacy)
            os.remove(self.path.with_name(f".{self.path.name}.legacy"))
        self.path.mkdir(parents=True, exist_ok=True)
        self._scan()

    def _scan(self) -> None:
        found = []
        for f in self.path.iterdir():
            m = _PART.match(f.name)
            if m:
                found.append((int(m.group(1)), int(m.group(2)), f))
        found.sort()
        nested = set(nested_parts(found))
        kept = []
        for first, last, f in found:
            if f in nested:
                f.unlink()                                     # merged already: left by an interrupted merge
            else:
                kept.append((first, last, pq.ParquetFile(f).metadata.num_rows, f))
        self.parts = kept
        if kept:
            self.schema = pq.read_schema(kept[0][3])

    @property
    def rows(self) -> int:
        return sum(p[2] for p in self.parts)

    @property
    def last_key(self) -> int | None:
        return self.parts[-1][1] if self.parts else None

    def read(self) -> pa.Table | None:
        if not self.parts:
            return None
        return pa.concat_tables([pq.read_table(p[3]) for p in self.parts], promote_options="permissive")

    def _write_part(self, table: pa.Table) -> tuple[int, int, int, Path]:
        keys = table.column(self.key)
        first, last = int(pc.min(keys).as_py()), int(pc.max(keys).as_py())
        path = self.path / f"part-{first:012d}-{last:012d}.parquet"
        write_atomic(table, path)
        return (first, last, table.num_rows, path)

    def _conform(self, table: pa.Table) -> pa.Table:
        cols = [table.column(f.name).cast(f.type) if f.name in table.column_names
                else pa.nulls(table.num_rows, f.type) for f in self.schema]
        return pa.Table.from_arrays(cols, schema=self.schema)

    def append(self, table: pa.Table) -> None:
        """Add rows (keys above every key already held)."""
        if table.num_rows == 0:
            return
        unified = table.schema if self.schema is None else \
            pa.unify_schemas([self.schema, table.schema], promote_options="permissive")
        if self.schema is not None and not unified.equals(self.schema):
            self._rewrite(unified, extra=table)
            return
        self.schema = unified
        self.parts.append(self._write_part(self._conform(table)))
        self._merge_tail()

    def _rewrite(self, schema: pa.Schema, extra: pa.Table | None = None) -> None:
        """Everything, plus ``extra``, as one part with ``schema`` (its range holds every old part's: a kill before
        they are removed leaves parts that :meth:`_scan` drops)."""
        old = self.parts
        held = self.read()
        self.schema = schema
        tables = [] if held is None else [self._conform(held)]
        if extra is not None:
            tables.append(self._conform(extra))
        table = pa.concat_tables(tables) if tables else None
        self.parts = [self._write_part(table)] if table is not None and table.num_rows else []
        new = {p[3] for p in self.parts}
        for p in old:
            if p[3] not in new:
                p[3].unlink(missing_ok=True)

    def truncate(self, below: int) -> None:
        """Drop every row whose key is >= ``below`` (a restarted run re-writes those epochs).

        The parts wholly past the cut go first, then the one across it (ranges are disjoint) is written again
        without those rows, under its new name, before the old one goes.  A kill at any step leaves parts that
        the next truncate (the first write of the run that resumes) cuts again: a left new part lies inside the
        old one's range, so :meth:`_scan` drops it.  (Merging every part into one first, a kill before the old
        parts went left the merged part beside a part across the cut, and the next truncate kept the rows
        between the cut's part and the cut twice.)
        """
        if not self.parts or self.parts[-1][1] < below:
            return
        while self.parts and self.parts[-1][0] >= below:
            self.parts.pop()[3].unlink(missing_ok=True)
        if self.parts and self.parts[-1][1] >= below:
            path = self.parts[-1][3]
            held = pq.read_table(path)
            self.parts[-1] = self._write_part(held.filter(pc.less(held.column(self.key), below)))
            path.unlink(missing_ok=True)

    def _merge_tail(self) -> None:
        while len(self.parts) >= FANOUT:
            tail = self.parts[-FANOUT:]
            level = size_class(tail[-1][2])
            if any(size_class(p[2]) != level for p in tail):
                return
            merged = pa.concat_tables([pq.read_table(p[3]) for p in tail])
            self.parts[-FANOUT:] = [self._write_part(merged)]
            for p in tail:
                if p[3] != self.parts[-1][3]:
                    p[3].unlink(missing_ok=True)


class ParquetResultsSink:
    """Per-epoch results under ``out_dir`` in the DESIGN.md layout (see the module docstring).

    - Job outputs: ``OUT/<job>/epoch=<n>/part-0.parquet``, written atomically, for epochs that
      are multiples of ``output_every`` (the last epoch's outputs are always written, at
      ``close``; the others are never computed); with ``keep_epochs`` only the newest N epochs
      of each job stay on disk.  The outputs are read (device -> host) by ``write`` and written
      by one background thread, so that encoding and writing a batch's files overlaps the next
      batch's work (Parquet encoding releases the GIL); ``flush()`` waits for those writes and
      fsyncs the files together (the loop calls it before every commit and checkpoint), and a
      failed write raises from the next ``write`` or ``flush``.  At most ``MAX_PENDING`` writes
      are in flight: a slow disk slows the pipeline down instead of holding every output.
    - The summary: one row per epoch (the pipeline's counts, phase milliseconds, job scalars,
      plus ``wall_time`` (Unix seconds) and ``rss_bytes``), appended to ``OUT/summary.parquet/``
      as part files (:class:`AppendedTable`) when ``summary_interval_s`` has passed since the
      last append (by the writer thread, after the job outputs before it, which it fsyncs first:
      the batches do not wait for the disk), and always on ``flush()``, which waits (the loop
      flushes before every commit and checkpoint).  ``summary_interval_s=0`` appends after every
      epoch, before ``write`` returns.  ``before_summary`` (the dead-letter sink's ``flush``) is called on the
      caller's thread before rows are handed to an append: what a row counts is durable before the row is (a run
      killed between the two left a summary counting invalid events that dead_letter.parquet did not hold).

    Restart: re-writing an epoch that the summary already has (a run resumed from its last
    checkpoint) drops that epoch and all later ones first, so the summary stays one row per
    epoch.  A result without counts for the latest epoch (the jobs' final catch-up of a run
    with ``jobs_every`` > 1) adds its job scalars to that epoch's row.
    """

    SUMMARY = "summary.parquet"
    MAX_PENDING = 8                 # job-output writes in flight (a few batches' worth)

    def __init__(self, out_dir: str | os.PathLike, *, summary_interval_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic, keep_epochs: int | None = None,
                 output_every: int = 1, before_summary: Callable[[], None] | None = None):
        if keep_epochs is not None and keep_epochs < 1:
            raise ValueError("keep_epochs must be >= 1")
        if output_every < 1:
            raise ValueError("output_every must be >= 1")
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.summary = AppendedTable(self.out_dir / self.SUMMARY)
        self.interval_s, self.clock = summary_interval_s, clock
        self.keep_epochs, self.output_every = keep_epochs, output_every
        self.before_summary = before_summary
        self._rows: list[dict] = []           # summary rows not yet appended
        self._last_write: float | None = None
        self.rewrites = 0                     # summary appends so far
        self._written: dict[str, list[int]] = {}          # job -> epochs on disk, ascending
        self._held: dict[str, tuple[int, Mapping]] = {}   # job -> (epoch, its job outputs), not written yet
        self._unsynced: list[Path] = []                   # job outputs written since the last flush()
        self._writer: ThreadPoolExecutor | None = None    # the background writes, in order
        self._pending: list[Future] = []                  # those not yet known to have succeeded
        self._queued_epoch = -1                           # the last epoch whose summary row went to the writer
        for job_dir in self.out_dir.iterdir():
            if job_dir.is_dir() and job_dir.name != self.SUMMARY:
                epochs = sorted(int(m.group(1)) for d in job_dir.iterdir() if (m := _EPOCH_DIR.match(d.name)))
                if epochs:
                    self._written[job_dir.name] = epochs

    @property
    def summary_path(self) -> Path:
        return self.summary.path

    path = summary_path

    def job_path(self, job: str, epoch: int) -> Path:
        return self.out_dir / job / f"epoch={int(epoch)}" / "part-0.parquet"

    # -- job outputs --------------------------------------------------------------------------
    def _write_job(self, job: str, epoch: int, outputs: Mapping) -> None:
        # One file per job and epoch, synced by the next flush() (before any commit or checkpoint
        # depends on it) rather than one fsync each.  The table is made on the writer thread: the epoch's
        # outputs were snapshotted (JobOutputs.snapshot), so on a GPU the next batch runs meanwhile
        path = self.job_path(job, epoch)
        snapshot = getattr(outputs, "snapshot", None)
        if snapshot is not None:
            snapshot()                      # once an epoch (later calls return at once)
        self._submit(_write_output, outputs, job, path)
        self._unsynced.append(path)
        epochs = [e for e in self._written.get(job, []) if e != epoch] + [epoch]
        epochs.sort()
        if self.keep_epochs is not None:
            for old in epochs[:-self.keep_epochs]:     # after that epoch's own write (one writer, in order)
                self._submit(shutil.rmtree, self.job_path(job, old).parent, ignore_errors=True)
            epochs = epochs[-self.keep_epochs:]
        self._written[job] = epochs
        self._held.pop(job, None)

    def _submit(self, fn, *args, **kwargs) -> None:
        """Run ``fn`` on the writer thread, after everything submitted before it."""
        if len(self._pending) >= self.MAX_PENDING:
            self._pending.pop(0).result()                 # back-pressure: wait for the oldest
        self._reap()
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vinestream-results")
        self._pending.append(self._writer.submit(fn, *args, **kwargs))

    def _reap(self, block: bool = False) -> None:
        """Forget the finished writes (``block``: wait for all of them); a failed one raises here."""
        while self._pending and (block or self._pending[0].done()):
            self._pending.pop(0).result()

    def write(self, result, *, invalid: int | None = None, offsets: dict | None = None,
              batches: int | None = None) -> None:
        """One epoch (a ``BatchResult``): its job outputs now, its summary row on the next append."""
        self._reap()                                            # a failed background write stops here
        epoch = int(result.epoch)
        outputs = result.job_outputs or {}
        for job in outputs:
            if epoch % self.output_every == 0:
                self._write_job(job, epoch, outputs)
            else:
                # computed only if it is still the newest at close(): the pipeline's JobOutputs are
                # lazy and stay readable until its jobs run again (they refuse to be read after that)
                self._held[job] = (epoch, outputs)
        summary = result.summary_row(invalid=invalid, offsets=offsets, batches=batches)
        extra = {k: _scalar(v) for k, v in summary.items() if k != "epoch"}
        if epoch <= self._queued_epoch:
            self.settle()                    # an amend or a rewind reads the summary: its appends first
        if not result.counts and self._rows and self._rows[-1]["epoch"] == epoch:
            self._rows[-1].update(extra)                        # the jobs' final catch-up
        elif not result.counts and not self._rows and self.summary.last_key == epoch:
            self._amend_last(epoch, extra)
        else:
            if self._rows and self._rows[-1]["epoch"] >= epoch:
                self._rows = [r for r in self._rows if r["epoch"] < epoch]
            if self.summary.last_key is not None and self.summary.last_key >= epoch:
                self.summary.truncate(epoch)
            self._rows.append({"epoch": epoch, **extra, "wall_time": time.time(), "rss_bytes": _rss_bytes()})
        self.changed()

    def add_invalid(self, n: int, batches: int = 0) -> bool:
        """Count ``n`` more invalid events and ``batches`` more batches in the newest epoch's row: batches without a
        valid event read after the last epoch, at the end of the input (no later row will take them).  False
        where the summary has no row yet."""
        if not self._rows:
            self.settle()                   # the newest row may be on its way to a part file
            if self.summary.last_key is None:
                return False
            self._amend_last(self.summary.last_key, {})
        add_rejected(self._rows[-1], n, batches)
        self.changed()
        return True

    def _amend_last(self, epoch: int, extra: dict) -> None:
        table = self.summary.read()
        rows = table.filter(pc.equal(table.column("epoch"), epoch)).to_pylist()
        self.summary.truncate(epoch)
        for row in rows:
            row.update(extra)
        self._rows = rows + self._rows

    def changed(self) -> None:
        now = self.clock()
        if self.interval_s <= 0 or self._last_write is None or now - self._last_write >= self.interval_s:
            # the timed append needs no wait: the writer thread syncs and appends after the writes before it
            # (nothing waits on it but a flush, which waits for every queued write anyway)
            self._flush(wait=self.interval_s <= 0)

    def flush(self) -> None:
        """Append the pending summary rows; the summary and every job output are durable when this returns."""
        self._flush(wait=True)

    def _flush(self, wait: bool) -> None:
        """fsync the job outputs written since the last flush and append the pending summary rows: here
        (``wait``, after every queued write), or queued on the writer thread behind the writes."""
        if self._rows and self.before_summary is not None:
            self.before_summary()           # the dead letters these rows count, durable first (a failure keeps them)
        unsynced, self._unsynced = self._unsynced, []
        # every key of every row: with --jobs-every N a flush may begin at an epoch where the jobs did not run
        table = table_of_rows(self._rows) if self._rows else None
        if table is not None:
            self._queued_epoch = max(self._queued_epoch, int(self._rows[-1]["epoch"]))
            self._rows = []
            self._last_write = self.clock()
            self.rewrites += 1

        def durable():
            fsync_paths(unsynced)
            if table is not None:
                self.summary.append(table)
        if wait:
            self._reap(block=True)
            durable()
        else:
            self._submit(durable)

    def settle(self) -> None:
        """Wait until every queued write and summary append is on disk (appends nothing new; a failed
        write raises here).  The summary is read, truncated or amended only after this."""
        self._reap(block=True)

    def table(self) -> pa.Table:
        """Every summary row so far (appended and pending) as one table."""
        self.settle()
        held = self.summary.read()
        pending = table_of_rows(self._rows) if self._rows else None
        parts = [t for t in (held, pending) if t is not None]
        if not parts:
            return pa.table({"epoch": pa.array([], pa.int64())})
        return pa.concat_tables(parts, promote_options="permissive")

    summary_table = table

    def drop_held(self) -> None:
        """Forget the outputs held back by ``output_every``: ``close`` writes none (a run stopped to be resumed,
        whose last epoch is still to come)."""
        self._held.clear()

    def close(self) -> None:
        for job, (epoch, outputs) in list(self._held.items()):
            if epoch > max(self._written.get(job, [-1])):
                self._write_job(job, epoch, outputs)
        self._held.clear()
        try:
            self.flush()
        finally:
            if self._writer is not None:
                self._writer.shutdown(wait=True)
                self._writer = None


# -- the results directory as datasets ------------------------------------------------------------
RUN_INFO = "_run.json"
DEAD_LETTERS = "dead_letter.parquet"


def results_in(out_dir: str | os.PathLike) -> list[str]:
    """Names of the entries vinestream writes that ``out_dir`` holds (empty: a fresh directory)."""
    out = Path(out_dir)
    if not out.is_dir():
        return []
    names = []
    for entry in sorted(out.iterdir()):
        if entry.name in (ParquetResultsSink.SUMMARY, DEAD_LETTERS):
            names.append(entry.name)
        elif entry.is_dir() and any(_EPOCH_DIR.match(d.name) or d.name.startswith("epoch=")
                                    for d in entry.iterdir()):
            names.append(entry.name + "/")
    return names


def written_results(out_dir: str | os.PathLike) -> list[str]:
    """:func:`results_in` less a summary or dead-letter dataset directory with no part in it: what a run must not
    write over.  The results sink makes the summary's directory when it opens, so a run that wrote no row (its
    brokers out of reach, a stop during start-up) left one, and the same command run again was refused ("already
    holds results (summary.parquet)").  A reader still takes such a directory for a results directory (a live run's
    before its first row)."""
    out = Path(out_dir)
    return [name for name in results_in(out)
            if name not in (ParquetResultsSink.SUMMARY, DEAD_LETTERS) or not (out / name).is_dir()
            or any(not part.name.startswith(".") for part in (out / name).iterdir())]


def clear_results(out_dir: str | os.PathLike) -> list[str]:
    """Remove what :func:`results_in` lists and ``_run.json`` (nothing else in the directory is touched)."""
    out = Path(out_dir)
    names = results_in(out)
    (out / RUN_INFO).unlink(missing_ok=True)
    for name in names:
        path = out / name.rstrip("/")
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    return names


#: reads of a results directory that a live run writes: a part merged (or an epoch pruned) between the listing and
#: the read is gone; the read starts over, listing again
READ_ATTEMPTS = 20


def _while_written(read):
    """``read()``, again while a file it listed is gone by the time it opens it (a run writes the directory: the
    summary's small parts are merged, ``keep_epochs`` removes old epochs).  A reader of a live run's results (the
    report, a dashboard) failed a fifth of its reads during a run's merges with FileNotFoundError."""
    for attempt in range(READ_ATTEMPTS):
        try:
            return read()
        except FileNotFoundError:
            if attempt == READ_ATTEMPTS - 1:
                raise
            time.sleep(0.001 * (attempt + 1))


def read_summary(path: str | os.PathLike) -> pa.Table | None:
    """The summary (a part-file directory, or the single file of earlier versions), without changing it (read
    again if a live run merges its parts meanwhile)."""
    return _while_written(functools.partial(_read_summary, path))


def _read_summary(path: str | os.PathLike) -> pa.Table | None:
    path = Path(path)
    if path.is_file():
        return pq.read_table(path)
    if not path.is_dir():
        return None
    found = sorted((int(m.group(1)), int(m.group(2)), f) for f in path.iterdir() if (m := _PART.match(f.name)))
    nested = set(nested_parts(found))
    kept = [f for _, _, f in found if f not in nested]
    if not kept:
        return None
    return pa.concat_tables([pq.read_table(f) for f in kept], promote_options="permissive")


#: a dead-letter part: ``part-<dead letters before it>-<its rows>.parquet`` (connectors/dead_letters.py)
DEAD_PART = re.compile(r"^part-(\d+)-(\d+)\.parquet$")


def read_dead_letters(path: str | os.PathLike) -> pa.Table:
    """The dead letters at ``path`` (``OUT/dead_letter.parquet``: a directory of parts, or the single file of
    earlier versions) in order; a part that a merge killed half way left inside another is read once."""
    path = Path(path)
    if path.is_file():
        return pq.read_table(path)
    found = sorted((int(m.group(1)), int(m.group(1)) + int(m.group(2)), f)
                   for f in (path.iterdir() if path.is_dir() else ()) if (m := DEAD_PART.match(f.name)))
    nested = set(nested_parts(found))
    tables = [pq.read_table(f).cast(DEAD_LETTER_SCHEMA) for _, _, f in found if f not in nested]
    return pa.concat_tables(tables) if tables else DEAD_LETTER_SCHEMA.empty_table()


def read_results(out_dir: str | os.PathLike, *, epoch: int | str | None = None) -> dict[str, pa.Table]:
    """A results directory as Arrow tables: ``{"summary": ..., "dead_letters": ..., <job>: ...}``.

    Job tables carry an ``epoch`` column (int64) besides the job's own columns; ``epoch``
    selects one epoch (an int, or ``"last"`` for each job's newest).  The summary is sorted by
    epoch.  ``"run"`` holds ``_run.json`` (what wrote the directory) as a one-row table when present.
    A directory holding none of what a run writes there (:func:`results_in`, ``_run.json``) is a ``ValueError``.

    Examples
    --------
    >>> results = read_results("out")                           # doctest: +SKIP
    >>> results["pagerank"].filter(pc.equal(results["pagerank"]["epoch"], 12))   # doctest: +SKIP
    """
    if not isinstance(out_dir, (str, os.PathLike)):       # Path() said "expected str, bytes or os.PathLike object"
        raise TypeError(f"out_dir={out_dir!r:.100}: expected a results directory (a str or os.PathLike path)")
    if epoch is not None and epoch != "last" and (isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer))
                                                  or epoch < 0):
        raise ValueError(f"epoch={epoch!r:.100}: expected an epoch number >= 0, \"last\" or None (every epoch)")
    out = Path(out_dir)
    if not out.is_dir():
        raise FileNotFoundError(f"no results directory {out}")
    if not results_in(out) and not (out / RUN_INFO).is_file():
        # read as empty tables, a mistyped path looked like a run that had read nothing
        raise ValueError(f"{out} is not a results directory: it holds no {ParquetResultsSink.SUMMARY}, "
                         f"{DEAD_LETTERS}, <job>/epoch=<n>/ or {RUN_INFO} (give the --out of a replay or run)")
    return _while_written(functools.partial(_read_results, out, epoch))


def _read_results(out: Path, epoch) -> dict[str, pa.Table]:
    tables: dict[str, pa.Table] = {}
    summary = _read_summary(out / ParquetResultsSink.SUMMARY)        # (read_results retries the whole read)
    tables["summary"] = summary.sort_by("epoch") if summary is not None else \
        pa.table({"epoch": pa.array([], pa.int64())})
    tables["dead_letters"] = read_dead_letters(out / DEAD_LETTERS)
    for job_dir in sorted(p for p in out.iterdir() if p.is_dir() and p.name != ParquetResultsSink.SUMMARY):
        epochs = sorted(int(m.group(1)) for d in job_dir.iterdir() if (m := _EPOCH_DIR.match(d.name)))
        if not epochs:
            continue
        dataset = ds.dataset(job_dir, format="parquet", partitioning="hive")
        wanted = epochs[-1] if epoch == "last" else epoch
        table = dataset.to_table(filter=None if wanted is None else ds.field("epoch") == wanted)
        table = table.set_column(table.schema.get_field_index("epoch"), "epoch", table.column("epoch").cast(pa.int64()))
        tables[job_dir.name] = table.sort_by([("epoch", "ascending"), ("vertex", "ascending")]) \
            if "vertex" in table.column_names else table.sort_by("epoch")
    info = out / RUN_INFO
    if info.exists():
        tables["run"] = pa.Table.from_pylist([{k: json.dumps(v) if isinstance(v, (dict, list)) else v
                                               for k, v in json.loads(info.read_text()).items()}])
    return tables
