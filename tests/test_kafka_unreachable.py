"""Brokers that cannot be reached: a run that should finish ends in one line, a long-lived worker says that it
waits, and kafka-python's own line for each attempt does not flood the log.

QA: ``run --until-end --bootstrap-servers 127.0.0.1:1`` ran until killed, its stderr kafka-python's lines about
each attempt (``ERROR kafka.net.manager: Connection failed: ... ECONNREFUSED``, about one a second) and none of
vinestream's saying it waited; ``--idle-timeout`` did not bound it (it counts from the partitions' assignment).
"""
from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.event_logs import random_events, write_log
from vinestream.connectors.kafka import produce
from vinestream.connectors.parquet import written_results
from vinestream.connectors.tansu import TansuBroker, free_port, tansu_binary
from vinestream.stream.app import checkpoint, preflight

pytestmark = pytest.mark.kafka

ROOT = Path(__file__).resolve().parent.parent
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("VINESTREAM_")},
       "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
#: a line logged by kafka-python itself (its loggers are kafka.*), not one of vinestream's
KAFKA_PYTHON_LINE = re.compile(r" (DEBUG|INFO|WARNING|ERROR|CRITICAL) kafka\.")
COMMON = ["run", "--backend", "cpu", "--structure", "coo", "--metrics-port", "-1"]


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vinestream", *COMMON, *args], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("bound, flags", [
    (3, ["--until-end", "--kafka-option", "request_timeout_ms=3000"]),     # --until-end: the request timeout
    (2, ["--idle-timeout", "2"]),
    # the results and dead-letter topics' producers connected before the consumer, and waited for ever
    (2, ["--until-end", "--idle-timeout", "2", "--results-topic", "r", "--dead-letter-topic", "d"]),
], ids=["until-end", "idle-timeout", "output-topics"])
def test_a_run_that_should_finish_without_reachable_brokers_is_one_line_and_exit_1(tmp_path, bound, flags):
    port = free_port()                      # nothing listens there
    out, ck = tmp_path / "out", tmp_path / "ck"
    where = ["--bootstrap-servers", f"127.0.0.1:{port}", "--topic", "t", "--out", str(out), "--checkpoint-dir",
             str(ck)]
    t0 = time.monotonic()
    proc = _run(*where, *flags)
    took = time.monotonic() - t0
    err = proc.stderr
    assert proc.returncode == 1, err[-3000:]
    errors = [line for line in err.splitlines() if "error" in line.lower()]
    assert errors == [f"vinestream: error: cannot reach Kafka at 127.0.0.1:{port} (connection refused) within "
                      f"{bound} s; check --bootstrap-servers"], err[-3000:]
    assert "Traceback" not in err and not KAFKA_PYTHON_LINE.search(err), err[-3000:]
    assert bound <= took < bound + 30, took
    # the directories as a fresh run leaves them: no results, no checkpoint, nothing half-written, no lock held;
    # the same command runs again without --overwrite or --resume
    assert written_results(out) == [] and checkpoint.latest(ck) is None
    assert [p.name for p in (*out.rglob("*"), *ck.rglob("*")) if "tmp" in p.name] == []
    again = _run(*where, *flags, "--check")
    assert again.returncode == 0 and "--out: a new run" in again.stderr, again.stderr[-3000:]


def test_the_run_that_could_not_reach_its_brokers_releases_its_directories(tmp_path, capsys):
    from vinestream.stream.app.cli import main
    port = free_port()
    code = main([*COMMON, "--bootstrap-servers", f"127.0.0.1:{port}", "--topic", "t", "--idle-timeout", "1",
                 "--out", str(tmp_path / "out"), "--checkpoint-dir", str(tmp_path / "ck")])
    assert code == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"vinestream: error: cannot reach Kafka at 127.0.0.1:{port} (connection refused) within 1 s; check "
        "--bootstrap-servers")
    assert preflight._locks == {}         # this process holds neither directory any more


def _summary_events(out: Path) -> int:
    try:
        return sum(pq.read_table(out / "summary.parquet").column("events").to_pylist())
    except (OSError, KeyError, pa.ArrowInvalid):
        return 0


