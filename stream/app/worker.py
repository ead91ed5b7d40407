"""The long-lived worker: Kafka -> decode -> pipeline -> durable results -> commit (DESIGN.md "The worker").

Two threads share the work so that a slow batch never stalls the consumer:

- the **consumer thread** (the caller's) polls, decodes every poll in one
  vectorised call per partition, gathers polls into batches (by ``batch_size``
  events or ``batch_latency_ms``), queues them, and commits offsets that the
  apply thread reports durable.  When ``max_inflight_batches`` are queued it
  pauses its partitions (backpressure) and keeps polling, which keeps its
  group membership alive without buffering more;
- the **apply thread** runs ``pipeline.apply``, writes the results and dead
  letters (the sinks return only once they are durable), updates the metrics,
  reports the batch's offsets as done, and checkpoints every N batches / T s.

Offsets are committed only for batches that are applied and durable:
at-least-once.  On partition revocation the rebalance listener hands the batch
in hand to the apply thread, waits for it, and commits before the partitions
go.  SIGTERM / SIGINT: stop polling, drain, commit, checkpoint, return (exit 0).

Restart: with a checkpoint, the structure and pipeline state are restored and
each partition the checkpoint covers is read from the checkpoint's offset, not
the group's committed one.  The committed offset can only be later (commits
happen every batch, checkpoints every N): the batches in between are applied
again to the restored state, giving the same state (deterministic apply) and
results that were already durable once (at-least-once).  Starting from the
committed offset instead would skip those events in the state.
"""
from __future__ import annotations

import logging
import queue
import signal
import threading
import time
from dataclasses import dataclass, field

import pyarrow as pa
from vinestream.stream.app import checkpoint as ckpt_mod
from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA, EVENT_SCHEMA

log = logging.getLogger(__name__)


@dataclass
class _Batch:
    events: pa.Table
    dead: pa.Table
    next_offsets: dict          # TopicPartition -> offset after the batch
    messages: int
    decode_seconds: float


@dataclass
class WorkerReport:
    batches: int = 0
    events: int = 0
    dead_letters: int = 0
    messages: int = 0
    commits: int = 0
    checkpoints: int = 0
    epoch: int = 0
    stopped_by: str = ""
    seconds: float = 0.0
    restored_from: str | None = None
    committed: dict = field(default_factory=dict)   # (topic, partition) -> last committed offset

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0


