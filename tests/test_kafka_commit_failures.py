"""Commits that fail: the failure is logged and the worker goes on (or stops cleanly), never a crash.

QA: stopping the worker while the broker was down exited 1 with ``AttributeError: 'tuple' object has no
attribute 'topic'``: the log line of a failed commit formatted the ``(topic, partition)`` keys as
TopicPartitions.  These tests drive each failure path of ``KafkaSource.commit`` and of the rebalance
listener with a stand-in consumer (the whole worker against a real broker killed under it:
tests/test_kafka_worker_stop.py).
"""
from __future__ import annotations

import asyncio
import logging

import pytest
from kafka import TopicPartition
from kafka.errors import CommitFailedError, KafkaConnectionError, KafkaError, KafkaTimeoutError

from vinestream.connectors.base import position_offset
from vinestream.connectors.kafka import KafkaSource, _Rebalance, commit_metadata
from vinestream.connectors.partition_merge import MergePosition


class _Consumer:
    """What KafkaSource uses of a KafkaConsumer for a commit; ``commit`` raises ``error`` (None: succeeds)."""

    def __init__(self, error=None):
        self.error = error
        self.commits = []
        self.timeouts = []

    def commit(self, offsets, timeout_ms=None):
        self.commits.append(offsets)
        self.timeouts.append(timeout_ms)
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
    assert len(caplog.records) == 1, caplog.text                      # one line
    # one try, bounded (kafka-python's own timeout is its request timeout, 30 s by default), and not tried again
    assert len(source.consumer.timeouts) == 1 and 0 < source.consumer.timeouts[0] <= 5000
    assert source.commit_abandoned


def test_a_commit_on_revocation_logs_what_it_committed(caplog):
    source = _source()
    source.on_revoke = lambda revoked: dict(OFFSETS)       # the application's durable positions
    with caplog.at_level(logging.INFO, logger="vinestream.connectors.kafka"):
        asyncio.run(_Rebalance(source).on_partitions_revoked({TopicPartition("t", 0), TopicPartition("t", 1)}))
    assert "committed t[0]@5, t[1]@7 before giving up 2 partition(s)" in caplog.text
    assert "failed" not in caplog.text
    assert len(source.consumer.commits) == 1


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


class _PollingConsumer(_Consumer):
    """A stand-in consumer whose poll raises ``error`` (the broker gone mid-poll)."""

    def poll(self, timeout_ms=0, max_records=None):
        raise self.error

    def assignment(self):
        return set()

    def paused(self):
        return set()


@pytest.mark.parametrize("error, said", [
    (KafkaConnectionError("111 ECONNREFUSED"), "KafkaConnectionError: 111 ECONNREFUSED"),
    (KafkaTimeoutError(), "KafkaTimeoutError"),
    (ConnectionRefusedError(111, "Connection refused"), "ConnectionRefusedError: [Errno 111] Connection refused")])
def test_a_retry_names_the_error_once(caplog, error, said):
    """QA: `retrying` lines said "KafkaConnectionError: KafkaConnectionError: 111 ECONNREFUSED": kafka-python's
    errors name their class in their text already, and the line put the class name before it again."""
    from vinestream.connectors.kafka import retrying
    source = _source(KafkaConnectionError("111 ECONNREFUSED"))
    tries = []

    def once_then_ok():
        tries.append(1)
        if len(tries) == 1:
            raise error
        return "done"
    with caplog.at_level(logging.WARNING, logger="vinestream.connectors.kafka"):
        assert retrying("offset commit", once_then_ok, retry_on=(Exception,)) == "done"
        if isinstance(error, KafkaError):           # a poll retries kafka-python's errors (the others are raised)
            source.consumer = _PollingConsumer(error)
            source.stop.set()                       # the poll's pause after a failure returns at once
            source.poll(timeout=0.01)
    assert caplog.messages == [f"offset commit failed ({said}); retrying in 0.1s"] + (
        [f"poll failed ({said}); retrying"] if isinstance(error, KafkaError) else [])
