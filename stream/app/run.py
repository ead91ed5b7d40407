"""`vinestream run` and `vinestream produce`: the application loop over Kafka, and publishing a log.

The worker is :class:`~vinestream.stream.app.application.Application` with a
:class:`~vinestream.connectors.kafka.KafkaSource` (consumer group, manual
commits) and the configured sinks (Parquet directory and/or results and
dead-letter topics).
"""
from __future__ import annotations

import logging

from vinestream.connectors.base import FanOut
from vinestream.connectors.dead_letters import ParquetDeadLetterSink
from vinestream.connectors.kafka import KafkaDeadLetterSink, KafkaResultsSink, KafkaSource, produce
from vinestream.connectors.parquet import ParquetResultsSink
from vinestream.stream.pipeline import build_pipeline

from .application import Application, RunReport, run_application
from .config import parse_job_options, produce_config, run_config
from .metrics import PipelineMetrics

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
    results, dead = [], []
    if cfg.out:
        results.append(ParquetResultsSink(cfg.out, keep_epochs=getattr(cfg, "keep_epochs", None),
                                          output_every=getattr(cfg, "output_every", 1)))
        dead.append(ParquetDeadLetterSink(cfg.out))
    options = cfg.security()
    if cfg.results_topic:
        results.append(KafkaResultsSink(cfg.bootstrap_servers, cfg.results_topic, cfg.results_format,
                                        options=options))
    if cfg.dead_letter_topic:
        dead.append(KafkaDeadLetterSink(cfg.bootstrap_servers, cfg.dead_letter_topic, options=options))
    if not results:
        log.warning("no --out and no --results-topic: job results are computed but not exported")
    return FanOut(results), FanOut(dead)


def kafka_source(cfg, app: Application | None = None, decoder=None) -> KafkaSource:
    """The configured consumer-group source, wired to ``app``'s stop event and rebalance callback."""
    return KafkaSource(cfg.bootstrap_servers, group_id=cfg.group, topics=cfg.topics, pattern=cfg.topic_pattern,
                       formats=cfg.topic_formats(), default_format=cfg.format,
                       auto_offset_reset=cfg.auto_offset_reset, decoder=decoder,
                       consumer_options=cfg.consumer_options(),
                       stop=app.stop if app is not None else None,
                       on_revoke=app.on_revoke if app is not None else None)


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
        metrics.serve(port, getattr(config, "metrics_addr", "0.0.0.0"))
    app = kafka_application(config, pipeline_factory, results_sink, dead_letter_sink, metrics,
                            source=source, decoder=decoder)
    return run_application(app, handle_signals=handle_signals)


def _as_sink(sink):
    return sink if sink is None or isinstance(sink, FanOut) else FanOut([sink])


def main_run(args, cfg=None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    cfg = cfg if cfg is not None else run_config(args)
    factory = pipeline_factory(cfg)
    probe = factory()           # a bad structure / backend / job fails here, before any connection
    metrics = PipelineMetrics(structure=cfg.structure, backend="gpu" if probe.on_gpu else "cpu")
    del probe
    results, dead = make_sinks(cfg)
    try:
        report = run_worker(cfg, factory, results, dead, metrics)
    finally:
        results.close()
        dead.close()
    log.info("stopped (%s): %d batches, %d events, %d dead letters, %.0f events/s, epoch %d",
             report.stopped_by, report.batches, report.events, report.dead_letters,
             report.events_per_second, report.epoch)
    if cfg.pushgateway:
        metrics.push(cfg.pushgateway, job="vinestream")
    return 0


def main_produce(args, cfg=None) -> int:
    cfg = cfg if cfg is not None else produce_config(args)
    counts = produce(cfg.logs, cfg.topic, cfg.bootstrap_servers, fmt=cfg.format, rate=cfg.rate,
                     batch_events=cfg.batch_events, key_by_src=cfg.key_by_src, partitions=cfg.partitions,
                     options=cfg.security(), lines_per_message=cfg.lines_per_message)
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0
