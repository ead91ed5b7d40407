"""Helpers shared by the Kafka tests: run a worker with the real pipeline, read topics back."""
from __future__ import annotations

import json
import math

import pyarrow as pa
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from tests.pipelines import ObservedPipeline
from vinestream.connectors.tansu import FAST_GROUP
from vinestream.stream.app.config import WorkerConfig
from vinestream.stream.app.run import run_worker
from vinestream.stream.events.decode import decode as DECODER
from vinestream.stream.events.schema import EVENT_SCHEMA


def worker_config(bootstrap, topic, group, **kw) -> WorkerConfig:
    base = {"bootstrap_servers": bootstrap, "topics": [topic], "group": group, "until_end": True, "batch_size": 2000,
                "batch_latency_ms": 50, "metrics_port": -1, "session_timeout_ms": FAST_GROUP["session_timeout_ms"],
                "max_poll_interval_ms": FAST_GROUP["max_poll_interval_ms"], "idle_timeout": 60}
    base.update(kw)
    return WorkerConfig(**base)


def run(cfg, pipeline=None, **kw):
    """Run the worker with a real pipeline; returns (report, pipeline)."""
    built = []

    def factory():
        p = pipeline or ObservedPipeline()
        built.append(p)
        return p
    report = run_worker(cfg, factory, decoder=DECODER, handle_signals=False, **kw)
    return report, built[-1]


def read_topic(bootstrap, topic, timeout_s=10.0) -> list:
    """Every message of ``topic`` (all partitions, from the start), without a group."""
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=2000)
    parts = [TopicPartition(topic, p) for p in sorted(c.partitions_for_topic(topic) or [])]
    c.assign(parts)
    c.seek_to_beginning(*parts)
    out = []
    while True:
        batch = c.poll(timeout_ms=int(timeout_s * 1000) if not out else 1500)
        if not batch:
            break
        for msgs in batch.values():
            out.extend(msgs)
    c.close()
    return out


def committed(bootstrap, group, topic, partitions) -> dict:
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return {p: c.committed(TopicPartition(topic, p)) for p in range(partitions)}
    finally:
        c.close()


def end_offsets(per_partition_events, fmt, batch_events):
    """Offsets after the last message of each partition, from what produce() sent."""
    if fmt == "arrow":
        return {p: math.ceil(n / batch_events) for p, n in enumerate(per_partition_events)}
    return dict(enumerate(per_partition_events))


def json_messages(msgs) -> list:
    return [json.loads(m.value) for m in msgs]


def arrow_messages(bootstrap, topic, partition, events, per_message) -> None:
    """``events`` ((ts, src, dst) triples: edge inserts) as Arrow IPC messages of ``per_message`` events each, to
    ``partition``: messages that a worker with a smaller batch size releases in parts."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", max_request_size=8 << 20)
    for start in range(0, len(events), per_message):
        ts, src, dst = (list(col) for col in zip(*events[start:start + per_message]))
        n = len(ts)
        table = pa.table({"op": pa.array([1] * n, pa.int8()), "src": src, "dst": dst,
                          "weight": pa.nulls(n, pa.float32()), "ts": pa.array(ts, pa.timestamp("ms"))},
                         ).cast(EVENT_SCHEMA)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        producer.send(topic, sink.getvalue().to_pybytes(), partition=partition)
    producer.flush()
    producer.close()
