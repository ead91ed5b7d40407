"""Replay with checkpoints: killed with SIGKILL at any moment and rerun, it ends as if it never stopped."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.event_logs import oracle_of, random_events, write_log
from vinestream.connectors.parquet import ReplaySource, read_results
from vinestream.stream.app import checkpoint
from vinestream.stream.app.replay import replay
from vinestream.stream.pipeline import build_pipeline

ROOT = Path(__file__).resolve().parent.parent
JOBS = "pagerank,bfs,triangles"


def graph_of(directory, structure: str = "coo", jobs=()):
    """The pipeline restored from the latest checkpoint in ``directory``: (edges, vertices, job results)."""
    pipeline = build_pipeline(structure=structure, backend="cpu", jobs=jobs, bfs_sources=[-7])
    checkpoint.restore(pipeline, checkpoint.latest(directory))
    edges = pipeline.edges()
    return (set(zip(edges.column("src").to_pylist(), edges.column("dst").to_pylist(),
                    edges.column("weight").to_pylist())),
            set(pipeline.vertices().column("vertex").to_pylist()),
            pipeline)


def replay_command(log, ckpt, out, structure="coo"):
    return [sys.executable, "-m", "vinestream", "replay", str(log), "--structure", structure,
            "--batch-size", "400", "--checkpoint-dir", str(ckpt), "--checkpoint-every-batches", "3",
            "--out", str(out), "--jobs", JOBS, "--bfs-source", "-7", "--no-progress", "--backend", "cpu"]


def test_replay_resumes_from_its_checkpoint_in_process(tmp_path):
    """A replay stopped after some batches (SIGTERM-like) and run again equals one uninterrupted replay."""
    log = write_log(tmp_path / "log.parquet", random_events(6000, seed=3))
    whole, _ = replay([log], structure="graphvine", batch_size=500, checkpoint_dir=str(tmp_path / "a"))
    assert whole.batches == 12 and whole.restored_from is None
    again, pipeline = replay([log], structure="graphvine", batch_size=500, checkpoint_dir=str(tmp_path / "a"))
    assert again.batches == 0 and again.restored_from is not None     # nothing left to do
    oracle = oracle_of(random_events(6000, seed=3))
    edges = pipeline.edges()
    assert set(zip(edges.column("src").to_pylist(), edges.column("dst").to_pylist())) == set(oracle.edges)


@pytest.mark.parametrize("kill_after_checkpoints", [1, 3, 6])
def test_replay_killed_with_sigkill_and_rerun_ends_in_the_same_state(tmp_path, kill_after_checkpoints):
    events = random_events(12_000, seed=kill_after_checkpoints)
    log = write_log(tmp_path / "log.parquet", events)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    # the reference: one uninterrupted replay
    subprocess.run(replay_command(log, tmp_path / "ref-ckpt", tmp_path / "ref-out"), check=True, env=env,
                   capture_output=True, cwd=ROOT, timeout=300)

    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    proc = subprocess.Popen(replay_command(log, ckpt, out), env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            done = len(list(ckpt.glob("ckpt-*"))) if ckpt.exists() else 0
            if done and checkpoint.latest(ckpt).epoch >= 3 * kill_after_checkpoints:
                break
            time.sleep(0.005)
        assert proc.poll() is None, "the replay finished before it could be killed: make the log longer"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    killed_at = checkpoint.latest(ckpt).epoch
    assert killed_at < 30                                 # 12,000 events in batches of 400: 30 epochs

    rerun = subprocess.run([*replay_command(log, ckpt, out), "--resume"], env=env, cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert "resumed from" in rerun.stdout

    ref_edges, ref_vertices, ref_pipeline = graph_of(tmp_path / "ref-ckpt", jobs=JOBS.split(","))
    got_edges, got_vertices, got_pipeline = graph_of(ckpt, jobs=JOBS.split(","))
    assert got_edges == ref_edges and got_vertices == ref_vertices
    oracle = oracle_of(events)
    assert {(s, d) for s, d, _ in got_edges} == set(oracle.edges) and got_vertices == oracle.vertices
    assert got_pipeline.epoch == ref_pipeline.epoch == 30
    # the results directory: one summary row per epoch, the same counts as the uninterrupted run
    ref_summary = pq.read_table(tmp_path / "ref-out" / "summary.parquet").select(["epoch", "events", "edges"])
    got_summary = pq.read_table(out / "summary.parquet").select(["epoch", "events", "edges"])
    assert got_summary.equals(ref_summary)
    # and the job outputs of the last epoch: BFS and triangles exactly; PageRank up to summation order
    # (a structure rebuilt from a checkpoint may list a vertex's edges in another order)
    for job in ("bfs", "triangles"):
        assert pq.read_table(out / job / "epoch=30" / "part-0.parquet").sort_by("vertex").equals(
            pq.read_table(tmp_path / "ref-out" / job / "epoch=30" / "part-0.parquet").sort_by("vertex"))
    got = pq.read_table(out / "pagerank" / "epoch=30" / "part-0.parquet").sort_by("vertex")
    ref = pq.read_table(tmp_path / "ref-out" / "pagerank" / "epoch=30" / "part-0.parquet").sort_by("vertex")
    assert got.column("vertex").equals(ref.column("vertex"))
    assert np.allclose(got.column("rank").to_numpy(), ref.column("rank").to_numpy(), rtol=0, atol=1e-12)


def test_the_input_thread_waits_for_the_apply_thread_instead_of_spinning(tmp_path, monkeypatch):
    """Once the log is read (or the queue is full), the input thread sleeps until a batch is applied:
    a thread spinning on empty polls holds the GIL that the apply thread's host work needs."""
    from vinestream.connectors.parquet import ReplaySource
    from vinestream.stream.pipeline.pipeline import Pipeline
    log = write_log(tmp_path / "log.parquet", random_events(600, vertices=40, seed=5))
    polls = []
    real_poll, real_apply = ReplaySource.poll, Pipeline.apply
    monkeypatch.setattr(ReplaySource, "poll", lambda self, *a, **k: (polls.append(1), real_poll(self, *a, **k))[1])
    monkeypatch.setattr(Pipeline, "apply", lambda self, ev: (time.sleep(0.05), real_apply(self, ev))[1])
    report, _ = replay([str(log)], structure="coo", backend="cpu", batch_size=100)
    assert report.batches == 6
    assert len(polls) <= 4 * report.batches + 10, len(polls)     # a spinning loop polls thousands of times


