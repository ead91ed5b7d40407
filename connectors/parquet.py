"""Parquet replay of recorded event logs, and the Parquet results sink.

DESIGN.md, "The worker": ``vinestream replay LOG.parquet`` streams a recorded
log (``pyarrow.dataset`` streaming scan, batches by event count or by ``ts``
windows, optional pacing ``--speed``).  DESIGN.md, "Export and monitoring":
the results directory layout is a contract::

    OUT/summary.parquet          one row per epoch
    OUT/<job>/epoch=<n>.parquet  the job's full output at that epoch
    OUT/dead_letter.parquet      rejected events with reason and source position
"""
from __future__ import annotations

import datetime as _dt
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from vinestream.stream.events.validate import validate

from .base import Polled

__all__ = ["ParquetResultsSink", "ReplayBatch", "ReplaySource", "RewrittenTable", "write_atomic"]

DEFAULT_BATCH_SIZE = 100_000
_SCAN_BATCH = 65_536


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

    @property
    def position(self) -> tuple[str, int, int]:
        return (self.file, self.first_row, self.last_row)

    @property
    def num_rows(self) -> int:
        return self.last_row - self.first_row + 1


def _files(paths) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(str(f) for f in p.rglob("*.parquet") if f.is_file())
        elif p.exists():
            out.append(str(p))
        else:
            raise FileNotFoundError(f"no such replay log: {p}")
    if not out:
        raise FileNotFoundError(f"no Parquet files in {list(map(str, paths))}")
    return out


def _ts_ms(table: pa.Table) -> np.ndarray | None:
    """``ts`` as float milliseconds (NaN where null or unreadable), or None if there is no ts."""
    if "ts" not in table.column_names:
        return None
    col = table.column("ts")
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_timestamp(col.type):
        mul = {"s": 1000.0, "ms": 1.0, "us": 1e-3, "ns": 1e-6}[col.type.unit]
        vals = pc.cast(col.view(pa.int64()), pa.float64())
    elif pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
        mul, vals = 1.0, pc.cast(col, pa.float64())
    else:
        return np.full(len(col), np.nan)
    return np.asarray(pc.fill_null(vals, np.nan).to_numpy(zero_copy_only=False)) * mul


