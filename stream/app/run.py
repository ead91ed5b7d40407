"""`vinestream run` and `vinestream produce`: the application loop over Kafka, and publishing a log.

The worker is :class:`~vinestream.stream.app.application.Application` with a
:class:`~vinestream.connectors.kafka.KafkaSource` (consumer group, manual
commits) and the configured sinks (Parquet directory and/or results and
dead-letter topics).
"""
from __future__ import annotations

import logging
import re
import sys
import threading
import time

from kafka import KafkaConsumer
from kafka.errors import KafkaError

from vinestream.connectors.base import FanOut, each_sink, error_text
from vinestream.connectors.dead_letters import ParquetDeadLetterSink
from vinestream.connectors.kafka import (
    BrokersUnreachable,
    KafkaDeadLetterSink,
    KafkaResultsSink,
    KafkaSource,
    MissingTopics,
    produce,
)
from vinestream.connectors.parquet import ParquetResultsSink
from vinestream.stream.errors import UsageError
from vinestream.stream.events.cudf_decode import DecoderUnavailable, make_decoder
from vinestream.stream.events.schema import DEFAULT_MAX_NESTING, DEFAULT_MAX_PAYLOAD_BYTES
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures.backend import BackendError

from .application import Application, OutOfMemory, RunReport, run_application
from .config import parse_job_options, produce_config, run_config
from .metrics import DEFAULT_ADDR, PipelineMetrics

log = logging.getLogger("vinestream")


def pipeline_factory(cfg):
    """A function building the configured, empty pipeline (called once by the loop)."""
    def factory():
        return build_pipeline(structure=cfg.structure, backend=cfg.backend, undirected=cfg.undirected,
                              keep_self_loops=cfg.keep_self_loops, jobs=cfg.jobs,
                              bfs_sources=cfg.bfs_source, jobs_every=cfg.jobs_every,
                              job_options=parse_job_options(getattr(cfg, "job_options", {}), cfg.jobs),
                              edge_ttl=getattr(cfg, "edge_ttl", None))
    return factory


def make_sinks(cfg) -> tuple[FanOut, FanOut]:
    """(results, dead letters) for the configured outputs (Parquet directory and/or topics)."""
    results, dead = [], FanOut([])
    options = cfg.security()
    if cfg.out:
        dead.sinks.append(ParquetDeadLetterSink(cfg.out))
    if cfg.dead_letter_topic:
        dead.sinks.append(KafkaDeadLetterSink(cfg.bootstrap_servers, cfg.dead_letter_topic, options=options))
    if cfg.out:
        # a summary row's dead letters are durable before it is (a kill between them left invalid > 0 and none)
        results.append(ParquetResultsSink(cfg.out, keep_epochs=getattr(cfg, "keep_epochs", None),
                                          output_every=getattr(cfg, "output_every", 1), before_summary=dead.flush))
    if cfg.results_topic:
        results.append(KafkaResultsSink(cfg.bootstrap_servers, cfg.results_topic, cfg.results_format,
                                        options=options))
    if not results:
        log.warning("no --out and no --results-topic: job results are computed but not exported")
    return FanOut(results), dead


def kafka_source(cfg, app: Application | None = None, decoder=None) -> KafkaSource:
    """The configured consumer-group source, wired to ``app``'s stop event and rebalance callback.

    It connects when the loop starts (after the signal handlers are in place, so a
    SIGTERM while the brokers are unreachable still ends the run cleanly).
    """
    return KafkaSource(cfg.bootstrap_servers, group_id=cfg.group, topics=cfg.topics, pattern=cfg.topic_pattern,
                       formats=cfg.topic_formats(), default_format=cfg.format,
                       auto_offset_reset=cfg.auto_offset_reset, decoder=decoder,
                       consumer_options=cfg.consumer_options(),
                       stop=app.stop if app is not None else None,
                       on_revoke=app.on_revoke if app is not None else None, connect=False,
                       max_payload_bytes=getattr(cfg, "max_payload_bytes", DEFAULT_MAX_PAYLOAD_BYTES),
                       max_nesting=getattr(cfg, "max_nesting", DEFAULT_MAX_NESTING),
                       max_buffered_events=max(4 * int(cfg.batch_size), 100_000),
                       # a run that reads what is there and stops has nothing to wait for: a missing topic is a
                       # mistake (a typo); a long-lived worker may start before its topics are created
                       missing_topics="error" if getattr(cfg, "until_end", False) else "wait",
                       connect_within=connect_bound(cfg))