def _wait(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_a_long_lived_worker_says_once_that_it_waits_for_the_brokers_and_again_when_they_answer(tmp_path):
    """Without --until-end the worker waits for its brokers for as long as it takes (README), now saying so in one
    line of its own, and one more when they answer; kafka-python is not asked to try meanwhile, so its lines about
    each attempt are not there at all."""
    binary = tansu_binary()
    if binary is None:
        pytest.skip("Tansu broker binary not found")
    port, out = free_port(), tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "vinestream", *COMMON, "--bootstrap-servers", f"127.0.0.1:{port}",
                             "--topic", "late", "--group", "g-late", "--format", "json", "--out", str(out),
                             "--session-timeout-ms", "6000", "--max-poll-interval-ms", "10000"],
                            cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    broker = None
    try:
        assert _wait(lambda: any("waiting for the brokers" in line for line in lines), 60), "".join(lines)[-3000:]
        time.sleep(7)                                   # several more attempts (at most 5 s apart)
        before = len(lines)
        broker = TansuBroker(binary, port=port).start()
        produce(write_log(tmp_path / "log.parquet", random_events(300, seed=3)), "late", broker.bootstrap,
                fmt="json", partitions=1)
        assert _wait(lambda: _summary_events(out) == 300, 90), "".join(lines)[-3000:]
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        if broker is not None:
            broker.stop()
    reader.join(timeout=10)
    err = "".join(lines)
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err and "vinestream: error" not in err, err[-3000:]
    waiting = [line for line in lines if "waiting for the brokers" in line]
    assert len(waiting) == 1, err[-3000:]
    assert waiting[0].rstrip().endswith(f"WARNING vinestream.connectors.kafka: waiting for the brokers at "
                                        f"127.0.0.1:{port}: connection refused (trying again until they answer)")
    assert [line for line in lines[:before] if KAFKA_PYTHON_LINE.search(line)] == [], err[-3000:]
    assert sum(f"the brokers at 127.0.0.1:{port} answer now" in line for line in lines) == 1, err[-3000:]


def test_kafka_pythons_repeated_lines_go_through_once_a_minute():
    """The worker's log filter: the first of each kind of kafka-python line goes through, then one a minute, saying
    how many like it were held back; vinestream's own lines are never held."""
    from vinestream.stream.app.run import _KafkaRateLimit
    now = [0.0]
    limit = _KafkaRateLimit(clock=lambda: now[0])

    def record(name, level, msg, *args):
        return logging.LogRecord(name, level, __file__, 1, msg, args, None)

    def shown(rec):
        return rec.getMessage() if limit.filter(rec) else None

    refused = ConnectionRefusedError(111, "ECONNREFUSED")
    assert shown(record("kafka.net.manager", logging.ERROR, "Connection failed: %s", refused)) == \
        "Connection failed: [Errno 111] ECONNREFUSED"
    for i in range(1, 120):
        now[0] = i * 0.5
        assert shown(record("kafka.net.manager", logging.ERROR, "Connection failed: %s", refused)) is None
        # numbers in the text do not make another kind (kafka-python formats some lines itself)
        text = f"Bootstrap attempt failed (backoff {i / 7:.2f} secs)"
        assert shown(record("kafka.net.manager", logging.WARNING, text)) == (text if i == 1 else None)
        assert shown(record("vinestream.connectors.kafka", logging.WARNING, "poll failed; retrying")) is not None
    now[0] = 60.0
    assert shown(record("kafka.net.manager", logging.ERROR, "Connection failed: %s", refused)) == \
        "Connection failed: [Errno 111] ECONNREFUSED (and 119 more like it in the last 60 s, not shown)"
    assert shown(record("kafka.net.manager", logging.ERROR, "Connection failed: %s", refused)) is None


