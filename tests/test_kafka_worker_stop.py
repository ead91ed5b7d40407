"""A worker stopped by SIGTERM: every event applied once across the stop, and a prompt stop with the broker gone."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.event_logs import random_events, write_log
from tests.kafka_helpers import arrow_messages, run, worker_config
from tests.pipelines import RecordingPipeline
from vinestream.connectors.base import position_offset
from vinestream.connectors.kafka import create_topic, produce
from vinestream.connectors.tansu import TansuBroker, tansu_binary
from vinestream.stream.app import checkpoint

pytestmark = pytest.mark.kafka

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}


def _applied(path: Path) -> list:
    """The sources a tests.worker_main recording worker applied, in order (one JSON list a batch)."""
    if not path.exists():
        return []
    return [src for line in path.read_text().splitlines() if line.strip() for src in json.loads(line)]


@pytest.mark.parametrize("checkpoints", [False, True], ids=["no-checkpoint", "checkpoint"])
def test_a_worker_stopped_in_the_middle_of_an_arrow_message_leaves_each_event_to_be_applied_once(
        kafka_bootstrap, tmp_path, checkpoints):
    """Two partitions of Arrow messages of 100 events whose times alternate, and a worker whose batches hold 30:
    every batch ends in the middle of a message of each partition.  SIGTERM drained the batch in hand and committed
    its position, an offset inside a message with the rest of the position in the commit's metadata, which Tansu
    0.6 drops: the next worker of the group read that message from its first event and applied its applied events
    again.  A stop now applies the rest of such messages first (as a rebalance does), so the final commit is a
    message boundary; with a checkpoint directory too (its checkpoint resumes inside a message, but the group's
    next member starts from the commit)."""
    tag = uuid.uuid4().hex[:8]
    topic, group = f"stop-{tag}", f"g-stop-{tag}"
    create_topic(kafka_bootstrap, topic, 2)
    events = {p: [(1000 + 2 * i + p, p * 1_000_000 + i, p * 1_000_000 + i + 1) for i in range(600)] for p in (0, 1)}
    for p, evs in events.items():
        arrow_messages(kafka_bootstrap, topic, p, evs, per_message=100)

    applied = tmp_path / "applied.jsonl"
    args = [kafka_bootstrap, topic, group, str(applied)] + ([str(tmp_path / "ck")] if checkpoints else [])
    proc = subprocess.Popen([sys.executable, "-m", "tests.worker_main", "recording", *args], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(_applied(applied)) < 90 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    assert json.loads(out.strip().splitlines()[-1])["stopped_by"] == "SIGTERM", err[-3000:]
    first = _applied(applied)
    assert 90 <= len(first) < 1000, len(first)             # stopped far from the end of the topic

    # the group's next member (no checkpoint of its own) resumes from the group's commits
    report, second = run(worker_config(kafka_bootstrap, topic, group, format="arrow", batch_size=30,
                                       idle_timeout=30), pipeline=RecordingPipeline())
    assert report.stopped_by == "end_of_input"
    applied_all = Counter(first) + Counter(second.applied)
    twice = sorted(src for src, n in applied_all.items() if n > 1)
    assert not twice, f"{len(twice)} events applied twice, e.g. {twice[:5]}"
    assert applied_all == Counter(src for evs in events.values() for _ts, src, _dst in evs)
    # the scenario happened: the stop came in the middle of messages, and the worker finished them
    assert "the rest of the messages the worker is in the middle of" in err, err[-3000:]


def _summary_events(out: Path) -> int:
    try:
        return sum(pq.read_table(out / "summary.parquet").column("events").to_pylist())
    except (OSError, KeyError, pa.ArrowInvalid):
        return 0


@pytest.mark.parametrize("mode", ["all-applied", "applying", "applying-results-topic"])
def test_sigterm_with_the_broker_gone_stops_within_seconds_saying_what_was_not_committed(tmp_path, mode):
    """The broker is killed under a running worker, then SIGTERM.  The final commit waited kafka-python's request
    timeout (30 s) before it was abandoned, a commit in flight when the signal came (a worker still applying what it
    had fetched commits after every batch) waited out its own first, and the results of a batch for a results topic
    waited 60 s to be acknowledged.  Now a commit in flight is left at once, and the final commit waits 5 s at
    most: one line says what was not committed, the checkpoint (if any) is written, and the worker exits 0.
    ``all-applied``: everything applied and checkpointed before the broker dies (commits only at checkpoints);
    ``applying``: a slowed `vinestream run` (tests.worker_main chaos) still applying, committing after every batch;
    ``applying-results-topic``: the same with --results-topic, whose last batch's results cannot be acknowledged:
    5 s after the stop the run ends on that error (one line, exit 1: the batch is not done, a restart applies it
    again), having tried to commit what was done before it, if anything (abandoned too: one line)."""
    busy, results_topic = mode != "all-applied", mode == "applying-results-topic"
    binary = tansu_binary()
    if binary is None:
        pytest.skip("Tansu broker binary not found")
    broker = TansuBroker(binary).start()
    topic, out, ck = "dies", tmp_path / "out", tmp_path / "ck"
    common = ["run", "--bootstrap-servers", broker.bootstrap, "--topic", topic, "--group", "g-dies", "--structure",
              "coo", "--backend", "cpu", "--metrics-port", "-1", "--out", str(out), "--session-timeout-ms", "6000",
              "--max-poll-interval-ms", "10000"]
    try:
        if busy:
            total, applied_before_kill = 20_000, 3000
            produce(write_log(tmp_path / "log.parquet", random_events(total, seed=41, vertex_ops=False)), topic,
                    broker.bootstrap, fmt="arrow", partitions=2, batch_events=1000)
            argv = ["-m", "tests.worker_main", "chaos", str(tmp_path / "phase"), *common, "--format", "arrow",
                    "--batch-size", "300"] + (["--results-topic", "dies-results"] if results_topic else [])
        else:
            total = applied_before_kill = 500
            produce(write_log(tmp_path / "log.parquet", random_events(total, seed=41, vertex_ops=False)), topic,
                    broker.bootstrap, fmt="json", partitions=2)
            argv = ["-m", "vinestream", *common, "--format", "json", "--checkpoint-dir", str(ck),
                    "--checkpoint-every-batches", "1000", "--checkpoint-every-seconds", "0"]
        proc = subprocess.Popen([sys.executable, *argv], cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        lines: list[bytes] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
        reader.start()
        deadline = time.monotonic() + 90
        while _summary_events(out) < applied_before_kill and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert _summary_events(out) >= applied_before_kill, b"".join(lines).decode()[-3000:]
    finally:
        broker.proc.kill()                      # the broker dies under the running worker
        broker.proc.wait(10)
        broker.stop()
    time.sleep(2)                               # polls and commits fail meanwhile
    assert proc.poll() is None, b"".join(lines).decode()[-3000:]
    if busy:
        assert _summary_events(out) < total, "the worker was to be still applying"
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    took = time.monotonic() - t0
    reader.join(timeout=10)
    err = b"".join(lines).decode()
    assert "Traceback" not in err, err[-3000:]
    if results_topic:
        assert proc.returncode == 1, err[-3000:]
        assert took < 15, f"{took:.1f} s to stop\n{err[-3000:]}"
        errors = [line for line in err.splitlines() if line.startswith("vinestream: error: ")]
        assert errors == ["vinestream: error: KafkaTimeoutError: records to topic 'dies-results' not acknowledged "
                          "within 5 s of the stop (the brokers are out of reach): the batch is not done, and a "
                          "restart applies it again"], err[-3000:]
    else:
        assert proc.returncode == 0, err[-3000:]
        assert took < 10, f"{took:.1f} s to stop\n{err[-3000:]}"
        assert "vinestream: error" not in err, err[-3000:]
    said = re.findall(r"commit of (.*) abandoned at shutdown \(the brokers did not answer within 5 s\)", err)
    # one line, naming the positions (with a results topic, only where a batch done before the broker died was not
    # committed yet: the batches after it are not done, their results unacknowledged)
    assert len(said) == 1 or (results_topic and not said), err[-3000:]
    assert "commit on revocation failed" not in err, err[-3000:]    # the close does not try (and say) it again
    if not busy:
        # the checkpoint holds what could not be committed: a restart from it loses nothing
        positions = checkpoint.latest(ck).offsets
        assert said[0] == ", ".join(f"{t}[{p}]@{positions[(t, p)][0]}" for t, p in sorted(positions)), err[-3000:]
        assert sum(position_offset(pos) for pos in positions.values()) == total