@pytest.mark.parametrize("changed, match", [
    ({"undirected": True}, "undirected False there, True here"),
    ({"bfs_sources": [-8]}, r"bfs sources \[-7\] there, \[-8\] here"),
    ({"job_options": {"pagerank": {"damping": 0.5}}}, "pagerank damping 0.85 there, 0.5 here"),
    ({"keep_self_loops": True}, "keep_self_loops False there, True here"),
])
def test_a_resume_with_other_settings_is_refused(tmp_path, changed, match):
    """A checkpoint keeps the settings its graph and job state depend on; resuming with others is one error (it
    went on silently: a new BFS source kept the old one, --undirected mixed both kinds of edges, and the results
    were those of no run).  Adding a job is fine: its state is computed afresh."""
    log = write_log(tmp_path / "log.parquet", random_events(3000, seed=5))
    settings = {"jobs": ["pagerank", "bfs"], "bfs_sources": [-7]}
    replay([log], batch_size=500, checkpoint_dir=str(tmp_path / "ck"), **settings)
    more = write_log(tmp_path / "more.parquet", random_events(500, seed=6))
    with pytest.raises(ValueError, match=match):
        replay([log, more], batch_size=500, checkpoint_dir=str(tmp_path / "ck"), **{**settings, **changed})
    added, pipeline = replay([log, more], batch_size=500, checkpoint_dir=str(tmp_path / "ck"),
                             jobs=["pagerank", "bfs", "triangles"], bfs_sources=[-7])
    assert added.restored_from is not None and added.batches == 1
    assert [job.name for job in pipeline.jobs] == ["pagerank", "bfs", "triangles"]