def test_kafka_pythons_lines_about_a_broker_gone_under_a_running_worker_do_not_flood_its_log(tmp_path):
    """A broker killed under a running worker: kafka-python logged each attempt to reach it again, two or three
    lines an attempt, more than one attempt a second at first."""
    binary = tansu_binary()
    if binary is None:
        pytest.skip("Tansu broker binary not found")
    broker = TansuBroker(binary).start()
    out = tmp_path / "out"
    proc = None
    try:
        produce(write_log(tmp_path / "log.parquet", random_events(300, seed=4)), "gone", broker.bootstrap,
                fmt="json", partitions=1)
        proc = subprocess.Popen([sys.executable, "-m", "vinestream", *COMMON, "--bootstrap-servers",
                                 broker.bootstrap, "--topic", "gone", "--group", "g-gone", "--format", "json",
                                 "--out", str(out), "--session-timeout-ms", "6000", "--max-poll-interval-ms",
                                 "10000"], cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
        reader.start()
        assert _wait(lambda: _summary_events(out) == 300, 90), "".join(lines)[-3000:]
    finally:
        broker.proc.kill()                  # the broker dies under the running worker
        broker.proc.wait(10)
        broker.stop()
    try:
        before = len(lines)
        time.sleep(15)
        during = lines[before:]
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(timeout=10)
    from_kafka_python = [line for line in during if KAFKA_PYTHON_LINE.search(line)]
    kinds = {re.sub(r"\d+(\.\d+)?", "#", line.split(" ", 2)[2]) for line in from_kafka_python}
    assert len(from_kafka_python) == len(kinds), "".join(during)[-5000:]       # each kind once in 15 s
    assert proc.returncode == 0, "".join(lines)[-3000:]


def test_a_results_topic_out_of_reach_while_the_worker_runs_is_waited_for_not_the_end_of_the_run(
        kafka_bootstrap, tmp_path, monkeypatch, caplog):
    """The results topic's broker stops answering under a running worker (SIGSTOP: the connection stays, nothing
    is acknowledged).  DurableProducer's docstring says it re-sends until acknowledged, but its flush gave up after
    60 s and the run ended with KafkaTimeoutError: results do not wait for a broker down for minutes.  Now it keeps
    waiting, with a warning each minute (2 s here), until the broker answers or the worker stops; nothing is
    committed meanwhile, and nothing is lost once it answers."""
    import uuid

    from tests.kafka_helpers import committed, json_messages, read_topic, run, worker_config
    from vinestream.connectors.kafka import DurableProducer, KafkaResultsSink
    binary = tansu_binary()
    if binary is None:
        pytest.skip("Tansu broker binary not found")
    monkeypatch.setattr(DurableProducer, "WARN_AFTER_S", 2.0, raising=False)
    tag = uuid.uuid4().hex[:8]
    topic, group = f"outage-{tag}", f"g-outage-{tag}"
    produce(write_log(tmp_path / "log.parquet", random_events(600, seed=7)), topic, kafka_bootstrap, fmt="json",
            partitions=1)
    results = TansuBroker(binary).start()
    paused = False
    try:
        results.create_topic("res")
        sink = KafkaResultsSink(results.bootstrap, "res")
        sink.out.send_all("res", [(b"warm-up", b"{}", None)])      # connected, the topic's partitions known
        os.kill(results.proc.pid, signal.SIGSTOP)
        paused = True
        outcome: dict = {}

        def body():
            try:
                outcome["report"], _ = run(worker_config(kafka_bootstrap, topic, group, format="json",
                                                         batch_size=200), results_sink=sink)
            except BaseException as exc:        # the test asserts there is none
                outcome["error"] = exc
        worker = threading.Thread(target=body, daemon=True)
        with caplog.at_level(logging.WARNING, logger="vinestream.connectors.kafka"):
            worker.start()
            assert _wait(lambda: "not acknowledged after" in caplog.text or not worker.is_alive(), 90), caplog.text
            time.sleep(3)
            assert worker.is_alive() and "error" not in outcome, outcome.get("error")
            assert committed(kafka_bootstrap, group, topic, 1) == {0: None}   # nothing committed while waiting
            os.kill(results.proc.pid, signal.SIGCONT)
            paused = False
            worker.join(120)
        assert not worker.is_alive()
        assert "error" not in outcome, outcome.get("error")
        report = outcome["report"]
        assert report.stopped_by == "end_of_input" and report.events == 600
        summaries = [m for m in json_messages(read_topic(results.bootstrap, "res")) if "events" in m]
        assert sorted({s["epoch"] for s in summaries}) == list(range(1, report.batches + 1))
        assert committed(kafka_bootstrap, group, topic, 1) == {0: 600}
        sink.close()
    finally:
        if paused:
            os.kill(results.proc.pid, signal.SIGCONT)
        results.stop()


def test_records_for_a_topic_whose_brokers_do_not_answer_its_metadata_are_sent_again_not_given_up(tmp_path):
    """KafkaProducer.send waits max_block_ms for a topic's partitions and then raises KafkaTimeoutError: that ended
    the run as well, before any record was in flight.  The records wait with the failed ones, and go once the
    brokers answer."""
    from tests.kafka_helpers import read_topic
    from vinestream.connectors.kafka import DurableProducer
    binary = tansu_binary()
    if binary is None:
        pytest.skip("Tansu broker binary not found")
    broker = TansuBroker(binary).start()
    paused = False
    try:
        out = DurableProducer(broker.bootstrap, max_block_ms=1000)
        out.send_all("known", [(b"k", b"warm-up", None)])              # connected; "fresh" is still unknown
        os.kill(broker.proc.pid, signal.SIGSTOP)
        paused = True
        outcome: dict = {}

        def body():
            try:
                outcome["sent"] = out.send_all("fresh", [(b"k", b"one", None), (b"k", b"two", None)])
            except BaseException as exc:
                outcome["error"] = exc
        sender = threading.Thread(target=body, daemon=True)
        sender.start()
        time.sleep(4)                                   # several of max_block_ms
        assert sender.is_alive() and "error" not in outcome, outcome.get("error")
        os.kill(broker.proc.pid, signal.SIGCONT)
        paused = False
        sender.join(90)
        assert outcome == {"sent": 2}, outcome
        assert [m.value for m in read_topic(broker.bootstrap, "fresh")] == [b"one", b"two"]
        out.close()
    finally:
        if paused:
            os.kill(broker.proc.pid, signal.SIGCONT)
        broker.stop()
