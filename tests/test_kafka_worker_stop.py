"""A worker stopped by SIGTERM: every event applied once across the stop, and a prompt stop with the broker gone."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from tests.kafka_helpers import arrow_messages, run, worker_config
from tests.pipelines import RecordingPipeline
from vinestream.connectors.kafka import create_topic

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