class ReplaySource:
    """Stream one or more event Parquet files (or a directory of them) as validated batches.

    - ``batch_size``: rows per batch (default 100,000 when no ``window`` is given);
    - ``window``: a ``datetime.timedelta``; a batch holds the events of one ``ts`` window,
      windows aligned to multiples of ``window`` since the epoch.  Late events (ts below the
      current window) join the current window, so an unsorted log still gives few batches;
      with ``batch_size`` too, a window is further cut into batches of at most that size;
    - ``speed``: pacing against ``ts`` (10.0 = ten times real time): a batch is released
      when the scaled clock passes its last event (size batches) or its window end.

    Reading is a streaming ``pyarrow.dataset`` scan (``_SCAN_BATCH`` rows at a time);
    ``total_rows`` comes from the Parquet footers (for a progress bar).  ``clock`` / ``sleep``
    may be replaced (tests use a fake clock).  ``start`` = (file, row) skips everything before
    that row of that file (resume after a checkpoint).
    """

    def __init__(self, paths, *, batch_size: int | None = None, window: _dt.timedelta | None = None,
                 speed: float | None = None, start: tuple[str, int] | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if window is not None and window.total_seconds() <= 0:
            raise ValueError("window must be positive")
        if speed is not None and speed <= 0:
            raise ValueError("speed must be positive")
        self.files = _files(paths)
        self.batch_size = batch_size if (batch_size or window) else DEFAULT_BATCH_SIZE
        self.window_ms = None if window is None else window.total_seconds() * 1000.0
        self.speed = speed
        self.start = start
        self.clock, self.sleep = clock, sleep
        self.rows_per_file = [pq.ParquetFile(f).metadata.num_rows for f in self.files]
        self.total_rows = int(sum(self.rows_per_file))
        self._t0_ts: float | None = None      # first event time (ms) of the replay
        self._t0_wall: float | None = None
        self._batches: Iterator[ReplayBatch] | None = None    # the stream behind poll()
        self._done = False
        self.consumed = 0                     # rows read so far, over all files (progress, lag)

    def __len__(self) -> int:
        return self.total_rows

    # -- scanning ----------------------------------------------------------------------------
    def _scan(self, path: str) -> Iterator[pa.Table]:
        dataset = ds.dataset(path, format="parquet")
        for batch in dataset.to_batches(batch_size=_SCAN_BATCH):
            if batch.num_rows:
                yield pa.Table.from_batches([batch])

    def _cuts(self, path: str, skip: int) -> Iterator[tuple[pa.Table, int, float]]:
        """(rows, first row, due ts in ms or NaN) for each batch of one file."""
        pending: list[pa.Table] = []
        pending_rows = 0
        row = 0                   # file row of pending[0]'s first row
        current = -np.inf         # current window index (running max)
        for table in self._scan(path):
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
                    yield out, row, self._max_ts(out)
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
        if pending_rows:
            merged = pa.concat_tables(pending)
            due = (current + 1) * self.window_ms if self.window_ms is not None else self._max_ts(merged)
            yield from self._split(merged, row, due) if self.window_ms is not None \
                else iter([(merged, row, due)])

    def _split(self, merged: pa.Table, row: int, due: float):
        """Cap a window's batch at batch_size rows (all pieces share the window's due time)."""
        if not self.batch_size or merged.num_rows <= self.batch_size:
            yield merged, row, due
            return
        for lo in range(0, merged.num_rows, self.batch_size):
            yield merged.slice(lo, self.batch_size), row + lo, due

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
            self.sleep(wait)

    # -- the stream --------------------------------------------------------------------------
    def __iter__(self) -> Iterator[ReplayBatch]:
        started = self.start is None
        for path in self.files:
            skip = 0
            if not started:
                if os.path.abspath(path) != os.path.abspath(self.start[0]):
                    continue
                started, skip = True, int(self.start[1])
            for rows, first, due in self._cuts(path, skip):
                last = first + rows.num_rows - 1
                events, dead = validate(rows, source=path,
                                        positions=np.arange(first, last + 1, dtype=np.int64))
                self._pace(rows, due)
                yield ReplayBatch(events, dead, path, first, last)

    # -- the source contract (connectors/base.py) ----------------------------------------------
    commits = False          # nothing to commit: a checkpoint's positions are where a replay resumes
    pausable = False         # the loop waits instead of polling while batches are in flight
    whole_batches = True     # every poll is one batch, cut by size or event-time window

    def seek(self, positions: dict) -> None:
        """Resume after checkpointed ``positions`` ({(file, 0): next row}): the latest file named wins."""
        by_path = {os.path.abspath(str(key[0])): int(row) for key, row in positions.items()}
        for path in reversed(self.files):
            if os.path.abspath(path) in by_path:
                self.start = (path, by_path[os.path.abspath(path)])
                self.consumed = self._rows_before(path) + self.start[1]
                return

    def _rows_before(self, path: str) -> int:
        return int(sum(self.rows_per_file[:self.files.index(path)]))

    def poll(self, max_records: int | None = None, timeout: float = 0.0) -> Polled:
        """The next batch of the log (``max_records`` and ``timeout`` do not apply: batches are cut here)."""
        if self._batches is None:
            self._batches = iter(self)
        t0 = time.perf_counter()
        batch = next(self._batches, None)
        if batch is None:
            self._done = True
            return Polled.nothing()
        self.consumed = self._rows_before(batch.file) + batch.last_row + 1
        return Polled(batch.events, batch.dead, {(batch.file, 0): batch.last_row + 1}, messages=batch.num_rows,
                      decode_seconds=time.perf_counter() - t0)

    def at_end(self) -> bool:
        return self._done

    def commit(self, positions: dict) -> bool:
        return True

    def lag(self) -> dict:
        """Rows of the logs not yet read, as one pseudo-partition."""
        return {("replay", 0): self.total_rows - self.consumed}

    def assignment(self) -> set:
        return {(f, 0) for f in self.files}

    def pause(self) -> None:
        pass

    def resume(self) -> None:
        pass

    def is_paused(self) -> bool:
        return False

    def close(self) -> None:
        self._batches = None


# =============================================================================================
# results sink
def write_atomic(table: pa.Table, path: str | os.PathLike, **kwargs) -> None:
    """Write a Parquet file so that ``path`` is always absent or complete (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pq.write_table(table, tmp, **kwargs)
    with open(tmp, "rb") as fh:       # durable before it becomes visible
        os.fsync(fh.fileno())
    os.replace(tmp, path)


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


class ParquetResultsSink(RewrittenTable):
    """Per-epoch results under ``out_dir`` in the DESIGN.md layout: ``summary.parquet`` and job outputs.

    Job outputs are written at once (one file per job per epoch, atomically).  ``summary.parquet``
    holds every row so far (see :class:`RewrittenTable` for when it is rewritten); the loop
    calls ``flush()`` before it commits source positions or checkpoints.
    ``summary_interval_s=0`` rewrites after every epoch.

    Restart: an existing summary is loaded, and re-writing an epoch that the summary already
    has (replay from the last checkpoint) drops that epoch and all later ones first, so the
    summary stays one row per epoch.
    """

    SUMMARY = "summary.parquet"

    def __init__(self, out_dir: str | os.PathLike, *, summary_interval_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        super().__init__(self.out_dir / self.SUMMARY, summary_interval_s, clock)
        self._rows: list[dict] = []
        if self.path.exists():
            self._rows = pq.read_table(self.path).to_pylist()

    @property
    def summary_path(self) -> Path:
        return self.path

    def job_path(self, job: str, epoch: int) -> Path:
        return self.out_dir / job / f"epoch={int(epoch)}.parquet"

    def write(self, result, *, invalid: int | None = None, offsets: dict | None = None) -> None:
        """One epoch (a ``BatchResult``): its job outputs now, its summary row on the next rewrite."""
        epoch = int(result.epoch)
        for job, table in (result.job_outputs or {}).items():
            write_atomic(table, self.job_path(job, epoch))
        summary = result.summary_row(invalid=invalid, offsets=offsets)
        if self._rows and self._rows[-1].get("epoch", -1) >= epoch:
            self._rows = [r for r in self._rows if r.get("epoch", -1) < epoch]
        row = {"epoch": epoch}
        row.update({k: _scalar(v) for k, v in summary.items() if k != "epoch"})
        self._rows.append(row)
        self.changed()

    def table(self) -> pa.Table:
        """All summary rows as a table: the union of the keys seen, nulls where a row lacks one."""
        if not self._rows:
            return pa.table({"epoch": pa.array([], pa.int64())})
        names = list(dict.fromkeys(k for r in self._rows for k in r))
        return pa.table({k: pa.array([r.get(k) for r in self._rows]) for k in names})

    summary_table = table

    def close(self) -> None:
        self.flush()
