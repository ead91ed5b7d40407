"""``--batch-size`` is an upper bound: a batch never holds more events, however many a poll or a message has.

QA: batches followed polls (``--max-poll-records``, 500 messages), so Arrow messages of 20k events with
``--batch-size 3000`` made one batch of 59,835.  The worker now releases at most what the gathered batch still
takes from the event-time merge, cutting a message between events where it must; the merge position of the cut
(``offset, skip``) goes into the checkpoint, so a worker killed between the parts of a message and restarted ends
in the same state (tested with SIGKILL).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.event_logs import oracle_of, random_events, write_log
from tests.kafka_helpers import run, worker_config
from tests.pipelines import ObservedPipeline
from vinestream.connectors.kafka import produce
from vinestream.connectors.tansu import FAST_GROUP
from vinestream.stream.app import checkpoint

pytestmark = pytest.mark.kafka
ROOT = Path(__file__).resolve().parent.parent


class _Sizes(ObservedPipeline):
    """Records the size of every batch applied."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.sizes = []

    def apply(self, events, next_events=None):
        self.sizes.append(events.num_rows)
        return super().apply(events, next_events=next_events)


@pytest.mark.parametrize("fmt, per_message, batch_size", [("arrow", 2000, 300), ("arrow", 2000, 2000),
                                                          ("json", 1, 100)])
def test_no_batch_exceeds_batch_size(kafka_bootstrap, tmp_path, fmt, per_message, batch_size):
    log = random_events(6000, vertices=40, seed=per_message + batch_size)     # ts strictly increasing
    topic = f"bounded-{fmt}-{batch_size}-{uuid.uuid4().hex[:6]}"
    produce(write_log(tmp_path / "log.parquet", log), topic, kafka_bootstrap, fmt=fmt, partitions=2,
            batch_events=per_message)
    report, pipe = run(worker_config(kafka_bootstrap, topic, f"g-{topic}", format=fmt, batch_size=batch_size,
                                     max_poll_records=500, batch_latency_ms=200), pipeline=_Sizes())
    assert report.events == 6000 and report.stopped_by == "end_of_input"
    assert max(pipe.sizes) <= batch_size, pipe.sizes
    assert sum(pipe.sizes) == 6000
    assert pipe.edges() == oracle_of(log).edges and pipe.vertex_set() == oracle_of(log).vertices


def test_sigkill_between_the_parts_of_a_cut_message_then_restart_gives_the_same_graph(kafka_bootstrap, tmp_path):
    log = random_events(4000, vertices=30, seed=71)          # vertex deletes: the order matters
    topic, group = f"cut-{uuid.uuid4().hex[:6]}", f"g-cut-{uuid.uuid4().hex[:6]}"
    sent = produce(write_log(tmp_path / "log.parquet", log), topic, kafka_bootstrap, fmt="arrow", partitions=2,
                   batch_events=1000)                        # messages of up to 1000 events, cut into 150s
    assert sent["messages"] <= 6
    out, ck, phase = tmp_path / "out", tmp_path / "ck", tmp_path / "phase"
    args = ["run", "--bootstrap-servers", kafka_bootstrap, "--topic", topic, "--format", "arrow",
            "--structure", "coo", "--backend", "cpu", "--out", str(out), "--resume", "--checkpoint-dir", str(ck),
            "--checkpoint-every-batches", "1", "--batch-size", "150", "--until-end", "--metrics-port", "-1",
            "--log-level", "WARNING", "--session-timeout-ms", str(FAST_GROUP["session_timeout_ms"]),
            "--max-poll-interval-ms", str(FAST_GROUP["max_poll_interval_ms"])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}

    def start(n):       # `vinestream run` with a slowed apply (tests/worker_main.py chaos); a new group each start
        argv = [*args, "--group", f"{group}-{n}"]
        mode = "chaos" if n == 1 else "chaos-unslowed"          # the restart only has to finish
        return subprocess.Popen([sys.executable, "-m", "tests.worker_main", mode, str(phase), *argv], cwd=ROOT,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    proc = start(1)
    deadline = time.monotonic() + 120
    cut = None
    while cut is None and proc.poll() is None and time.monotonic() < deadline:
        latest = checkpoint.latest(ck)
        skips = {key: pos for key, pos in (latest.offsets if latest else {}).items() if pos[1] > 0}
        if skips:
            cut = latest
        time.sleep(0.01)
    assert cut is not None, proc.communicate()[1].decode()[-3000:]
    proc.send_signal(signal.SIGKILL)        # between two parts of a message: its checkpoint is inside it
    proc.communicate()
    proc = start(2)
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err.decode()[-3000:]
    final = checkpoint.latest(ck)
    restored = ObservedPipeline("coo")
    checkpoint.restore(restored, final)
    oracle = oracle_of(log)
    assert restored.edges() == oracle.edges and restored.vertex_set() == oracle.vertices
    summary = pq.read_table(out / "summary.parquet").to_pylist()
    assert max(row["events"] for row in summary) <= 150
    assert sum(row["events"] for row in summary) == 4000        # each epoch once (the restart rewrote its own)
    assert summary[-1]["edges"] == len(oracle.edges)