def test_a_checkpoint_of_another_log_is_refused(tmp_path):
    """A replay whose --checkpoint-dir holds the checkpoint of a replay of other logs stopped with one error: it
    stacked its log on that log's graph."""
    a = write_log(tmp_path / "a.parquet", random_events(1000, seed=7))
    b = write_log(tmp_path / "b.parquet", random_events(1000, seed=8))
    replay([a], batch_size=500, checkpoint_dir=str(tmp_path / "ck"))
    with pytest.raises(ValueError, match=f"the checkpoint is of a replay of {a}, which this replay"):
        replay([b], batch_size=500, checkpoint_dir=str(tmp_path / "ck"))


def _summary_counts(out) -> list:
    return read_results(out)["summary"].select(["epoch", "events", "invalid"]).to_pylist()


def test_dead_letters_after_the_last_epoch_are_counted_in_the_summary(tmp_path):
    """A batch of dead letters only has no epoch: its count joins the next epoch's summary row.  A run whose
    input ended with one left it out of every row (summary invalid 1 against 201 dead letters and self-loops);
    the newest row counts it now."""
    log = tmp_path / "log.parquet"
    pq.write_table(pa.table({"op": pa.array([1] * 200 + [9] * 200, pa.int8()), "src": list(range(1, 401)),
                             "dst": [i % 97 + 2 for i in range(200)] + list(range(2, 202))}), log)
    report, _ = replay([str(log)], batch_size=200, out=str(tmp_path / "out"))
    rows = _summary_counts(tmp_path / "out")
    assert report.invalid == 200 and report.batches == 2
    assert rows == [{"epoch": 1, "events": 200, "invalid": 200}]


