"""`produce` then `run` gives the graph `replay` gives, for logs without ``ts`` too (DESIGN.md "Order across
partitions").

QA (t_prodorder.py): a log without ts produced into several partitions gave another graph than its replay.  The
worker orders events without ts by their records' timestamps (ties by partition); the producer left those at the
send time (mostly equal), and in Arrow format sent all of partition 0 before partition 1.  produce now stamps the
records in log order and never lets one message hold events that other partitions' events come between.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from tests.event_logs import oracle_of, write_log
from tests.kafka_helpers import read_topic, run, worker_config
from tests.pipelines import ObservedPipeline
from vinestream import replay
from vinestream.connectors.kafka import produce
from vinestream.stream.events.schema import EVENT_SCHEMA

pytestmark = pytest.mark.kafka


def untimed_log(n: int, seed: int, vertices: int = 60) -> pa.Table:
    """Edge adds, edge deletes and vertex deletes over few vertices (events of all partitions interact)."""
    rng = np.random.default_rng(seed)
    op = rng.choice(np.array([1, 2, 4], np.int8), size=n, p=[0.6, 0.2, 0.2])
    src = rng.integers(0, vertices, n)
    dst = rng.integers(0, vertices, n)
    return pa.table({"op": op, "src": src, "dst": pa.array(dst, mask=op == 4),
                     "weight": pa.nulls(n, pa.float32()), "ts": pa.nulls(n, pa.timestamp("ms"))}).cast(EVENT_SCHEMA)


@pytest.mark.parametrize("fmt, per_message", [("json", 1), ("csv", 1), ("arrow", 20_000), ("json", 50)])
def test_run_of_a_produced_log_without_ts_equals_its_replay(kafka_bootstrap, tmp_path, fmt, per_message):
    _run_equals_replay(kafka_bootstrap, tmp_path, untimed_log(3000, seed=len(fmt) + per_message),
                       f"untimed-{fmt}-{per_message}", fmt, per_message)


@pytest.mark.parametrize("partitions", [1, 4])
def test_run_of_a_log_without_ts_produced_as_arrow_one_event_a_message_equals_its_replay(kafka_bootstrap, tmp_path,
                                                                                        partitions):
    """Arrow with one event a message (``--batch-events 1``) took the path of a log with ts: messages grouped by
    partition and sent at the wall clock, so the merge took partition 0's events before partition 1's (equal
    stamps) and the graph differed from the replay's.  They are stamped in the log's order now, as JSON and
    CSV lines are."""
    _run_equals_replay(kafka_bootstrap, tmp_path, untimed_log(1500, seed=11), f"untimed-arrow-1-of-{partitions}",
                       "arrow", 1, partitions=partitions, session_timeout_ms=3000, max_poll_interval_ms=3000)


def _run_equals_replay(kafka_bootstrap, tmp_path, log, topic, fmt, per_message, partitions=4, **worker) -> None:
    """``log`` produced into ``partitions`` partitions of ``topic`` and consumed by the worker (``worker``: more of
    its settings) ends in the graph its replay gives, which is the oracle's (the log's order, one event at a
    time)."""
    path = write_log(tmp_path / "log.parquet", log)
    sent = produce(path, topic, kafka_bootstrap, fmt=fmt, partitions=partitions, batch_events=per_message,
                   lines_per_message=per_message)
    assert sent["acknowledged"] == log.num_rows and all(n > 0 for n in sent["per_partition"])
    _report, replayed = replay([path], structure="coo", backend="cpu", batch_size=700)
    replay_edges = {(r["src"], r["dst"]): r["weight"] for r in replayed.edges().to_pylist()}
    assert replay_edges == oracle_of(log).edges
    report, consumed = run(worker_config(kafka_bootstrap, topic, f"g-{topic}", format=fmt, batch_size=700, **worker),
                           pipeline=ObservedPipeline())
    assert report.events == log.num_rows and report.dead_letters == 0 and report.stopped_by == "end_of_input"
    assert consumed.edges() == replay_edges
    assert consumed.vertex_set() == set(replayed.vertices().column("vertex").to_pylist())


def test_messages_of_a_log_without_ts_never_interleave_and_their_stamps_follow_the_log(kafka_bootstrap,
                                                                                          tmp_path):
    log = untimed_log(400, seed=3)
    produce(write_log(tmp_path / "log.parquet", log), "untimed-stamps", kafka_bootstrap, fmt="arrow", partitions=3,
            batch_events=20_000)
    msgs = read_topic(kafka_bootstrap, "untimed-stamps")
    # the log's rows, in order, are the messages' rows sorted by (timestamp, partition, offset): the merge's order
    merged = sorted(msgs, key=lambda m: (m.timestamp, m.partition, m.offset))
    rows = pa.concat_tables([pa.ipc.open_stream(m.value).read_all() for m in merged])
    assert rows.column("src").to_pylist() == log.column("src").to_pylist()
    assert rows.column("op").to_pylist() == log.column("op").to_pylist()


def partly_timed_log(n: int, seed: int, start: int = 1_700_000_000_000) -> pa.Table:
    """``untimed_log``'s events with increasing times from ``start`` (ms), a third of them (the first rows among
    them) left null."""
    log = untimed_log(n, seed)
    rng = np.random.default_rng(seed)
    missing = rng.random(n) < 0.33
    missing[:5] = True                       # rows before the log's first time too
    ts = pa.array(start + np.arange(n) * 1000, pa.timestamp("ms"), mask=missing)
    return log.set_column(log.schema.get_field_index("ts"), "ts", ts)


@pytest.mark.parametrize("fmt, per_message", [("json", 1), ("arrow", 20_000), ("arrow", 1), ("csv", 50)])
def test_run_of_a_produced_log_with_ts_partly_null_equals_its_replay(kafka_bootstrap, tmp_path, fmt, per_message):
    """A log whose ts is only partly filled: produce sent its rows without ts stamped with the wall clock (years
    after the others' ts), so the worker's event-time merge applied them after every timed event of the other
    partitions, not in the log's place, and the graph differed from the replay's.  A row without ts now takes,
    as its record timestamp, the time of the row before it in the log (of the log's first timed row before that):
    the event time that replay's windows give it, so the merge applies it in its place in the log."""
    _run_equals_replay(kafka_bootstrap, tmp_path, partly_timed_log(3000, seed=7 + per_message),
                       f"partly-timed-{fmt}-{per_message}", fmt, per_message)


@pytest.mark.parametrize("fmt, per_message", [("json", 1), ("arrow", 1), ("arrow", 20_000), ("csv", 50)])
def test_a_pre_1970_log_gets_no_negative_record_timestamp_and_runs_as_it_replays(kafka_bootstrap, tmp_path, fmt,
                                                                                 per_message):
    """A row without ts after one with a pre-1970 (negative) ts was sent with that negative time as its record
    timestamp (timed rows too, one event a message), which Kafka does not allow (a record timestamp is >= 0, or
    -1 for none; the Java producer refuses one below).  Such a row now carries its time in its payload's ts,
    and its message gets no timestamp of its own; the worker applies it where replay does all the same."""
    log = partly_timed_log(1500, seed=5, start=-86_400_000 * 365 * 10)         # the 1960s
    topic = f"pre-1970-{fmt}-{per_message}"
    _run_equals_replay(kafka_bootstrap, tmp_path, log, topic, fmt, per_message, session_timeout_ms=3000,
                       max_poll_interval_ms=3000)
    stamps = [m.timestamp for m in read_topic(kafka_bootstrap, topic)]
    assert stamps and min(stamps) >= 0, sorted(stamps)[:5]
