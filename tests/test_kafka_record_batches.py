"""Kafka record batches the worker must read whatever their producer did: compressed with any of Kafka's codecs,
or unreadable (a batch whose compressed bytes do not decompress: a dead letter per record, never a hang)."""
from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import kafka.record.default_records as default_records
import pyarrow.parquet as pq
import pytest
from kafka import KafkaProducer

from tests.hostile_corpus import merge_order, oracle_graph
from tests.pipelines import ObservedPipeline
from vinestream.connectors.kafka import create_topic
from vinestream.connectors.tansu import FAST_GROUP
from vinestream.stream.app import checkpoint

pytestmark = pytest.mark.kafka

ROOT = Path(__file__).resolve().parent.parent


def _event(src: int, ts: int) -> bytes:
    return json.dumps({"op": "add", "src": src, "dst": src + 1, "ts": ts}).encode()


def _send(bootstrap, topic, partition, payloads, **producer_options) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", **{"linger_ms": 50, **producer_options})
    for payload in payloads:
        producer.send(topic, value=payload, partition=partition)
    producer.flush()
    producer.close()


def _run_worker(bootstrap, topic, tmp: Path, timeout_s: float = 120) -> subprocess.CompletedProcess:
    """``vinestream run --until-end`` in its own process (a worker stuck inside kafka-python is killed, not
    left spinning in the test session)."""
    args = [sys.executable, "-m", "vinestream", "run", "--bootstrap-servers", bootstrap, "--topic", topic,
            "--group", f"g-{topic}", "--format", "json", "--structure", "coo", "--backend", "cpu", "--jobs", "none",
            "--out", str(tmp / "out"), "--checkpoint-dir", str(tmp / "ck"), "--until-end", "--idle-timeout", "60",
            "--metrics-port", "-1", "--log-level", "WARNING",
            "--session-timeout-ms", str(FAST_GROUP["session_timeout_ms"]),
            "--max-poll-interval-ms", str(FAST_GROUP["max_poll_interval_ms"])]
    try:
        return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the worker did not finish within {timeout_s} s; its log ends: {(exc.stderr or b'')[-1500:]!r}")


def _final_graph(ck: Path) -> ObservedPipeline:
    restored = ObservedPipeline("coo")
    checkpoint.restore(restored, checkpoint.latest(ck))
    return restored


def test_a_batch_that_does_not_decompress_is_a_dead_letter_per_record_and_the_worker_goes_on(
        kafka_bootstrap, tmp_path, monkeypatch):
    topic = f"unreadable-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, topic, 2)
    before = [_event(i, 1000 + i) for i in range(5)]
    after = [_event(100 + i, 2000 + i) for i in range(5)]
    other = [_event(200 + i, 1500 + i) for i in range(5)]
    _send(kafka_bootstrap, topic, 0, before)
    # a gzip batch whose CRC is right but whose compressed bytes are not gzip: kafka-python raised once, then
    # looped for ever inside its next poll, and the worker never read another message, nor stopped on SIGTERM
    with monkeypatch.context() as patched:
        patched.setattr(default_records, "gzip_encode", lambda data: b"\x1f\x8bnot gzip at all" + data[:7])
        _send(kafka_bootstrap, topic, 0, [_event(50 + i, 1200 + i) for i in range(3)], compression_type="gzip")
    _send(kafka_bootstrap, topic, 0, after)
    _send(kafka_bootstrap, topic, 1, other)

    done = _run_worker(kafka_bootstrap, topic, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    dead = pq.read_table(tmp_path / "out" / "dead_letter.parquet").to_pylist()
    assert Counter((r["partition"], r["position"], r["reason"]) for r in dead) == Counter(
        {(0, 5, "malformed"): 1, (0, 6, "malformed"): 1, (0, 7, "malformed"): 1})
    assert all("cannot be read" in r["detail"] for r in dead)
    decoded = {("t", 0): [(1000 + i, 1, i, i + 1, None) for i in range(5)]
               + [(2000 + i, 1, 100 + i, 101 + i, None) for i in range(5)],
               ("t", 1): [(1500 + i, 1, 200 + i, 201 + i, None) for i in range(5)]}
    oracle = oracle_graph(merge_order(decoded))
    graph = _final_graph(tmp_path / "ck")
    assert graph.edges() == oracle.edges and len(oracle.edges) == 15


def test_a_large_batch_that_does_not_decompress_is_skipped_whole(kafka_bootstrap, tmp_path, monkeypatch):
    """One unreadable batch of 5,000 records: 5,000 dead letters at their offsets and the events after it applied,
    with one warning for the batch (it was skipped a record at a time: a fetch and a warning per record)."""
    topic = f"unreadable-large-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, topic, 1)
    bad = 5000
    _send(kafka_bootstrap, topic, 0, [_event(i, 1000 + i) for i in range(5)])
    with monkeypatch.context() as patched:
        patched.setattr(default_records, "gzip_encode", lambda data: b"\x1f\x8bnot gzip at all" + data[:7])
        _send(kafka_bootstrap, topic, 0, [_event(50 + i, 1200 + i) for i in range(bad)], compression_type="gzip",
              batch_size=16 * 1024 * 1024, linger_ms=5000)
    _send(kafka_bootstrap, topic, 0, [_event(100 + i, 9000 + i) for i in range(5)])

    done = _run_worker(kafka_bootstrap, topic, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    dead = pq.read_table(tmp_path / "out" / "dead_letter.parquet")
    assert sorted(dead.column("position").to_pylist()) == list(range(5, 5 + bad))
    assert set(dead.column("reason").to_pylist()) == {"malformed"} and set(dead.column("partition").to_pylist()) == {0}
    assert all("cannot be read" in d for d in dead.column("detail").to_pylist())
    warnings = [line for line in done.stderr.splitlines() if "cannot be read" in line]
    assert 1 <= len(warnings) <= 3, warnings[:5]
    decoded = {("t", 0): [(1000 + i, 1, i, i + 1, None) for i in range(5)]
               + [(9000 + i, 1, 100 + i, 101 + i, None) for i in range(5)]}
    oracle = oracle_graph(merge_order(decoded))
    graph = _final_graph(tmp_path / "ck")
    assert graph.edges() == oracle.edges and len(oracle.edges) == 10


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_batches_compressed_with_each_kafka_codec_are_applied(kafka_bootstrap, tmp_path, codec):
    """Producers compress with any of Kafka's codecs (a Java producer's compression.type); kafka-python reads
    snappy, lz4 and zstd only with their libraries, which are dependencies of vinestream."""
    topic = f"codec-{codec}-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, topic, 1)
    events = [_event(i, 1000 + i) for i in range(20)]
    _send(kafka_bootstrap, topic, 0, events, compression_type=codec)
    done = _run_worker(kafka_bootstrap, topic, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (tmp_path / "out" / "dead_letter.parquet").exists() or \
        pq.read_table(tmp_path / "out" / "dead_letter.parquet").num_rows == 0
    assert len(_final_graph(tmp_path / "ck").edges()) == 20
