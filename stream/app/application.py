"""The one application loop: Source -> Pipeline -> Sinks, with checkpoints and commits in one place.

`vinestream replay` (a Parquet log) and `vinestream run` (Kafka topics) are two
configurations of :class:`Application`; what differs lives in the source
(``connectors/base.py`` says what a source and a sink honour).

Two threads share the work so that a slow batch never stalls the input:

- the **input thread** (the caller's) polls the source, gathers polls into
  batches (a replay's polls are whole batches already; Kafka polls are
  gathered up to ``batch_size`` events, a poll or message cut where the batch
  is full, or closed after ``batch_latency_ms``) and queues them.
  With ``max_inflight_batches`` queued it pauses a pausable source (Kafka:
  polling a paused consumer keeps its group membership alive) or waits;
- the **apply thread** runs ``pipeline.apply``, hands the result and the dead
  letters to the sinks, updates the metrics, and checkpoints every N batches /
  T seconds.

Positions are marked done only once the batch is durable: a committing source
(Kafka) has its sinks flushed after every batch, then the input thread commits
the done positions; a replay's position is its checkpoint, taken after the
sinks are flushed.  At-least-once input, and the same state after a restart:
a checkpoint holds the structure, the pipeline state and the positions it
includes; on start the latest one is restored and the source seeks to its
positions.  The batches between the checkpoint and a later commit are applied
again to the restored state, which gives the same state (apply is
deterministic) and results that were already durable once.

SIGTERM / SIGINT (``handle_signals``): stop polling, drain what is gathered,
commit, checkpoint, return.
"""
from __future__ import annotations

import functools
import inspect
import logging
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa

from vinestream.connectors.base import FanOut, Polled, each_sink, later, merge_positions, position_offset
from vinestream.stream.app import checkpoint as ckpt_mod
from vinestream.stream.app import preflight
from vinestream.stream.app import warm_up as warm_up_mod
from vinestream.stream.app.signals import StartupSignals
from vinestream.stream.events.device import concat_events
from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA, EVENT_SCHEMA
from vinestream.structures.backend import backend_name, device_memory_bytes

log = logging.getLogger(__name__)


#: stops after which the run is expected to go on (a signal, ``request_stop``): the jobs are left where they are
RESUMED_STOPS = frozenset({"SIGTERM", "SIGINT", "requested"})


class OutOfMemory(RuntimeError):
    """A batch did not fit in memory (after the pipeline's own splitting); the run ends cleanly."""


@functools.cache
def _takes_next_events(apply) -> bool:
    """Whether the function ``apply`` (a pipeline class's) takes ``next_events`` (``Pipeline.apply`` does; a
    subclass that overrides ``apply(events)`` is called as it is written).  Keyed by the function, not the
    class: a class's ``apply`` may be replaced (a test's wrapper)."""
    return "next_events" in inspect.signature(apply).parameters


@dataclass
class LoopConfig:
    """How the loop batches, checkpoints and stops (``vinestream run``'s WorkerConfig has all of these)."""
    batch_size: int = 200_000
    batch_latency_ms: int = 200
    max_poll_records: int = 500
    max_inflight_batches: int = 2
    checkpoint_dir: str | None = None
    checkpoint_every_batches: int = 100
    checkpoint_every_seconds: float = 60.0
    checkpoint_keep: int = 2
    max_batches: int | None = None
    idle_timeout: float | None = None
    until_end: bool = False


@dataclass
class _Batch:
    events: pa.Table
    dead: pa.Table
    next_positions: dict          # (stream, partition) -> position after the batch
    messages: int
    decode_seconds: float
    late: int = 0


