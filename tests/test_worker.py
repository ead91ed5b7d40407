"""Checkpoints (atomic write, exact restore) and the worker's graceful shutdown."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.event_logs import oracle_of, random_events, write_log
from tests.kafka_helpers import committed
from tests.pipelines import ObservedPipeline
from vinestream.algorithms import create_job
from vinestream.stream.app import checkpoint

ROOT = Path(__file__).resolve().parent.parent


def with_jobs():
    return ObservedPipeline(jobs=[create_job("triangles", np), create_job("bfs", np, sources=[1, 2])])


def test_checkpoint_round_trip_restores_structure_and_state(tmp_path):
    log = random_events(2000, seed=9)
    p = with_jobs()
    p.apply(log.slice(0, 1200))
    p.apply(log.slice(1200))
    offsets = {("edges", 0): 1234, ("edges", 3): 7}
    path = checkpoint.save(tmp_path, p, offsets)
    ck = checkpoint.latest(tmp_path)
    assert ck.path == path and ck.epoch == 2 and ck.offsets == offsets
    q = with_jobs()
    checkpoint.restore(q, ck)
    assert q.edges() == p.edges() == oracle_of(log).edges
    assert q.vertex_set() == oracle_of(log).vertices
    assert q.epoch == p.epoch
    assert q.vertex_map.free.tolist() == p.vertex_map.free.tolist()       # same ids get reused next
    # the restored pipeline (jobs included, incrementally) goes on exactly like the original
    more = random_events(500, seed=10)
    rp, rq = p.apply(more), q.apply(more)
    assert q.edges() == p.edges()
    for job in ("triangles", "bfs"):
        assert rq.job_outputs[job].sort_by("vertex").equals(rp.job_outputs[job].sort_by("vertex"))


def test_checkpoint_restore_in_chunks_and_pruning(tmp_path):
    log = random_events(1500, seed=1)
    p = ObservedPipeline()
    for i in range(3):
        p.apply(log.slice(i * 500, 500))
        checkpoint.save(tmp_path, p, {("t", 0): 500 * (i + 1)}, keep=2)
    kept = sorted(x.name for x in tmp_path.glob("ckpt-*"))
    assert [name[:17] for name in kept] == ["ckpt-000000000002", "ckpt-000000000003"]
    ck = checkpoint.latest(tmp_path)
    q = ObservedPipeline()
    checkpoint.restore_structure(q.structure, ck, chunk_edges=7)     # many small insert_edges calls
    q.load_state(ck.state)
    assert q.edges() == p.edges()


def test_a_half_written_checkpoint_is_ignored(tmp_path):
    p = ObservedPipeline()
    p.apply(random_events(100, seed=2))
    good = checkpoint.save(tmp_path, p, {("t", 0): 100})
    (tmp_path / ".tmp-ckpt-000000000009-1-1").mkdir()          # a worker died while writing
    (tmp_path / ".tmp-ckpt-000000000009-1-1" / "structure_rows.arrow").write_bytes(b"partial")
    assert checkpoint.latest(tmp_path).path == good
    assert checkpoint.latest(tmp_path / "nothing") is None


@pytest.mark.kafka
def test_sigterm_drains_commits_checkpoints_and_exits_0(kafka_bootstrap, tmp_path):
    from vinestream.connectors.kafka import produce
    log = random_events(4000, seed=21)
    topic, group = "events-sigterm", "g-sigterm"
    produce(write_log(tmp_path / "log.parquet", log), topic, kafka_bootstrap, fmt="json", partitions=1)
    results, ck = tmp_path / "results.jsonl", tmp_path / "ckpt"
    proc = subprocess.Popen([sys.executable, "-m", "tests.worker_main", kafka_bootstrap, topic, group, str(ck),
                             str(results)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not results.exists() or len(results.read_text().splitlines()) < 2):
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert json.loads(out.decode().strip().splitlines()[-1])["stopped_by"] == "SIGTERM"
    lines = [json.loads(x) for x in results.read_text().splitlines()]
    last = lines[-1]["offsets"][f"{topic}:0"]
    assert last < 4000, "stopped mid-stream"
    # the batch in hand was finished: committed == offsets of the last durable result == checkpoint
    assert committed(kafka_bootstrap, group, topic, 1) == {0: last}
    ckpt = checkpoint.latest(ck)
    assert ckpt.epoch == lines[-1]["epoch"] and {k: v[0] for k, v in ckpt.offsets.items()} == {(topic, 0): last}
    q = ObservedPipeline()
    checkpoint.restore(q, ckpt)
    assert q.edges() == oracle_of(log.slice(0, last)).edges
    assert np.all(np.diff([x["epoch"] for x in lines]) == 1)