class _Pending:
    """Polls gathered into the next batch (shared with the rebalance listener, so locked)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.clear()

    def clear(self):
        self.events, self.dead, self.offsets = [], [], {}
        self.num_events = self.messages = 0
        self.decode_seconds = 0.0
        self.since = None

    def add(self, polled) -> None:
        with self.lock:
            if self.since is None:
                self.since = time.monotonic()
            if polled.events.num_rows:
                self.events.append(polled.events)
            if polled.dead.num_rows:
                self.dead.append(polled.dead)
            for tp, off in polled.next_offsets.items():
                self.offsets[tp] = max(off, self.offsets.get(tp, -1))
            self.num_events += polled.events.num_rows
            self.messages += polled.messages
            self.decode_seconds += polled.decode_seconds

    def take(self) -> _Batch | None:
        with self.lock:
            if not self.messages:
                return None
            batch = _Batch(pa.concat_tables(self.events) if self.events else EVENT_SCHEMA.empty_table(),
                           pa.concat_tables(self.dead) if self.dead else DEAD_LETTER_SCHEMA.empty_table(),
                           dict(self.offsets), self.messages, self.decode_seconds)
            self.clear()
            return batch


class Worker:
    """One worker process: see the module docstring.  Build with :func:`run_worker`."""

    def __init__(self, config, pipeline_factory, results_sink=None, dead_letter_sink=None, metrics=None, *,
                 source=None, decoder=None):
        self.config = config
        self.pipeline_factory = pipeline_factory
        self.results_sink = results_sink
        self.dead_letter_sink = dead_letter_sink
        self.metrics = metrics
        self.stop = threading.Event()
        self.stop_reason = ""
        self.error: BaseException | None = None
        self.report = WorkerReport()
        self.pending = _Pending()
        self.queue: queue.Queue = queue.Queue()
        self.done_lock = threading.Lock()
        self.done: dict = {}             # TopicPartition -> offset after the last durable batch
        self.committed: dict = {}        # TopicPartition -> offset last committed
        self.pipeline = None
        self._last_checkpoint = time.monotonic()
        self._batches_since_checkpoint = 0
        self._decoder = decoder
        self.source = source

    # -- setup ---------------------------------------------------------------------------
    def _make_source(self):
        from vinestream.connectors.kafka import KafkaSource
        c = self.config
        return KafkaSource(c.bootstrap_servers, group_id=c.group, topics=c.topics, pattern=c.topic_pattern,
                           formats=c.topic_formats(), default_format=c.format,
                           auto_offset_reset=c.auto_offset_reset, decoder=self._decoder,
                           consumer_options=c.consumer_options(), stop=self.stop)

    def _restore(self) -> None:
        self.pipeline = self.pipeline_factory()
        directory = getattr(self.config, "checkpoint_dir", None)
        ck = ckpt_mod.latest(directory) if directory else None
        if ck is None:
            return
        ckpt_mod.restore(self.pipeline, ck)
        from kafka import TopicPartition
        offsets = {TopicPartition(t, p): off for (t, p), off in ck.offsets.items()}
        self.source.restore_offsets.update(offsets)
        with self.done_lock:
            self.done.update(offsets)
        # The group may have committed further already; never commit backwards to the checkpoint's offsets.
        self.committed.update(offsets)
        self.report.restored_from = str(ck.path)
        if self.metrics is not None:
            self.metrics.observe_checkpoint(ck.created)
            self.metrics.observe_structure(self.pipeline.structure)
        log.info("restored checkpoint %s (epoch %d, %d vertices, %d edges)", ck.path.name, ck.epoch,
                 ck.vertices.shape[0], ck.cols.shape[0])

    # -- the apply thread ----------------------------------------------------------------
    def _apply_loop(self) -> None:
        while True:
            batch = self.queue.get()
            try:
                if batch is None:
                    return
                if self.error is None:
                    self._apply(batch)
            except BaseException as exc:   # a bug, not bad input: stop the worker and re-raise there
                log.exception("applying a batch failed; stopping the worker")
                self.error = exc
                self._request_stop("error")
            finally:
                self.queue.task_done()

    def _apply(self, batch: _Batch) -> None:
        m = self.metrics
        result = None
        if batch.events.num_rows:
            result = self.pipeline.apply(batch.events)
            if self.results_sink is not None:
                self.results_sink.write(result, invalid=batch.dead.num_rows, offsets=batch.next_offsets)
        if batch.dead.num_rows and self.dead_letter_sink is not None:
            self.dead_letter_sink.write(batch.dead)
        # Everything about this batch is durable now: its offsets may be committed.
        with self.done_lock:
            for tp, off in batch.next_offsets.items():
                self.done[tp] = max(off, self.done.get(tp, -1))
        r = self.report
        r.batches += 1
        r.events += batch.events.num_rows
        r.dead_letters += batch.dead.num_rows
        r.messages += batch.messages
        r.epoch = int(getattr(self.pipeline, "epoch", r.batches))
        if m is not None:
            if result is not None:
                m.observe_batch(result, batch.events, decode_seconds=batch.decode_seconds)
                m.observe_structure(self.pipeline.structure)
            m.observe_dead_letters(batch.dead)
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
        """Structure + state + the offsets it includes (called on the apply thread or after it stopped)."""
        with self.done_lock:
            offsets = dict(self.done)
        path = ckpt_mod.save(self.config.checkpoint_dir, self.pipeline, offsets, keep=self.config.checkpoint_keep)
        self._last_checkpoint = time.monotonic()
        self._batches_since_checkpoint = 0
        self.report.checkpoints += 1
        if self.metrics is not None:
            self.metrics.observe_checkpoint()
        log.info("checkpoint %s", path.name)

    # -- the consumer thread -------------------------------------------------------------
    def _enqueue_pending(self) -> bool:
        batch = self.pending.take()
        if batch is None:
            return False
        self.queue.put(batch)
        return True

    def _wait_applied(self) -> None:
        """Block until every queued batch is applied (or the apply thread failed)."""
        self.queue.join()

    def _commit_done(self) -> None:
        with self.done_lock:
            todo = {tp: off for tp, off in self.done.items() if off > self.committed.get(tp, -1)}
        assigned = self.source.assignment()
        todo = {tp: off for tp, off in todo.items() if tp in assigned}
        if todo and self.source.commit(todo):
            self.committed.update(todo)
            self.report.commits += 1
            if self.metrics is not None:
                self.metrics.observe_commit()

    def _on_revoke(self, revoked) -> dict:
        """Rebalance listener callback (kafka-python's IO thread): finish the batch in hand, return offsets."""
        self._enqueue_pending()
        self._wait_applied()
        with self.done_lock:
            todo = {tp: off for tp, off in self.done.items()
                    if tp in revoked and off > self.committed.get(tp, -1)}
        self.committed.update(todo)
        return todo

    def _request_stop(self, reason: str) -> None:
        if not self.stop_reason:
            self.stop_reason = reason
        self.stop.set()

    def _batch_ready(self) -> bool:
        p = self.pending
        if not p.messages:
            return False
        if p.num_events >= self.config.batch_size:
            return True
        return (time.monotonic() - p.since) * 1000.0 >= self.config.batch_latency_ms

    def run(self) -> WorkerReport:
        c = self.config
        t0 = time.monotonic()
        if self.source is None:
            self.source = self._make_source()
        self.source.on_revoke = self._on_revoke
        self.source.stop = self.stop
        self._restore()
        self.report.epoch = int(getattr(self.pipeline, "epoch", 0))
        applier = threading.Thread(target=self._apply_loop, name="vinestream-apply", daemon=True)
        applier.start()
        last_data = time.monotonic()
        last_lag = 0.0
        try:
            while not self.stop.is_set():
                self._commit_done()
                inflight = self.queue.unfinished_tasks
                if inflight >= c.max_inflight_batches:
                    if not self.source.is_paused():
                        log.debug("pipeline behind (%d batches in flight): pausing partitions", inflight)
                        self.source.pause()
                elif self.source.is_paused():
                    self.source.resume()
                wait = c.batch_latency_ms / 1000.0
                if self.pending.since is not None:
                    wait = max(0.0, wait - (time.monotonic() - self.pending.since))
                polled = self.source.poll(max_records=c.max_poll_records, timeout=min(max(wait, 0.01), 1.0))
                now = time.monotonic()
                if polled.messages:
                    self.pending.add(polled)
                    last_data = now
                if self._batch_ready() and self.queue.unfinished_tasks < c.max_inflight_batches:
                    self._enqueue_pending()
                if self.metrics is not None and now - last_lag >= 1.0:
                    self.metrics.observe_lag(self.source.lag())
                    last_lag = now
                # stop conditions for replay-like runs and tests
                if c.max_batches is not None and self.report.batches + self.queue.unfinished_tasks >= c.max_batches:
                    self._request_stop("max_batches")
                elif not polled.messages and not self.pending.messages:
                    idle = now - last_data
                    if c.until_end and self.queue.unfinished_tasks == 0 and self.source.at_end():
                        self._request_stop("end_of_partitions")
                    elif c.idle_timeout is not None and idle >= c.idle_timeout:
                        self._request_stop("idle_timeout")
        finally:
            self._shutdown(applier)
        self.report.seconds = time.monotonic() - t0
        self.report.stopped_by = self.stop_reason or "stopped"
        self.report.committed = {(tp.topic, tp.partition): off for tp, off in self.committed.items()}
        if self.error is not None:
            raise self.error
        return self.report

    def _shutdown(self, applier: threading.Thread) -> None:
        """Drain: apply what is gathered, commit, checkpoint, close the source (in that order)."""
        if self.error is None and self.stop_reason != "max_batches":
            self._enqueue_pending()
        self.queue.put(None)
        applier.join()
        if self.error is None:
            try:
                self._commit_done()
            except Exception:
                log.exception("final commit failed")
            if getattr(self.config, "checkpoint_dir", None) and self.pipeline is not None \
                    and self._batches_since_checkpoint:
                self._checkpoint()
        if self.metrics is not None:
            try:
                self.metrics.observe_lag(self.source.lag())
            except Exception:
                pass
        self.source.close()


def run_worker(config, pipeline_factory, results_sink=None, dead_letter_sink=None, metrics=None, *,
               source=None, decoder=None, handle_signals: bool = True) -> WorkerReport:
    """Run the worker until a stop condition or SIGTERM/SIGINT; returns what it did.

    ``pipeline_factory()`` builds an empty ``Pipeline`` (a checkpoint, if any, is
    loaded into it).  ``results_sink.write(result, invalid=, offsets=)`` and
    ``dead_letter_sink.write(table)`` must return only once their data is durable.
    """
    port = getattr(config, "metrics_port", -1)
    if metrics is not None and metrics.server is None and port is not None and port >= 0:
        metrics.serve(port, getattr(config, "metrics_addr", "0.0.0.0"))
    worker = Worker(config, pipeline_factory, results_sink, dead_letter_sink, metrics, source=source,
                    decoder=decoder)
    previous = {}
    if handle_signals and threading.current_thread() is threading.main_thread():
        def _graceful(signum, _frame):
            log.info("%s: draining the current batch, committing, checkpointing", signal.Signals(signum).name)
            worker._request_stop(signal.Signals(signum).name)
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, _graceful)
    try:
        return worker.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
