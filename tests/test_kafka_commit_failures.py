"""Commits that fail: the failure is logged and the worker goes on (or stops cleanly), never a crash.

QA: stopping the worker while the broker was down exited 1 with ``AttributeError: 'tuple' object has no
attribute 'topic'``: the log line of a failed commit formatted the ``(topic, partition)`` keys as
TopicPartitions.  These tests drive each failure path of ``KafkaSource.commit`` and of the rebalance
listener with a stand-in consumer, then the whole worker against a real broker that is killed mid-run.
"""
from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from kafka import TopicPartition
from kafka.errors import CommitFailedError, KafkaConnectionError, KafkaTimeoutError

from tests.event_logs import random_events, write_log
from vinestream.connectors.base import position_offset
from vinestream.connectors.kafka import KafkaSource, _Rebalance, commit_metadata, produce
from vinestream.connectors.partition_merge import MergePosition
from vinestream.connectors.tansu import TansuBroker, tansu_binary

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}


class _Consumer:
    """What KafkaSource uses of a KafkaConsumer for a commit; ``commit`` raises ``error`` (None: succeeds)."""

    def __init__(self, error=None):
        self.error = error
        self.commits = []

    def commit(self, offsets):
        self.commits.append(offsets)
        if self.error is not None:
            raise self.error

    async def commit_async(self, offsets):
        self.commit(offsets)


def _source(error=None, stop=False) -> KafkaSource:
    source = KafkaSource("127.0.0.1:9", group_id="g", topics=["t"], connect=False)
    source.consumer = _Consumer(error)
    if stop:
        source.stop.set()
    return source


# positions as the application hands them over: (topic, partition) keys, MergePosition values
OFFSETS = {("t", 1): MergePosition(7, 2, 100), ("t", 0): MergePosition(5, 0, 90)}


def test_a_commit_refused_by_a_rebalance_returns_false_and_names_the_offsets(caplog):
    source = _source(CommitFailedError("rebalanced"))
    with caplog.at_level(logging.WARNING, logger="vinestream.connectors.kafka"):
        assert source.commit(OFFSETS) is False
    assert "t[0]@5, t[1]@7" in caplog.text and "reassigned" in caplog.text
    # each offset with the rest of its position in the metadata (commit_metadata)
    assert source.consumer.commits == [{TopicPartition("t", p): (off, commit_metadata(pos), -1)
                                        for (_, p), pos in OFFSETS.items() for off in [position_offset(pos)]}]


@pytest.mark.parametrize("error", [KafkaConnectionError("broker down"), KafkaTimeoutError("no coordinator"),
                                   OSError("connection refused")])
def test_a_commit_abandoned_at_shutdown_returns_false_and_names_the_offsets(caplog, error):
    source = _source(error, stop=True)          # a stop (SIGTERM) while the coordinator is unreachable
    with caplog.at_level(logging.WARNING, logger="vinestream.connectors.kafka"):
        assert source.commit(OFFSETS) is False
    assert "t[0]@5, t[1]@7" in caplog.text and "abandoned at shutdown" in caplog.text


def test_a_commit_on_revocation_logs_what_it_committed(caplog):
    source = _source()
    source.on_revoke = lambda revoked: dict(OFFSETS)       # the application's durable positions
    with caplog.at_level(logging.INFO, logger="vinestream.connectors.kafka"):
        asyncio.run(_Rebalance(source).on_partitions_revoked({TopicPartition("t", 0), TopicPartition("t", 1)}))
    assert "committed t[0]@5, t[1]@7 before giving up 2 partition(s)" in caplog.text
    assert "failed" not in caplog.text
    assert len(source.consumer.commits) == 1


@pytest.mark.kafka
def test_sigterm_after_the_broker_died_exits_0(tmp_path):
    """The QA repro (r1.sh): a worker with checkpoints consumes, the broker is killed, then SIGTERM: the final
    checkpoint's commit cannot reach the broker and is abandoned; the run ends 0 with no error line."""
    binary = tansu_binary()
    if binary is None:
        pytest.skip("Tansu broker binary not found")
    broker = TansuBroker(binary).start()
    try:
        produce(write_log(tmp_path / "log.parquet", random_events(500, seed=41, vertex_ops=False)), "dies",
                broker.bootstrap, fmt="json", partitions=2)
        out = tmp_path / "out"
        proc = subprocess.Popen(
            [sys.executable, "-m", "vinestream", "run", "--bootstrap-servers", broker.bootstrap, "--topic", "dies",
             "--group", "g-dies", "--format", "json", "--structure", "coo", "--backend", "cpu",
             "--metrics-port", "-1", "--out", str(out), "--checkpoint-dir", str(tmp_path / "ck"),
             "--checkpoint-every-batches", "1000", "--checkpoint-every-seconds", "0",
             "--session-timeout-ms", "6000", "--max-poll-interval-ms", "10000",
             # the final commit waits this long for the dead broker before it is abandoned (default 30 s)
             "--kafka-option", "request_timeout_ms=5000"],
            cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        lines: list[bytes] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
        reader.start()
        deadline = time.monotonic() + 90
        while _events_applied(out) < 500 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert _events_applied(out) == 500, b"".join(lines).decode()[-2000:]
    finally:
        broker.proc.kill()                      # the broker dies under the running worker
        broker.proc.wait(10)
        broker.stop()
    time.sleep(3)                               # polls fail and are retried meanwhile
    assert proc.poll() is None, b"".join(lines).decode()[-2000:]
    proc.send_signal(signal.SIGTERM)            # drain, checkpoint, commit (fails: the broker is gone), exit
    proc.wait(timeout=60)
    reader.join(timeout=10)
    err = b"".join(lines).decode()
    assert proc.returncode == 0, err[-3000:]
    assert "vinestream: error" not in err and "Traceback" not in err, err[-3000:]
    assert "abandoned at shutdown" in err, err[-3000:]      # the commit that could not happen is said


def _events_applied(out: Path) -> int:
    try:
        return sum(pq.read_table(out / "summary.parquet").column("events").to_pylist())
    except (OSError, KeyError, pa.ArrowInvalid):
        return 0


def test_kafka_pythons_connection_tracebacks_are_one_line_each(capsys):
    """kafka-python logs a connection lost under a running worker with log.exception: every retry printed a
    traceback of its sockets on the worker's stderr (found by test_sigterm_after_the_broker_died_exits_0, which
    failed when the broker died in the middle of a read).  Below DEBUG the worker's logging makes each one line;
    at DEBUG the traceback stays."""
    from vinestream.stream.app.run import _logging
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, logging.getLogger("kafka").level)
    try:
        for level, one_line in (("INFO", True), ("DEBUG", False)):
            _logging(level)
            try:
                raise ConnectionResetError(104, "Connection reset by peer")
            except ConnectionResetError:
                logging.getLogger("kafka.net.transport").exception("%s: Error receiving network data", "<conn>")
            err = capsys.readouterr().err
            assert ("Traceback" not in err) == one_line, err
            assert "kafka.net.transport: <conn>: Error receiving network data" in err, err
            if one_line:
                assert len(err.strip().splitlines()) == 1 and "Connection reset by peer" in err, err
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.getLogger("kafka").setLevel(saved[2])