def test_dead_letters_between_a_checkpoint_and_a_kill_join_the_next_epoch_once(tmp_path):
    """Batch 2 holds dead letters only and the checkpoint after it is the last before a SIGKILL: the resumed
    run's epoch 2 counts them, as the uninterrupted run's does (the checkpoint lost them: invalid 0)."""
    n = 200
    log = tmp_path / "log.parquet"
    pq.write_table(pa.table({"op": pa.array([1] * n + [9] * n + [1] * n, pa.int8()),
                             "src": list(range(1, 3 * n + 1)), "dst": list(range(2, 3 * n + 2)),
                             # the last batch is due 60 s of event time later: --speed 1 holds the run there
                             "ts": pa.array([0] * 2 * n + [60_000] * n, pa.timestamp("ms"))}), log)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def command(out, ckpt, *extra):
        return [sys.executable, "-m", "vinestream", "replay", str(log), "--batch-size", str(n), "--jobs", "triangles",
                "--out", str(out), "--checkpoint-dir", str(ckpt), "--checkpoint-every-batches", "2",
                "--no-progress", "--backend", "cpu", *extra]
    subprocess.run(command(tmp_path / "ref", tmp_path / "ref-ckpt"), check=True, env=env, capture_output=True)
    proc = subprocess.Popen(command(tmp_path / "out", tmp_path / "ckpt", "--speed", "1"), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (tmp_path / "ckpt" / "LATEST").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert checkpoint.latest(tmp_path / "ckpt").epoch == 1          # killed while waiting for batch 3
    resumed = subprocess.run(command(tmp_path / "out", tmp_path / "ckpt", "--resume"), env=env, capture_output=True,
                             text=True)
    assert resumed.returncode == 0, resumed.stderr[-3000:]     # (check=True showed the command, not why it failed)
    expected = [{"epoch": 1, "events": n, "invalid": 0}, {"epoch": 2, "events": n, "invalid": n}]
    assert _summary_counts(tmp_path / "ref") == expected
    assert _summary_counts(tmp_path / "out") == expected


def test_a_second_run_on_the_same_directories_is_refused_while_the_first_runs(tmp_path):
    """Two runs on one --out (or one --checkpoint-dir) at once wrote over each other's parts and checkpoints: one
    failed mid-run and the other's dead letters came out doubled (263 for 224).  The second is refused in one line
    now; the lock goes with the first run's process, even one killed with SIGKILL."""
    n = 100
    log = tmp_path / "log.parquet"
    pq.write_table(pa.table({"op": pa.array([1] * n + [9] * 10, pa.int8()), "src": list(range(1, n + 11)),
                             "dst": list(range(2, n + 12)),
                             # the second batch is due an hour of event time later: --speed 1 holds the first run
                             "ts": pa.array([0] * 50 + [3_600_000] * (n - 40), pa.timestamp("ms"))}), log)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def command(out, *extra):
        return [sys.executable, "-m", "vinestream", "replay", str(log), "--batch-size", "50", "--jobs", "none",
                "--out", str(tmp_path / out), "--checkpoint-dir", str(tmp_path / "ckpt"),
                "--checkpoint-every-batches", "1", "--no-progress", "--backend", "cpu", *extra]
    first = subprocess.Popen(command("out", "--speed", "1"), env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "ckpt" / "LATEST").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        for out, flag in (("out", "--out"), ("other", "--checkpoint-dir")):
            second = subprocess.run(command(out, "--resume"), env=env, capture_output=True, text=True)
            lines = second.stderr.strip().splitlines()
            assert second.returncode == 2 and len(lines) == 1, second.stderr
            assert f"{flag} " in lines[0] and f"is in use by another vinestream run (pid {first.pid})" in lines[0]
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    subprocess.run(command("out", "--resume"), check=True, env=env, capture_output=True)
    results = read_results(tmp_path / "out")
    assert results["summary"]["epoch"].to_pylist() == [1, 2]          # the last batch: dead letters only
    assert results["dead_letters"].num_rows == 10


def test_a_resume_from_another_working_directory_finds_its_log(tmp_path, monkeypatch):
    """The checkpoint named the log as it was given (relative): a resume from another directory (cron, a service)
    took that name against its own directory and refused the same log as another one."""
    write_log(tmp_path / "log.parquet", random_events(1000, seed=9))
    monkeypatch.chdir(tmp_path)
    first, _ = replay(["log.parquet"], batch_size=300, checkpoint_dir="ck")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    again, _ = replay([str(tmp_path / "log.parquet")], batch_size=300, checkpoint_dir=str(tmp_path / "ck"))
    assert first.batches == 4 and again.restored_from is not None and again.batches == 0


def test_a_checkpoint_naming_its_log_relative_and_absolute_resumes_from_the_later_row(tmp_path, monkeypatch):
    """A checkpoint written before positions named logs absolutely holds the relative name, and after one resume
    both names: the later row is where the replay goes on (the older one re-applied events)."""
    events = random_events(1200, seed=10)
    write_log(tmp_path / "log.parquet", events)
    monkeypatch.chdir(tmp_path)
    source = ReplaySource(["log.parquet"], batch_size=300)
    # in a manifest's order: sorted by name, "/..." before "log.parquet"
    source.seek({(str(tmp_path / "log.parquet"), 0): 900, ("log.parquet", 0): 300})
    rows = [b.first_row for b in source]
    assert rows == [900]


def test_a_checkpoint_between_job_runs_resumes_to_the_same_job_results(tmp_path):
    """With jobs every 3 batches, a checkpoint at batch 4 held no trace of batch 4's changes for the jobs: the
    restored pipeline recomputed them from scratch at batch 6, and PageRank's ranks and iterations there differed
    from the uninterrupted run's (within its tolerance, not exactly).  The pending deltas are in the checkpoint."""
    events = random_events(3000, seed=11, vertex_ops=False)
    batches = [events.slice(i, 500) for i in range(0, 3000, 500)]

    def build():
        return build_pipeline(structure="coo", backend="cpu", jobs=["pagerank", "triangles"], jobs_every=3)
    whole = build()
    for batch in batches[:4]:
        whole.apply(batch)
    checkpoint.save(tmp_path, whole, {("log", 0): 2000})
    resumed = build()
    checkpoint.restore(resumed, checkpoint.latest(tmp_path))
    for batch in batches[4:]:
        ours, theirs = whole.apply(batch), resumed.apply(batch)
    assert theirs.epoch == ours.epoch == 6 and theirs.job_summaries == ours.job_summaries
    assert resumed.results()["pagerank"].equals(whole.results()["pagerank"])


def _stopped_by_sigterm_at_epoch_5_and_resumed(tmp_path, *flags):
    """(uninterrupted results, results of a replay stopped by SIGTERM at epoch 5 of 6 and resumed)."""
    events = random_events(3000, seed=12, vertex_ops=False)
    n = 500
    # batch 5 is due an hour of event time after batch 4: --speed 1 holds the run there for the SIGTERM
    ts = np.where(np.arange(3000) < 4 * n, 0, 3_600_000)
    log = write_log(tmp_path / "log.parquet", events.set_column(4, "ts", pa.array(ts, pa.timestamp("ms"))))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def command(out, ckpt, *extra):
        return [sys.executable, "-m", "vinestream", "replay", str(log), "--structure", "coo", "--batch-size", str(n),
                "--jobs", "pagerank,triangles", *flags, "--out", str(tmp_path / out), "--checkpoint-dir",
                str(tmp_path / ckpt), "--checkpoint-every-batches", "4", "--no-progress", "--backend", "cpu", *extra]
    subprocess.run(command("ref", "ref-ckpt"), check=True, env=env, capture_output=True)
    proc = subprocess.Popen(command("out", "ckpt", "--speed", "1"), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (tmp_path / "ckpt" / "LATEST").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    assert checkpoint.latest(tmp_path / "ckpt").epoch == 5        # the batch waited for is drained
    subprocess.run(command("out", "ckpt", "--resume"), check=True, env=env, capture_output=True)
    return read_results(tmp_path / "ref"), read_results(tmp_path / "out")


def test_a_sigterm_between_job_runs_resumes_to_the_uninterrupted_results(tmp_path):
    """With jobs every 3 batches, SIGTERM's drain ran the jobs' catch-up at the epoch it stopped at (5): the
    resumed run's results had job outputs at epoch 5 that the uninterrupted run has none at, and PageRank went on
    from other ranks.  A stop to go on later leaves the jobs where they are (the checkpoint keeps their pending
    changes): job outputs at epochs 3 and 6, as uninterrupted."""
    ref, got = _stopped_by_sigterm_at_epoch_5_and_resumed(tmp_path, "--jobs-every", "3")
    assert sorted(set(got["pagerank"]["epoch"].to_pylist())) == [3, 6]
    assert got["pagerank"].equals(ref["pagerank"]) and got["triangles"].equals(ref["triangles"])
    columns = ["epoch", "events", "edges", "pagerank_iterations", "triangles"]
    assert got["summary"].select(columns).equals(ref["summary"].select(columns))


def test_a_sigterm_between_outputs_writes_no_extra_epoch(tmp_path):
    """--output-every 4 writes an epoch's job outputs at multiples of 4 and at the last epoch; a run stopped by
    SIGTERM at epoch 5 wrote epoch 5's as its last, which the resumed run kept beside epoch 6's."""
    ref, got = _stopped_by_sigterm_at_epoch_5_and_resumed(tmp_path, "--output-every", "4")
    assert sorted(set(got["triangles"]["epoch"].to_pylist())) == [4, 6]
    assert got["pagerank"].equals(ref["pagerank"]) and got["triangles"].equals(ref["triangles"])


def test_a_replay_refused_for_its_arguments_holds_no_lock(tmp_path):
    """The results and checkpoint directories are locked for the run; a vinestream.replay refused for its arguments
    (here a decoder that cannot cut windows) held them until its process ended, so a long-lived Python session
    kept every other process off them.  The lock is taken after the checks, and released on every way out."""
    from vinestream.stream.app import preflight
    from vinestream.stream.errors import UsageError
    write_log(tmp_path / "log.parquet", random_events(200, seed=11))
    with pytest.raises(UsageError, match="--decoder cudf replays batches cut by size"):
        replay([str(tmp_path / "log.parquet")], out=str(tmp_path / "out"), checkpoint_dir=str(tmp_path / "ck"),
               decoder="cudf", window=5)
    assert preflight._locks == {}
    report, _ = replay([str(tmp_path / "log.parquet")], out=str(tmp_path / "out"), checkpoint_dir=str(tmp_path / "ck"),
                       batch_size=100)
    assert report.batches == 2 and preflight._locks == {}


def test_a_resume_without_all_of_the_checkpoints_logs_is_refused(tmp_path):
    """A checkpoint of a replay of [a, b] resumed by a replay of [b] alone went on from b's row (0 batches) on a
    graph holding a's events.  Every log of the checkpoint must be one of the replay's; more may follow them."""
    a = write_log(tmp_path / "a.parquet", random_events(600, seed=12))
    b = write_log(tmp_path / "b.parquet", random_events(600, seed=13))
    c = write_log(tmp_path / "c.parquet", random_events(600, seed=14))
    replay([a, b], batch_size=500, checkpoint_dir=str(tmp_path / "ck"))
    for logs in ([b], [b, c]):
        with pytest.raises(ValueError, match=f"the checkpoint is of a replay of {a}, {b}, which this replay .* "
                                             "does not read: replay the same log"):
            replay(logs, batch_size=500, checkpoint_dir=str(tmp_path / "ck"))
    more, pipeline = replay([a, b, c], batch_size=500, checkpoint_dir=str(tmp_path / "ck"))
    assert more.restored_from is not None and more.batches == 2
    expected = oracle_of(pa.concat_tables([random_events(600, seed=s) for s in (12, 13, 14)]))
    assert pipeline.edges().num_rows == len(expected.edges)


def test_a_resume_that_gives_the_logs_in_another_order_is_refused(tmp_path):
    """A checkpoint of a replay of [a, b] stopped in b (or before it), resumed as [b, a], went on after a: b (or
    b's rest) was never read, 0 batches, and the graph lacked b's events.  Refused in one error; logs the
    checkpoint read whole may be given in any order (it reads none of them again: the same state as
    uninterrupted), and the same order resumes."""
    logs = {s: random_events(600, seed=s) for s in (12, 13, 14)}
    a, b, c = (write_log(tmp_path / f"{name}.parquet", logs[s]) for name, s in zip("abc", logs))

    def stopped(ckpt, positions):
        """The checkpoint of a replay stopped after the rows ``positions`` names (in that order)."""
        pipeline = build_pipeline(structure="coo", backend="cpu")
        for path, rows in positions.items():
            pipeline.apply(logs[{a: 12, b: 13, c: 14}[path]].slice(0, rows))
        checkpoint.save(tmp_path / ckpt, pipeline, {(path, 0): rows for path, rows in positions.items()})
        return str(tmp_path / ckpt)

    for ckpt, positions in (("in-b", {a: 600, b: 300}), ("after-a", {a: 600})):
        with pytest.raises(ValueError, match=rf"this replay \({b}, {a}\) gives {b} \((read to row 300 of 600|not "
                                             rf"read)\) before {a}, but the checkpoint read {a} first"):
            replay([b, a], batch_size=500, checkpoint_dir=stopped(ckpt, positions))
        report, pipeline = replay([a, b], batch_size=500, checkpoint_dir=str(tmp_path / ckpt))
        assert report.restored_from is not None
        assert pipeline.edges().num_rows == len(oracle_of(pa.concat_tables([logs[12], logs[13]])).edges)
    report, pipeline = replay([b, a, c], batch_size=500, checkpoint_dir=stopped("in-c", {a: 600, b: 600, c: 300}))
    assert report.batches == 1
    assert pipeline.edges().num_rows == len(oracle_of(pa.concat_tables(list(logs.values()))).edges)


def test_a_log_replaced_since_the_checkpoint_is_refused(tmp_path):
    """A resume took a log only by its path and row: with the file written again with other rows (convert run
    again to the same output), it went on at the old row of the new file, a graph of both files' rows, exit 0.
    The checkpoint keeps each log's fingerprint (size, footer digest) and a resume in a changed log is refused;
    the same rows written again (the same file) still resume, to the uninterrupted state."""
    log = tmp_path / "log.parquet"
    events = random_events(1000, seed=21)
    write_log(log, events)
    replay([str(log)], batch_size=300, checkpoint_dir=str(tmp_path / "ck"), checkpoint_every_batches=1)
    ck = checkpoint.latest(tmp_path / "ck")
    assert ck.extra["source"] == {str(log.resolve()): ReplaySource([str(log)]).fingerprints[0]}
    # the checkpoint of a stop after 600 rows: the replay's own, its position moved back
    pipeline = build_pipeline(structure="coo", backend="cpu")
    pipeline.apply(events.slice(0, 600))
    checkpoint.save(tmp_path / "mid", pipeline, {(str(log.resolve()), 0): 600}, extra={"source": ck.extra["source"]})
    write_log(log, random_events(1000, seed=22))                 # another log, same path and length
    with pytest.raises(ValueError, match=r"is not the file the checkpoint read \(it changed since"):
        replay([str(log)], batch_size=300, checkpoint_dir=str(tmp_path / "mid"))
    write_log(log, events)                                       # the same rows again: the same file
    report, pipeline = replay([str(log)], batch_size=300, checkpoint_dir=str(tmp_path / "mid"))
    assert report.restored_from is not None and report.batches == 2
    assert pipeline.edges().num_rows == len(oracle_of(events).edges)


def test_a_log_shorter_than_its_checkpointed_row_is_refused_without_a_fingerprint(tmp_path):
    """A checkpoint written before the fingerprints (no ``source`` in its extra) still refuses a log with fewer
    rows than its position: the resume went on to the next log, the rows it had read gone from the file."""
    log = write_log(tmp_path / "log.parquet", random_events(400, seed=23))
    pipeline = build_pipeline(structure="coo", backend="cpu")
    checkpoint.save(tmp_path / "old", pipeline, {(str(Path(log).resolve()), 0): 700})
    with pytest.raises(ValueError, match="has 400 rows, but the checkpoint read 700 of it"):
        replay([log], batch_size=300, checkpoint_dir=str(tmp_path / "old"))


def test_a_changed_log_on_the_command_line_is_one_line_and_exit_2(tmp_path):
    """The command line: one line naming the log, exit 2, and the results of the first run untouched."""
    log = tmp_path / "log.parquet"
    write_log(log, random_events(600, seed=24))
    run = [sys.executable, "-m", "vinestream", "replay", str(log), "--out", str(tmp_path / "out"), "--checkpoint-dir",
           str(tmp_path / "ck"), "--jobs", "none", "--batch-size", "200", "--no-progress"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("VINESTREAM_")}
    assert subprocess.run(run, cwd=ROOT, env=env, capture_output=True, timeout=120).returncode == 0
    before = _summary_counts(tmp_path / "out")
    write_log(log, random_events(900, seed=25))
    got = subprocess.run([*run, "--resume"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert got.returncode == 2, got.stderr
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and str(log.resolve()) in lines[0] and "not the file the checkpoint read" in lines[0]
    assert _summary_counts(tmp_path / "out") == before