@dataclass
class RunReport:
    """What a run did: for the end-of-run table, the logs and tests."""
    structure: str = ""
    backend: str = ""
    batches: int = 0
    events: int = 0
    dead_letters: int = 0
    invalid: int = 0                # dead letters + dropped self-loops
    messages: int = 0
    inserted: int = 0
    deleted: int = 0
    vertices: int = 0
    edges: int = 0
    commits: int = 0
    checkpoints: int = 0
    epoch: int = 0
    stopped_by: str = ""
    seconds: float = 0.0
    build_seconds: float = 0.0      # of ``seconds``: the pipeline's build and a checkpoint's restore, before batch 1
    restored_from: str | None = None
    committed: dict = field(default_factory=dict)       # (stream, partition) -> last committed position
    phase_seconds: dict = field(default_factory=dict)
    job_summaries: dict = field(default_factory=dict)
    memory: dict = field(default_factory=dict)

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0

    def add(self, result, invalid: int) -> None:
        self.batches += 1
        self.invalid += invalid
        if result is None:
            return
        self.inserted += result.counts.get("inserted", 0)
        self.deleted += result.counts.get("deleted", 0)
        self.vertices = result.counts.get("vertices", self.vertices)
        self.edges = result.counts.get("edges", self.edges)
        for phase, s in result.seconds.items():
            self.phase_seconds[phase] = self.phase_seconds.get(phase, 0.0) + s
        self.job_summaries.update(result.job_summaries)

    def table(self) -> str:
        """The end summary as an aligned two-column table."""
        rows = [("structure", self.structure), ("backend", self.backend), ("batches", self.batches),
                ("events", self.events), ("invalid", self.invalid), ("edges inserted", self.inserted),
                ("edges deleted", self.deleted), ("vertices", self.vertices), ("edges", self.edges),
                ("wall seconds", f"{self.seconds:.3f}"), ("events / s", f"{self.events_per_second:,.0f}"),
                ("build ms", f"{self.build_seconds * 1e3:.1f}")]
        if self.restored_from:
            rows.append(("resumed from", self.restored_from))
        rows += [(f"{phase} ms", f"{s * 1e3:.1f}") for phase, s in self.phase_seconds.items()]
        rows += [(k, v) for k, v in self.job_summaries.items()]
        rows += [(f"memory {k}", v) for k, v in self.memory.items()]
        width = max(len(str(k)) for k, _ in rows)
        return "\n".join(f"{k!s:<{width}}  {v}" for k, v in rows)


class Progress:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, total: int | None, enabled: bool = True, stream=sys.stderr):
        self.total, self.enabled, self.stream = total, enabled, stream
        self.start = time.perf_counter()
        self._last = 0.0

    def update(self, done: int, force: bool = False) -> None:
        now = time.perf_counter()
        if not self.enabled or (not force and now - self._last < 0.1):
            return
        self._last = now
        rate = done / max(now - self.start, 1e-9)
        if self.total:
            frac = min(done / self.total, 1.0)
            bar = "#" * int(30 * frac)
            line = f"\r[{bar:<30}] {frac:6.1%} {done:,}/{self.total:,} events  {rate:,.0f} ev/s"
        else:
            line = f"\r{done:,} events  {rate:,.0f} ev/s"
        self.stream.write(line)
        self.stream.flush()

    def close(self, done: int) -> None:
        if self.enabled:
            self.update(done, force=True)
            self.stream.write("\n")


