"""What every source and sink honours: the contract between the connectors and the application loop.

A **source** hands out decoded event batches together with the positions that
follow them, and takes those positions back to commit or to resume from:

- ``poll(max_records, timeout) -> Polled``: the next decoded events and dead
  letters, and ``next_positions`` (``{(stream, partition): position}``, the
  position right after the last record returned).  A Kafka stream is a topic
  and its position an offset; a replayed log is a file (partition 0) and its
  position a row number.
- ``seek(positions)``: resume from checkpointed positions (before the first poll).
- ``identity()`` / ``check_identity(saved, positions)`` (optional, a replay): what the
  positions are positions in (each log's fingerprint), which a checkpoint keeps; a resume
  checks the logs its positions name against it before its ``seek`` (a row number in a
  log replaced since names other rows).
- ``commit(positions) -> bool``: make ``positions`` the source's durable read
  position (a Kafka offset commit; a replay has nothing to commit and says so
  with ``commits = False``, its checkpoint is its position).
- ``at_end()``: everything that exists now has been returned; ``lag()``,
  ``assignment()``, ``pause()`` / ``resume()`` / ``is_paused()`` for flow control
  (``pausable = False`` where pausing would not keep anything alive and the
  loop simply waits instead); ``close()``.
- ``finish_messages(keys, max_events)`` (optional, Kafka): before partitions ``keys``
  are revoked, the rest of the messages they are in the middle of, where a commit
  cannot say how much of a message is done; polled until it returns no event.
- ``whole_batches``: True when every poll is one complete batch already (a
  replay cuts its own batches by size or event-time window); False when the
  loop gathers polls into batches by size and latency (Kafka).

A **results sink** takes ``write(result, invalid=, offsets=, batches=)`` per epoch; a
**dead-letter sink** takes ``write(table)``; both make what they were given
durable by ``flush()`` and finish with ``close()``.  :class:`FanOut` puts
several behind one.
"""
from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA, EVENT_SCHEMA


@dataclass
class Polled:
    """One poll, decoded: valid events, dead letters, and the positions that commit it."""
    events: pa.Table
    dead: pa.Table
    next_positions: dict = field(default_factory=dict)   # (stream, partition) -> position after the last record
    messages: int = 0                                     # records read (messages, or log rows)
    payload_bytes: int = 0
    decode_seconds: float = 0.0
    late: int = 0                                         # events released behind a later event time

    @property
    def empty(self) -> bool:
        return self.messages == 0

    @staticmethod
    def nothing() -> Polled:
        return Polled(EVENT_SCHEMA.empty_table(), DEAD_LETTER_SCHEMA.empty_table())


def merge_positions(into: dict, new: dict) -> dict:
    """Per partition, the later position (positions only move forward within one assignment).

    A position is an int (a row, an offset) or a tuple that starts with the offset (a Kafka
    ``MergePosition``: offset, events of that message done, running max ts).
    """
    for key, pos in new.items():
        old = into.get(key)
        if old is None or _order(pos) > _order(old):
            into[key] = pos
    return into


def _order(pos):
    return tuple(pos[:2]) if isinstance(pos, tuple) else (pos, 0)


def position_offset(pos) -> int:
    """The record offset (or row) of a position: where a reader resumes at the latest."""
    return int(pos[0]) if isinstance(pos, tuple) else int(pos)


def later(a, b) -> bool:
    """True when position ``a`` is past ``b`` (``b`` None: nothing yet)."""
    return b is None or _order(a) > _order(b)


def error_text(exc: BaseException) -> str:
    """``exc`` as one line naming its class once: kafka-python's errors put their class name in their own text
    (``KafkaConnectionError: 111 ECONNREFUSED``), others do not (``[Errno 111] Connection refused``); lines that
    wrote ``type(exc).__name__: exc`` said kafka-python's names twice."""
    name = type(exc).__name__
    text = " ".join(str(exc).split())
    if not text:
        return name
    return text if text.startswith(name) else f"{name}: {text}"


def table_of_rows(rows: list[dict], value_type: pa.DataType | None = None) -> pa.Table:
    """Rows (dicts) as a table with a column for every key of any row, in the order keys first appear, null
    where a row lacks one; every column ``value_type`` when given, else inferred.  ``Table.from_pylist`` alone
    takes the first row's keys only and drops the others' without a word."""
    keys = list(dict.fromkeys(k for row in rows for k in row))
    schema = None if value_type is None else pa.schema([(k, value_type) for k in keys])
    return pa.Table.from_pylist([{k: row.get(k) for k in keys} for row in rows], schema=schema)


def remove_stale_temp_files(directory) -> int:
    """Remove temporary files left by writers that were killed (``.NAME.PID.tmp``, whose PID is gone).

    Every atomic write here goes through a dot-file named after the writer's process id
    and renamed into place; a killed writer leaves its dot-file behind.  Returns how many
    were removed.
    """
    root = Path(directory)
    if not root.is_dir():
        return 0
    removed = 0
    for path in root.rglob(".*.tmp"):
        parts = path.name.split(".")
        try:
            pid = int(parts[-2])
        except (ValueError, IndexError):
            continue
        if pid != os.getpid() and not pid_alive(pid):
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
    return removed


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a writer's leftovers are stale only once it is gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class FanOut:
    """Several sinks behind one ``write``; returns once every one of them has it."""

    def __init__(self, sinks):
        self.sinks = [s for s in sinks if s is not None]

    def __bool__(self) -> bool:
        return bool(self.sinks)

    def write(self, *args, **kwargs) -> None:
        for sink in self.sinks:
            sink.write(*args, **kwargs)

    def flush(self) -> None:
        each_sink(self, "flush")

    def close(self) -> None:
        each_sink(self, "close")


def add_rejected(row: dict, invalid: int, batches: int) -> dict:
    """``row``, a summary row, counting ``invalid`` more invalid events and ``batches`` more batches (in place):
    batches without a valid event at the end of the input join the newest epoch's row, in every results sink
    (``add_invalid`` of the Parquet and Kafka sinks)."""
    row["invalid"] = int(row.get("invalid") or 0) + int(invalid)
    row["batches"] = int(row.get("batches") or 0) + int(batches)
    return row


def each_sink(sinks, method: str, *args) -> list:
    """``method(*args)`` of every sink behind ``sinks`` (a :class:`FanOut`, or one sink) that has it, in order;
    their results.  A sink implements only what it takes part in (flush, close, a summary's ``add_invalid``)."""
    out = []
    for sink in getattr(sinks, "sinks", [sinks]):
        call = getattr(sink, method, None)
        if call is not None:
            out.append(call(*args))
    return out


@contextlib.contextmanager
def naming_file(path):
    """Errors of writing ``path`` name it: pyarrow's OSError carries no file name, so a full disk was "no space
    left on device writing the output", which said not which file."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None and exc.errno:
            raise OSError(exc.errno, os.strerror(exc.errno), str(path)) from exc
        raise


def special_file(path) -> str | None:
    """What ``path`` is when it exists and is no regular file (a FIFO, a socket, a device), else None: opened where a
    file is read whole, a FIFO blocks until a writer comes (``run --config FIFO`` could then only be killed) or reads
    as empty (``replay FIFO`` said "is empty (0 bytes)")."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None                     # missing or unreadable: the caller's own message says so
    for test, kind in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return None
