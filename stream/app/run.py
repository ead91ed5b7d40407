"""`vinestream run` and `vinestream produce`: build the worker's parts from the config and start it."""
from __future__ import annotations

import logging

from vinestream.stream.pipeline import build_pipeline

log = logging.getLogger("vinestream")


class FanOut:
    """Several sinks behind one ``write``; returns once every one of them has (each is durable)."""

    def __init__(self, sinks):
        self.sinks = [s for s in sinks if s is not None]

    def write(self, *args, **kwargs) -> None:
        for sink in self.sinks:
            sink.write(*args, **kwargs)

    def close(self) -> None:
        for sink in self.sinks:
            close = getattr(sink, "close", None)
            if close is not None:
                close()


def pipeline_factory(cfg):
    """A function building the configured, empty pipeline (called once by the worker)."""
    def factory():
        return build_pipeline(structure=cfg.structure, backend=cfg.backend, undirected=cfg.undirected,
                              keep_self_loops=cfg.keep_self_loops, jobs=cfg.jobs,
                              bfs_sources=cfg.bfs_source, jobs_every=cfg.jobs_every)
    return factory


def make_sinks(cfg):
    """(results sink, dead-letter sink) for the configured outputs (Parquet directory and/or topics)."""
    from vinestream.connectors.parquet import ParquetDeadLetterSink, ParquetResultsSink
    results, dead = [], []
    if cfg.out:
        parquet = ParquetResultsSink(cfg.out)
        results.append(parquet)
        dead.append(ParquetDeadLetterSink(parquet))
    if cfg.results_topic or cfg.dead_letter_topic:
        from vinestream.connectors.kafka import KafkaDeadLetterSink, KafkaResultsSink
        options = cfg.security()
        if cfg.results_topic:
            results.append(KafkaResultsSink(cfg.bootstrap_servers, cfg.results_topic, cfg.results_format,
                                            options=options))
        if cfg.dead_letter_topic:
            dead.append(KafkaDeadLetterSink(cfg.bootstrap_servers, cfg.dead_letter_topic, options=options))
    if not results:
        log.warning("no --out and no --results-topic: job results are computed but not exported")
    return FanOut(results), FanOut(dead)


def main_run(args) -> int:
    from vinestream.stream.app.config import run_config
    from vinestream.stream.app.metrics import PipelineMetrics
    from vinestream.stream.app.worker import run_worker
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    cfg = run_config(args)
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


def main_produce(args) -> int:
    from vinestream.connectors.kafka import produce
    from vinestream.stream.app.config import produce_config
    cfg = produce_config(args)
    counts = produce(cfg.logs, cfg.topic, cfg.bootstrap_servers, fmt=cfg.format, rate=cfg.rate,
                     batch_events=cfg.batch_events, key_by_src=cfg.key_by_src, partitions=cfg.partitions,
                     options=cfg.security(), lines_per_message=cfg.lines_per_message)
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0
