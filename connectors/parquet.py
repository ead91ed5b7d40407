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
from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA, empty_dead_letters
from vinestream.stream.events.validate import validate

__all__ = ["ParquetResultsSink", "ReplayBatch", "ReplaySource", "write_atomic"]

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


class ParquetResultsSink:
    """Results and dead letters under ``out_dir`` in the DESIGN.md layout.

    Job outputs are written at once (one file per job per epoch, atomically).  ``summary.parquet``
    and ``dead_letter.parquet`` hold every row so far and are rewritten whole, atomically (temp
    file + rename), so each is a valid Parquet file at every moment.  Rewrites are throttled for
    long runs: a rewrite happens when at least ``summary_interval_s`` seconds have passed since
    the previous one (the first epoch is written at once) and that interval stretches to
    ``5 x`` the last rewrite's duration, so rewriting costs at most about a sixth of the run
    time however long the summary grows.  ``flush()`` and ``close()`` always rewrite; a worker
    calls ``flush()`` before it commits source offsets.  ``summary_interval_s=0`` rewrites
    after every epoch.

    Restart: existing summary / dead-letter files are loaded, and re-writing an epoch that the
    summary already has (replay from the last checkpoint) drops that epoch and all later ones
    first, so the summary stays one row per epoch.
    """

    SUMMARY = "summary.parquet"
    DEAD = "dead_letter.parquet"

    def __init__(self, out_dir: str | os.PathLike, *, summary_interval_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.summary_interval_s = summary_interval_s
        self.clock = clock
        self._rows: list[dict] = []
        self._dead: list[pa.Table] = []
        self._dirty = False
        self._last_write: float | None = None
        self._last_cost = 0.0
        self.rewrites = 0
        summary = self.out_dir / self.SUMMARY
        if summary.exists():
            self._rows = pq.read_table(summary).to_pylist()
        dead = self.out_dir / self.DEAD
        if dead.exists():
            self._dead = [pq.read_table(dead).cast(DEAD_LETTER_SCHEMA)]

    @property
    def summary_path(self) -> Path:
        return self.out_dir / self.SUMMARY

    @property
    def dead_letter_path(self) -> Path:
        return self.out_dir / self.DEAD

    def job_path(self, job: str, epoch: int) -> Path:
        return self.out_dir / job / f"epoch={int(epoch)}.parquet"

    def write_epoch(self, epoch: int, summary: dict, job_outputs: dict[str, pa.Table] | None = None) -> None:
        epoch = int(epoch)
        for job, table in (job_outputs or {}).items():
            write_atomic(table, self.job_path(job, epoch))
        if self._rows and self._rows[-1].get("epoch", -1) >= epoch:
            self._rows = [r for r in self._rows if r.get("epoch", -1) < epoch]
        row = {"epoch": epoch}
        row.update({k: _scalar(v) for k, v in summary.items() if k != "epoch"})
        self._rows.append(row)
        self._dirty = True
        self._maybe_rewrite()

    def write(self, result, *, invalid: int = 0, offsets: dict | None = None) -> None:
        """The worker's results-sink call: one epoch, durable when it returns (flushed, fsynced)."""
        self.write_epoch(result.epoch, result.summary_row(invalid=invalid, offsets=offsets),
                         result.job_outputs)
        self.flush()

    def write_dead_letters(self, table: pa.Table) -> None:
        if table is None or table.num_rows == 0:
            return
        self._dead.append(table.select(DEAD_LETTER_SCHEMA.names).cast(DEAD_LETTER_SCHEMA))
        self._dirty = True
        self._maybe_rewrite()

    def summary_table(self) -> pa.Table:
        """All summary rows as a table: the union of the keys seen, nulls where a row lacks one."""
        if not self._rows:
            return pa.table({"epoch": pa.array([], pa.int64())})
        names = list(dict.fromkeys(k for r in self._rows for k in r))
        return pa.table({k: pa.array([r.get(k) for r in self._rows]) for k in names})

    def dead_letter_table(self) -> pa.Table:
        return pa.concat_tables(self._dead) if self._dead else empty_dead_letters()

    def _maybe_rewrite(self) -> None:
        now = self.clock()
        interval = max(self.summary_interval_s, 5.0 * self._last_cost)
        if self.summary_interval_s <= 0 or self._last_write is None or now - self._last_write >= interval:
            self._rewrite()

    def _rewrite(self) -> None:
        t = time.perf_counter()
        if self._rows or not self.summary_path.exists():
            write_atomic(self.summary_table(), self.summary_path)
        if self._dead:
            dead = self.dead_letter_table()
            self._dead = [dead]
            write_atomic(dead, self.dead_letter_path)
        self._last_cost = time.perf_counter() - t
        self._last_write = self.clock()
        self._dirty = False
        self.rewrites += 1

    def flush(self) -> None:
        if self._dirty or not self.summary_path.exists():
            self._rewrite()

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> ParquetResultsSink:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ParquetDeadLetterSink:
    """The worker's dead-letter sink over a results sink's ``dead_letter.parquet``: durable on return."""

    def __init__(self, results: ParquetResultsSink):
        self.results = results

    def write(self, table: pa.Table) -> None:
        self.results.write_dead_letters(table)
        self.results.flush()