def connect_bound(cfg) -> float | None:
    """How long a run waits for brokers it cannot reach before it ends with one line (exit 1): a run that should
    finish gives them ``--idle-timeout`` when it is given (the time it already allows for nothing to come), else
    with ``--until-end`` the consumer's request timeout (30 s unless a ``--kafka-option request_timeout_ms`` says
    otherwise: what a request to a broker that is there may take).  A long-lived worker waits for as long as it
    takes (None), saying so (``KafkaSource._reach_brokers``).  Such a run waited for ever, however it was bounded:
    ``--idle-timeout`` counts from the partitions' assignment."""
    idle = getattr(cfg, "idle_timeout", None)
    if idle is not None:
        return float(idle)
    if getattr(cfg, "until_end", False):
        return cfg.consumer_options().get("request_timeout_ms", KafkaConsumer.DEFAULT_CONFIG["request_timeout_ms"]) \
            / 1000.0
    return None


def kafka_application(config, pipeline_factory, results_sink=None, dead_letter_sink=None, metrics=None, *,
                      source=None, decoder=None) -> Application:
    """The worker: the application loop over the configured Kafka source (``source`` replaces it).

    ``pipeline_factory()`` builds an empty ``Pipeline`` (a checkpoint, if any, is
    loaded into it).  ``results_sink.write(result, invalid=, offsets=)`` and
    ``dead_letter_sink.write(table)`` are durable once their ``flush()`` returns
    (if they have one); the loop flushes before every commit.
    """
    app = Application(config, source, pipeline_factory, _as_sink(results_sink), _as_sink(dead_letter_sink),
                      metrics)
    for sinks in (app.results, app.dead_letters):       # Kafka sinks stop waiting for gone brokers at a stop
        each_sink(sinks, "stop_on", app.stop)
    if source is None:
        app.source = kafka_source(config, app, decoder)
    else:
        source.on_revoke, source.stop = app.on_revoke, app.stop
    return app


def run_worker(config, pipeline_factory, results_sink=None, dead_letter_sink=None, metrics=None, *,
               source=None, decoder=None, handle_signals: bool = True) -> RunReport:
    """Run the Kafka worker until a stop condition or SIGTERM/SIGINT; returns what it did."""
    port = getattr(config, "metrics_port", -1)
    if metrics is not None and metrics.server is None and port is not None and port >= 0:
        try:
            metrics.serve(port, getattr(config, "metrics_addr", DEFAULT_ADDR))
        except OSError as exc:
            raise UsageError(f"cannot serve metrics on {getattr(config, 'metrics_addr', DEFAULT_ADDR)}:{port}: "
                             f"{exc.strerror or exc}") from None
    app = kafka_application(config, pipeline_factory, results_sink, dead_letter_sink, metrics,
                            source=source, decoder=decoder)
    return run_application(app, handle_signals=handle_signals)


def _as_sink(sink):
    return sink if sink is None or isinstance(sink, FanOut) else FanOut([sink])


class _KafkaRateLimit(logging.Filter):
    """kafka-python logs each attempt to reach a broker that is gone, in two or three lines (``ERROR
    kafka.net.manager: Connection failed: ... ECONNREFUSED``, ``Connection lost``, ``WARNING ... not ready;
    waiting``), up to one attempt a second: a broker down for an hour buried the worker's log, and its own lines,
    which say the state once (waiting for the brokers, a commit retried with backoff), in them.  Below DEBUG each
    kind of kafka-python line (its logger, level and text with the numbers left out) is let through the first
    time, then at most once every :attr:`interval` seconds, saying how many like it were held back meanwhile.
    Chosen over hiding them (a level above ERROR): the first one still shows what kafka-python saw, and a
    line that keeps coming still shows now and then.  ``--log-level DEBUG`` shows every one."""

    interval = 60.0
    _NUMBERS = re.compile(r"\d+(\.\d+)?")

    def __init__(self, clock=time.monotonic):
        super().__init__()
        self.clock = clock
        self.lock = threading.Lock()
        self.kinds: dict = {}          # kind -> [when one was last let through, how many held back since]

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != "kafka" and not record.name.startswith("kafka."):       # kafka-python's loggers only
            return True
        kind = (record.name, record.levelno, self._NUMBERS.sub("#", str(record.msg)))
        now = self.clock()
        with self.lock:
            seen = self.kinds.get(kind)
            if seen is not None and now - seen[0] < self.interval:
                seen[1] += 1
                return False
            if len(self.kinds) > 1000:          # texts with changing words: forget, rather than grow for ever
                self.kinds.clear()
            held = seen[1] if seen is not None else 0
            self.kinds[kind] = [now, 0]
        if held:
            record.msg, record.args = (f"{record.getMessage()} (and {held} more like it in the last "
                                       f"{now - seen[0]:.0f} s, not shown)"), ()
        return True