class _Pending:
    """Polls gathered into the next batch (shared with Kafka's rebalance listener, so locked)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.clear()

    def clear(self):
        self.events, self.dead, self.positions = [], [], {}
        self.num_events = self.messages = self.released = self.late = 0
        self.decode_seconds = 0.0
        self.since = None

    def add(self, polled: Polled) -> None:
        with self.lock:
            if self.since is None:
                self.since = time.monotonic()
            if polled.events.num_rows:
                self.events.append(polled.events)
            if polled.dead.num_rows:
                self.dead.append(polled.dead)
            merge_positions(self.positions, polled.next_positions)
            self.num_events += polled.events.num_rows
            self.messages += polled.messages
            self.late += polled.late
            self.released += polled.events.num_rows + polled.dead.num_rows + len(polled.next_positions)
            self.decode_seconds += polled.decode_seconds

    def take(self) -> _Batch | None:
        with self.lock:
            if not self.released:           # read, but nothing released by the merge yet
                return None
            batch = _Batch(concat_events(self.events) if self.events else EVENT_SCHEMA.empty_table(),
                           pa.concat_tables(self.dead) if self.dead else DEAD_LETTER_SCHEMA.empty_table(),
                           dict(self.positions), self.messages, self.decode_seconds, self.late)
            self.clear()
            return batch


class Application:
    """Source -> Pipeline -> Sinks in one loop (see the module docstring).

    ``pipeline_factory()`` builds the configured, empty pipeline (a checkpoint,
    if any, is loaded into it); ``results`` and ``dead_letters`` are sinks (or
    :class:`FanOut` of several, or None); ``metrics`` a ``PipelineMetrics``;
    ``progress`` a :class:`Progress` (replay's bar).
    """

    def __init__(self, config, source, pipeline_factory: Callable, results=None, dead_letters=None,
                 metrics=None, *, progress: Progress | None = None, warm_up: Callable | None = None):
        self.config = config
        self.source = source
        self.pipeline_factory = pipeline_factory
        self.results = results if results is not None else FanOut([])
        self.dead_letters = dead_letters if dead_letters is not None else FanOut([])
        self.metrics = metrics
        self.progress = progress
        #: one-time device set-up run on a thread from the start of ``run`` (``stream/app/warm_up.py``)
        self.warm_up = warm_up
        self.stop = threading.Event()
        self.stop_reason = ""
        self.error: BaseException | None = None
        self.report = RunReport()
        self.pending = _Pending()
        self.queue: queue.Queue = queue.Queue()
        #: set by the apply thread after each queued item: the input thread waits on it instead of
        #: spinning (a spinning thread holds the GIL that the apply thread's host work needs)
        self._applied = threading.Event()
        self.done_lock = threading.Lock()
        self.done: dict = {}             # (stream, partition) -> position after the last durable batch
        self.committed: dict = {}        # (stream, partition) -> position last committed
        self.pipeline = None
        self.rows_read = 0               # records the input thread has taken (progress)
        self.checkpointed: dict = {}     # (stream, partition) -> position of the last checkpoint
        self.dead_written = 0            # dead letters handed to the dead-letter sinks (restored ones included)
        self._last_checkpoint = time.monotonic()
        self._batches_since_checkpoint = 0
        self._invalid_carry = 0          # dead letters of batches with no valid event, not yet in a summary row
        self._batches_carry = 0          # those batches (no epoch, no row of their own), not yet in a summary row
        self._closing = threading.Event()   # set once the apply thread is done (no more queueing)
        self._locked = None              # the checkpoint directory this run holds (preflight.lock_dir)
        # what the source's positions are positions in (a replay: each log's fingerprint), kept in every checkpoint
        identity = getattr(source, "identity", None)
        self._source_identity = identity() if identity is not None else None

    # -- setup ---------------------------------------------------------------------------
    def _restore(self) -> None:
        directory = getattr(self.config, "checkpoint_dir", None)
        if directory:
            ckpt_mod.check_writable(directory)       # fail at start, not after a batch (nothing committed yet)
            # one run per checkpoint directory (released at the end of run): two would prune and restore each
            # other's checkpoints
            preflight.lock_dir(directory, "--checkpoint-dir")
            self._locked = directory
        ck = ckpt_mod.latest(directory) if directory else None
        if ck is not None:
            check_identity = getattr(self.source, "check_identity", None)
            if check_identity is not None:        # a replay: the logs must be the files the checkpoint read
                check_identity(ck.extra.get("source"), ck.offsets)
            self.source.seek(ck.offsets)
        # a source that reads ahead (a replay's reader thread) starts now, from where this run resumes: its
        # first batches are read and decoded while the pipeline is built (the device's set-up)
        start_reading = getattr(self.source, "start_reading", None)
        if start_reading is not None:
            start_reading()
        self.pipeline = self.pipeline_factory()
        r = self.report
        r.structure = getattr(self.pipeline.structure, "name", "")
        r.backend = backend_name(self.pipeline.xp)
        if directory:
            limit = ckpt_mod.batch_limit(directory)
            if limit is not None:
                log.warning("an earlier run ran out of memory: applying batches of at most %d events", limit)
                self.pipeline.max_batch_events = limit
        if ck is None:
            self._rollback_dead_letters(0)
            return
        ckpt_mod.restore(self.pipeline, ck)
        with self.done_lock:
            self.done.update(ck.offsets)
        # Committed first thing: the group may lag behind the checkpoint (killed between checkpoint and
        # commit), and it never passes it (commits follow checkpoints), so this never goes backwards.
        self.checkpointed = dict(ck.offsets)
        self._rollback_dead_letters(int(ck.extra.get("dead_letters", 0)))
        # dead letters read after the checkpoint's epoch, which the next epoch's summary row counts: a run that
        # resumed without them left them out of every row
        self._invalid_carry = int(ck.extra.get("invalid_carry", 0))
        self._batches_carry = int(ck.extra.get("batches_carry", 0))
        # the newest summary row a sink sent (a results topic): what a catch-up or trailing rejects amend
        each_sink(self.results, "resume_summary", ck.extra.get("last_summary"))
        r.restored_from = str(ck.path)
        r.vertices, r.edges = self.pipeline.structure.num_vertices, self.pipeline.structure.num_edges
        if self.metrics is not None:
            self.metrics.observe_checkpoint(ck.created)
            self.metrics.observe_structure(self.pipeline.structure)
        log.info("restored checkpoint %s (epoch %d, %d vertices, %d edges)", ck.path.name, ck.epoch,
                 ck.vertices.shape[0], ck.cols.shape[0])

    def _count_carry(self) -> None:
        """The input ended with batches of dead letters only: no later summary row will count them, so the newest
        epoch's row does (else the summary's ``invalid`` and ``batches`` missed them for good).  Only at the end of
        the input: a stopped run resumes, and its next epoch's row counts them (the checkpoint keeps the carry)."""
        if any(each_sink(self.results, "add_invalid", self._invalid_carry, self._batches_carry)):
            self._invalid_carry = self._batches_carry = 0

    def _rollback_dead_letters(self, rows: int) -> None:
        """Dead letters past the restored checkpoint are written again by this run: drop them first."""
        self.dead_written = rows
        for sink in getattr(self.dead_letters, "sinks", [self.dead_letters]):
            rollback = getattr(sink, "rollback", None)
            if rollback is not None:
                rollback(rows)

    # -- the apply thread ----------------------------------------------------------------
    def _apply_loop(self) -> None:
        while True:
            batch = self.queue.get()
            try:
                if batch is None:
                    return
                if self.error is None:
                    if batch == "checkpoint":
                        if self._checkpoint_dir():
                            self._checkpoint()
                    else:
                        self._apply(batch)
            except BaseException as exc:   # stop the loop; the input thread ends the run with it
                # debug only: run() raises it, and the command line says it in its one line (a second, logged
                # line here broke that rule for every write that failed mid-run)
                log.debug("applying a batch failed: %s: %s", type(exc).__name__, exc, exc_info=True)
                self.error = exc
                self._request_stop("error")
            finally:
                self.queue.task_done()
                self._applied.set()

    def _checkpoint_dir(self):
        return getattr(self.config, "checkpoint_dir", None)

    def _apply_events(self, events: pa.Table):
        """``pipeline.apply``; out of memory leaves a smaller batch size for the next start (no crash loop)."""
        try:
            if _takes_next_events(type(self.pipeline).apply):
                return self.pipeline.apply(events, next_events=self._next_events)
            return self.pipeline.apply(events)
        except MemoryError as exc:
            current = min(events.num_rows, getattr(self.pipeline, "max_batch_events", None) or events.num_rows)
            limit = max(1, current // 2)
            directory = self._checkpoint_dir()
            if directory:
                ckpt_mod.save_batch_limit(directory, limit)
            raise OutOfMemory(f"out of memory applying a batch of {events.num_rows} events "
                              + (f"(the next start applies at most {limit} events per batch)" if directory
                                 else "(set a smaller --batch-size, or --checkpoint-dir to resume with one)")
                              ) from exc

    def _next_events(self):
        """The events of the batch queued next, if it is one: the pipeline may start resolving it while this
        batch's jobs run (``Pipeline.apply(next_events=...)``)."""
        with self.queue.mutex:
            head = self.queue.queue[0] if self.queue.queue else None
        return head.events if isinstance(head, _Batch) and head.events.num_rows else None

    def _apply(self, batch: _Batch) -> None:
        m = self.metrics
        result = None
        invalid = batch.dead.num_rows
        offsets = {key: position_offset(pos) for key, pos in batch.next_positions.items()}
        if batch.events.num_rows:
            result = self._apply_events(batch.events)
            invalid += result.counts.get("self_loops", 0)
        # the dead letters before the summary row that counts them: the results sink makes them durable before it
        # appends that row (before_summary)
        if batch.dead.num_rows:
            self.dead_letters.write(batch.dead)
            self.dead_written += batch.dead.num_rows
        if result is not None:
            # a batch without one valid event has no epoch: its counts (invalid, and itself in `batches`) join the
            # next summary row, so the rows' batches add up to vinestream_batches_total
            self.results.write(result, invalid=invalid + self._invalid_carry, offsets=offsets,
                               batches=1 + self._batches_carry)
            self._invalid_carry = self._batches_carry = 0
        else:
            self._invalid_carry += invalid
            self._batches_carry += 1
        if self.source.commits and not self._checkpoint_dir():
            self.dead_letters.flush()     # commits follow every batch: make it durable first (dead letters first,
            self.results.flush()          # as the rows counting them)
        with self.done_lock:
            merge_positions(self.done, batch.next_positions)
        r = self.report
        r.add(result, invalid)
        r.events += batch.events.num_rows
        r.dead_letters += batch.dead.num_rows
        r.messages += batch.messages
        r.epoch = int(getattr(self.pipeline, "epoch", r.batches))
        if m is not None:
            # graph size and structure memory from the result's counts: the values its summary row has
            m.observe_batch(result, batch.events, decode_seconds=batch.decode_seconds)
            if result is not None:
                m.observe_device_memory(self.pipeline.xp)
            m.observe_dead_letters(batch.dead)
            if batch.late:
                m.observe_late(batch.late)
        self._batches_since_checkpoint += 1
        if self._checkpoint_due():
            self._checkpoint()

    def _checkpoint_due(self) -> bool:
        c = self.config
        if not getattr(c, "checkpoint_dir", None):
            return False
        n, t = c.checkpoint_every_batches, c.checkpoint_every_seconds
        return bool((n and self._batches_since_checkpoint >= n)
                    or (t and time.monotonic() - self._last_checkpoint >= t and self._batches_since_checkpoint))

    def _checkpoint(self) -> None:
        """Sinks durable, then structure + state + the positions it includes (apply thread, or after it)."""
        self.dead_letters.flush()         # before the summary rows that count them
        self.results.flush()
        with self.done_lock:
            positions = dict(self.done)
        path = ckpt_mod.save(self.config.checkpoint_dir, self.pipeline, positions, keep=self.config.checkpoint_keep,
                             extra={"source": self._source_identity, "dead_letters": self.dead_written,
                                    "invalid_carry": self._invalid_carry,
                                    "batches_carry": self._batches_carry,
                                    "last_summary": next(filter(None, each_sink(self.results, "last_summary")),
                                                         None)})
        with self.done_lock:
            self.checkpointed = positions      # the input thread commits these (and only these)
        self._last_checkpoint = time.monotonic()
        self._batches_since_checkpoint = 0
        self.report.checkpoints += 1
        if self.metrics is not None:
            self.metrics.observe_checkpoint()
        log.info("checkpoint %s", path.name)

    # -- the input thread ----------------------------------------------------------------
    def _enqueue_pending(self) -> bool:
        batch = self.pending.take()
        if batch is None:
            return False
        self.queue.put(batch)
        return True

    def _commit_done(self) -> None:
        """Commit what is durable: the last checkpoint's positions (with a checkpoint directory), else the
        positions of batches whose results are flushed (nothing of the graph survives a restart then)."""
        if not self.source.commits:
            return
        with self.done_lock:
            durable = self.checkpointed if self._checkpoint_dir() else self.done
            todo = {key: pos for key, pos in durable.items() if later(pos, self.committed.get(key))}
        assigned = self.source.assignment()
        todo = {key: pos for key, pos in todo.items() if key in assigned}
        if todo and self.source.commit(todo):
            self.committed.update(todo)
            self.report.commits += 1
            if self.metrics is not None:
                self.metrics.observe_commit()

    def on_revoke(self, revoked) -> dict:
        """Kafka's rebalance listener calls this before partitions move: finish the batch in hand.

        Returns the durable positions of the revoked partitions, which the source commits.
        """
        revoked = {(tp.topic, tp.partition) if hasattr(tp, "topic") else tp for tp in revoked}
        if not revoked:
            return {}
        if not self._closing.is_set():      # at close the apply thread is gone: what is durable is known
            self._enqueue_pending()
            self._finish_messages(revoked)
            if self._checkpoint_dir():
                self.queue.put("checkpoint")  # what is committed must be in a checkpoint first
            self.queue.join()
        with self.done_lock:
            durable = self.checkpointed if self._checkpoint_dir() else self.done
            todo = {key: pos for key, pos in durable.items()
                    if key in revoked and later(pos, self.committed.get(key))}
        self.committed.update(todo)
        return todo

    def _finish_messages(self, keys) -> int:
        """Queue the rest of the messages that partitions ``keys`` are in the middle of, a batch at a time, where the
        commit cannot say how much of a message is done (``connectors.kafka.KafkaSource.finish_messages``: brokers
        that drop commit metadata, or not known yet); the number of events queued.

        A commit is then a message boundary, which its offset alone says exactly: the partition's next owner (a
        rebalance, or a worker started after this one stopped) applies each of the message's events once."""
        finish = getattr(self.source, "finish_messages", None)
        queued = 0
        while finish is not None:
            polled = finish(keys, max_events=self.config.batch_size)
            if not (polled.events.num_rows or polled.dead.num_rows or polled.next_positions):
                break
            queued += polled.events.num_rows
            self.pending.add(polled)
            self._enqueue_pending()
        return queued

    def _request_stop(self, reason: str) -> None:
        if not self.stop_reason:
            self.stop_reason = reason
        self.stop.set()
        wake = getattr(self.source, "wake", None)      # a source that may be waiting (a paced replay) stops it
        if wake is not None:
            wake()

    def request_stop(self, reason: str = "requested") -> None:
        """Stop polling, drain, commit and checkpoint (what SIGTERM does)."""
        self._request_stop(reason)

    def _poll_bound(self) -> dict:
        """``max_events`` for a source that cuts its polls (Kafka): what the gathered batch still takes, so a
        batch never exceeds ``batch_size`` events, however many events its messages hold (an Arrow message
        is cut between events; the positions say where, so a checkpoint in between resumes inside it)."""
        if not getattr(self.source, "bounded_polls", False):
            return {}
        return {"max_events": max(0, self.config.batch_size - self.pending.num_events)}

    def _batch_ready(self) -> bool:
        p = self.pending
        if not p.released:
            return False
        if self.source.whole_batches or p.num_events >= self.config.batch_size:
            return True
        return (time.monotonic() - p.since) * 1000.0 >= self.config.batch_latency_ms

    def _throttle(self) -> None:
        """Backpressure: pause a pausable source, or wait while ``max_inflight_batches`` are queued."""
        limit = self.config.max_inflight_batches
        if self.source.pausable:
            inflight = self.queue.unfinished_tasks
            if inflight >= limit:
                if not self.source.is_paused():
                    log.debug("pipeline behind (%d batches in flight): pausing the source", inflight)
                    self.source.pause()
            elif self.source.is_paused():
                self.source.resume()
            return
        while self.queue.unfinished_tasks >= limit and not self.stop.is_set():
            self._wait_for_apply()

    def _wait_for_apply(self, timeout: float = 0.05) -> None:
        """Sleep until the apply thread finishes a queued item (or ``timeout`` passes)."""
        self._applied.wait(timeout)
        self._applied.clear()

    def run(self) -> RunReport:
        try:
            return self._run()
        finally:
            if self._locked is not None:
                preflight.unlock_dir(self._locked)
                self._locked = None

    def _run(self) -> RunReport:
        c = self.config
        t0 = time.monotonic()
        warm_up_mod.start(self.warm_up)     # the device's set-up meanwhile (inside the timed window)
        try:
            self._restore()
        except BaseException:
            self.source.close()              # a reader thread started by _restore stops with the run
            raise
        self.report.build_seconds = time.monotonic() - t0
        self.report.epoch = int(getattr(self.pipeline, "epoch", 0))
        if self.metrics is not None:
            self.metrics.observe_start(self.report.epoch)
        opener = getattr(self.source, "open", None)
        if opener is not None and not opener():      # stopped (SIGTERM) before the brokers answered
            self.report.stopped_by = self.stop_reason or "stopped"
            self.source.close()
            return self.report
        try:
            # sinks that publish (results and dead-letter topics) connect now, once the source has reached the
            # brokers (waiting, or giving up, as the run's kind says) and a stop can end their wait
            for sinks in (self.results, self.dead_letters):
                each_sink(sinks, "connect")
        except BaseException:
            self.source.close()
            if not self.stop.is_set():
                raise
            self.report.stopped_by = self.stop_reason or "stopped"
            return self.report
        self.rows_read = int(getattr(self.source, "consumed", 0))      # a resumed replay's progress
        applier = threading.Thread(target=self._apply_loop, name="vinestream-apply", daemon=True)
        applier.start()
        last_data = time.monotonic()
        last_lag = 0.0
        try:
            while not self.stop.is_set():
                self._commit_done()
                self._throttle()
                wait = c.batch_latency_ms / 1000.0
                if self.pending.since is not None:
                    wait = max(0.0, wait - (time.monotonic() - self.pending.since))
                polled = self.source.poll(max_records=c.max_poll_records, timeout=min(max(wait, 0.01), 1.0),
                                          **self._poll_bound())
                now = time.monotonic()
                if c.idle_timeout is not None and not polled.messages and not self.source.assignment():
                    last_data = now      # idle time counts from the assignment: a group join can outlast it
                if polled.messages or polled.events.num_rows or polled.dead.num_rows or polled.next_positions:
                    self.pending.add(polled)
                if polled.messages:
                    self.rows_read += polled.messages
                    last_data = now
                    if self.progress is not None:
                        self.progress.update(self.rows_read)
                if self._batch_ready() and self.queue.unfinished_tasks < c.max_inflight_batches:
                    self._enqueue_pending()
                if self.metrics is not None and now - last_lag >= 1.0:
                    self.metrics.observe_lag(self.source.lag())
                    last_lag = now
                if c.max_batches is not None and self.report.batches + self.queue.unfinished_tasks >= c.max_batches:
                    self._request_stop("max_batches")
                elif not polled.messages and not self.pending.released:
                    if c.until_end and self.queue.unfinished_tasks == 0 and self.source.at_end():
                        self._request_stop("end_of_input")
                    elif c.idle_timeout is not None and now - last_data >= c.idle_timeout:
                        self._request_stop("idle_timeout")
                    elif self.source.at_end() and self.queue.unfinished_tasks:
                        self._wait_for_apply()      # the input is read: nothing to do but wait
        finally:
            self._shutdown(applier)
        r = self.report
        r.seconds = time.monotonic() - t0
        r.stopped_by = self.stop_reason or "stopped"
        r.committed = {(key[0], key[1]): position_offset(pos) for key, pos in self.committed.items()}
        if self.pipeline is not None:
            r.memory = dict(self.pipeline.structure.memory())
            r.memory["device_bytes"] = device_memory_bytes(self.pipeline.xp)
        if self.error is not None:
            raise self.error
        return r

    def _shutdown(self, applier: threading.Thread) -> None:
        """Drain: apply what is gathered, run jobs still pending, commit, checkpoint, close the source."""
        if self.error is None and self.stop_reason != "max_batches":
            self._enqueue_pending()
            if self.source.commits:
                # the final commit is where the next owner of a partition starts: a stop in the middle of a message
                # (a batch cut it) applies the rest of it first where the commit could not say how much is done
                # (as a rebalance does; a restart from a checkpoint would not need it, another member would)
                keys = {(tp[0], tp[1]) for tp in self.source.assignment()}
                finished = self._finish_messages(keys)
                if finished:
                    log.info("stopping: the rest of the messages the worker is in the middle of (%d events) is "
                             "applied first, so that the final commit is a message boundary (the brokers keep no "
                             "commit metadata, or it is not known yet whether they do)", finished)
        self.queue.put(None)
        applier.join()
        self._closing.set()
        if self.progress is not None:
            self.progress.close(self.rows_read)
        if self.error is None and self.pipeline is not None:
            # jobs that run every N batches catch up, but not on a stop to go on later (SIGTERM, SIGINT, a stop
            # request): the checkpoint keeps their pending changes and the resumed run updates them where the
            # uninterrupted one does (a catch-up here gave the results job outputs at an epoch that run has none at)
            final = None if self.stop_reason in RESUMED_STOPS else self.pipeline.flush_jobs()
            if final is not None:
                self.report.job_summaries.update(final.job_summaries)
                self.results.write(final)
            if self.stop_reason in RESUMED_STOPS:
                # nor are job outputs held back by --output-every written for this last epoch (the run's last
                # epoch is still to come: the resumed run had an epoch's outputs the uninterrupted one has not)
                each_sink(self.results, "drop_held")
            counted = False
            if (self._invalid_carry or self._batches_carry) and self.stop_reason == "end_of_input":
                self._count_carry()
                counted = not (self._invalid_carry or self._batches_carry)
            try:
                self.dead_letters.flush()        # before the summary rows that count them
                self.results.flush()
                # a carry restored and counted now (no batch since) is in a row: the checkpoint must not keep it,
                # or every later run counted it again
                if self._checkpoint_dir() and (self._batches_since_checkpoint or not self.checkpointed or counted):
                    self._checkpoint()
                self._commit_done()          # after the checkpoint: it commits what the checkpoint covers
            except Exception as exc:
                if self.error is None:
                    self.error = exc
                # raised by run(), so said once, by the caller (see _apply_loop)
                log.debug("final flush, checkpoint or commit failed: %s: %s", type(exc).__name__, exc,
                          exc_info=True)
        elif self.pipeline is not None:
            # the run ends on an error: what was durable before it is committed still, here where the commit is
            # bounded (the consumer's close did it, through the rebalance listener, waiting as long as the brokers)
            try:
                self._commit_done()
            except Exception as exc:
                log.debug("commit after the error failed: %s: %s", type(exc).__name__, exc, exc_info=True)
        if self.metrics is not None:
            try:
                self.metrics.observe_lag(self.source.lag())
            except Exception:
                pass
        try:
            self.source.close()
        except Exception as exc:
            log.warning("closing the source: %s", exc)


#: after SIGTERM / SIGINT, the longest a drain may take before the process ends anyway (exit 1)
SHUTDOWN_GRACE_S = 120.0


def _force_exit(grace: float) -> None:
    log.error("shutdown did not finish within %.0f s; exiting without it", grace)
    logging.shutdown()
    os._exit(1)


def run_application(app: Application, *, handle_signals: bool = True,
                    shutdown_grace_s: float = SHUTDOWN_GRACE_S) -> RunReport:
    """Run ``app`` until its input ends, a stop condition, or SIGTERM/SIGINT (graceful); its report.

    With ``handle_signals`` a signal starts a watchdog: a drain that takes longer than
    ``shutdown_grace_s`` (a broker that never answers, a wedged device) ends the process
    with exit code 1 instead of hanging.
    """
    previous = {}
    if handle_signals and threading.current_thread() is threading.main_thread():
        def _graceful(signum, _frame):
            log.info("%s: draining the current batch, committing, checkpointing", signal.Signals(signum).name)
            if not app.stop.is_set():
                timer = threading.Timer(shutdown_grace_s, _force_exit, args=(shutdown_grace_s,))
                timer.daemon = True
                timer.start()
            app.request_stop(signal.Signals(signum).name)
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, _graceful)
        early = StartupSignals.active
        if early is not None and early.requested:       # a stop asked for before these handlers were in place
            _graceful(signal.Signals[early.requested], None)
    try:
        return app.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