class _KafkaOneLine(logging.Filter):
    """kafka-python logs a connection lost under a running worker (a broker killed, a network cut) with
    ``log.exception``: a traceback of its own sockets on every retry, which a user read as the worker's crash.
    Below DEBUG each such record is one line: its message and the exception's."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("kafka") and record.exc_info and record.exc_info[1] is not None:
            record.msg, record.args = f"{record.getMessage()}: {record.exc_info[1]!r}", ()
            record.exc_info = record.exc_text = None
        return True


def _logging(level: str) -> None:
    name = str(level).upper()
    if not isinstance(logging.getLevelName(name), int):
        raise UsageError(f"unknown log level {level!r}: choose DEBUG, INFO, WARNING or ERROR")
    logging.basicConfig(level=name, format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True)
    if logging.getLogger().level > logging.DEBUG:
        logging.getLogger("kafka").setLevel(max(logging.WARNING, logging.getLogger().level))
        for handler in logging.getLogger().handlers:     # a logger's filter would miss kafka's child loggers
            handler.addFilter(_KafkaRateLimit())
            handler.addFilter(_KafkaOneLine())


def main_run(args, cfg=None) -> int:
    """``vinestream run``: 0 when stopped (end of input, SIGTERM); one line and 1 on any error."""
    cfg = cfg if cfg is not None else run_config(args)
    _logging(cfg.log_level)
    factory = pipeline_factory(cfg)
    probe = factory()           # a bad structure / backend / job fails here, before any connection
    metrics = PipelineMetrics(structure=cfg.structure, backend="gpu" if probe.on_gpu else "cpu")
    decoder = decoder_for(cfg.decoder, gpu=probe.on_gpu)
    del probe
    try:
        results, dead = make_sinks(cfg)
    except OSError as exc:
        raise UsageError(f"cannot write to {cfg.out}: {exc.strerror or exc}") from None
    try:
        report = run_worker(cfg, factory, results, dead, metrics, decoder=decoder)
    except (UsageError, BackendError):
        raise
    except MissingTopics as exc:                   # the user's mistake, said as such (exit 2)
        raise UsageError(str(exc)) from None
    except Exception as exc:                       # the run stopped on an error: one line, nonzero
        log.debug("traceback", exc_info=True)
        print(f"vinestream: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    finally:
        for sink in (dead, results):            # dead letters before the rows counting them
            try:
                sink.close()
            except Exception as exc:
                log.warning("closing a sink: %s", exc)
        metrics.close()
    log.info("stopped (%s): %d batches, %d events, %d dead letters, %.0f events/s, epoch %d",
             report.stopped_by, report.batches, report.events, report.dead_letters,
             report.events_per_second, report.epoch)
    if cfg.pushgateway:
        metrics.push(cfg.pushgateway, job="vinestream")
    return 0


def decoder_for(name: str, *, gpu: bool):
    """The payload decoder ``name`` names (stream/events/cudf_decode.py); a user error where it cannot run."""
    try:
        return make_decoder(name, gpu=gpu)
    except DecoderUnavailable as exc:
        raise UsageError(str(exc)) from None


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, (OutOfMemory, BrokersUnreachable)):      # their text says what happened; no class name
        return " ".join(str(exc).split())
    return error_text(exc)


def main_produce(args, cfg=None) -> int:
    """``vinestream produce``: 0 when every event was acknowledged, else 1 saying how many were not."""
    cfg = cfg if cfg is not None else produce_config(args)
    try:
        counts = produce(cfg.logs, cfg.topic, cfg.bootstrap_servers, fmt=cfg.format, rate=cfg.rate,
                         batch_events=cfg.batch_events, key_by_src=cfg.key_by_src, partitions=cfg.partitions,
                         options=cfg.security(), lines_per_message=cfg.lines_per_message,
                         delivery_timeout_s=cfg.delivery_timeout_s)
    except KafkaError as exc:
        print(f"vinestream: error: cannot produce to {cfg.bootstrap_servers}: {_one_line(exc)}", file=sys.stderr)
        return 1
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    if counts["unacknowledged"]:
        print(f"vinestream: error: {counts['unacknowledged']} of {counts['acknowledged'] + counts['unacknowledged']}"
              f" events were not acknowledged by the broker", file=sys.stderr)
        return 1
    return 0
