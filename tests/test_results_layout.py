"""The results directory as datasets: hive-partitioned job outputs, an appended summary, retention, reruns."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import vinestream
from vinestream.connectors.parquet import FANOUT, AppendedTable, ParquetResultsSink, read_summary
from vinestream.stream.app.cli import main
from vinestream.stream.pipeline import BatchResult


def result(epoch, counts=None, outputs=None, summaries=None):
    return BatchResult(epoch, None, dict(counts if counts is not None else {"events": epoch}), {"insert": 0.001},
                       job_summaries=dict(summaries or {}), job_outputs=outputs or {})


def ranks(epoch):
    return pa.table({"vertex": pa.array([1, 2, 3], pa.int64()), "rank": [0.2, 0.3, 0.5 + epoch]})


def test_sample_replay_reads_back_as_hive_datasets(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["replay", "--structure", "coo", "--jobs", "pagerank,triangles", "--out", str(out),
                 "--no-progress"]) == 0
    summary = pq.read_table(out / "summary.parquet")
    epochs = summary.column("epoch").to_pylist()
    assert epochs == list(range(1, len(epochs) + 1)) and len(epochs) == 12       # 59,835 events / 5,000
    # pyarrow.dataset with hive partitioning and pandas both see an epoch column
    pagerank = ds.dataset(out / "pagerank", partitioning="hive").to_table()
    assert sorted(set(pagerank.column("epoch").to_pylist())) == epochs
    frame = pd.read_parquet(out / "pagerank")
    assert "epoch" in frame.columns and len(frame) == pagerank.num_rows
    last = frame[frame["epoch"].astype(int) == epochs[-1]]
    assert len(last) == summary.column("vertices").to_pylist()[-1]               # one row per vertex, one epoch
    assert abs(last["rank"].sum() - 1.0) < 1e-9
    results = vinestream.read_results(out)
    assert set(results) >= {"summary", "dead_letters", "pagerank", "triangles", "run"}
    assert results["pagerank"].column("epoch").type == pa.int64()
    assert results["summary"].num_rows == 12 and "wall_time" in results["summary"].column_names
    assert vinestream.read_results(out, epoch="last")["triangles"].column("epoch").to_pylist() == \
        [epochs[-1]] * summary.column("vertices").to_pylist()[-1]
    # a second run into the same --out refuses, and says how to proceed
    capsys.readouterr()
    assert main(["replay", "--structure", "coo", "--jobs", "none", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "already holds results" in err and "--overwrite" in err and err.count("\n") == 1
    assert main(["replay", "--structure", "coo", "--jobs", "triangles", "--out", str(out), "--overwrite",
                 "--no-progress", "--keep-epochs", "2", "--output-every", "5"]) == 0
    assert not (out / "pagerank").exists()                                        # the old run's outputs went
    assert sorted(os.listdir(out / "triangles")) == ["epoch=10", "epoch=12"]      # multiples of 5 + the last, 2 kept
    assert pq.read_table(out / "summary.parquet").num_rows == 12                  # no duplicated rows


def test_summary_appends_parts_and_merges_them(tmp_path):
    sink = ParquetResultsSink(tmp_path, summary_interval_s=0)
    n = FANOUT ** 2 + 3
    sizes = []
    for epoch in range(1, n + 1):
        sink.write(result(epoch))
        sizes.append(len(os.listdir(tmp_path / "summary.parquet")))
    sink.close()
    assert max(sizes) <= 2 * FANOUT                     # never one file per epoch
    got = pq.read_table(tmp_path / "summary.parquet")
    assert got.column("epoch").to_pylist() == list(range(1, n + 1))
    assert pd.read_parquet(tmp_path / "summary.parquet")["epoch"].tolist() == list(range(1, n + 1))


def test_summary_schema_grows_and_restart_truncates(tmp_path):
    sink = ParquetResultsSink(tmp_path, summary_interval_s=0)
    for epoch in range(1, 6):
        sink.write(result(epoch, summaries={"triangles": epoch} if epoch >= 3 else None))   # jobs_every = 3
    sink.close()
    got = pq.read_table(tmp_path / "summary.parquet")
    assert got.column("triangles").to_pylist() == [None, None, 3, 4, 5]
    again = ParquetResultsSink(tmp_path, summary_interval_s=0)                  # a resumed run replays epoch 4
    again.write(result(4, {"events": 40}))
    again.close()
    got = read_summary(tmp_path / "summary.parquet")
    assert got.column("epoch").to_pylist() == [1, 2, 3, 4] and got.column("events").to_pylist()[-1] == 40


def test_the_final_catch_up_of_the_jobs_joins_the_last_row(tmp_path):
    sink = ParquetResultsSink(tmp_path, summary_interval_s=0)
    sink.write(result(1))
    sink.write(result(2))
    sink.write(BatchResult(2, None, {}, {}, job_summaries={"pagerank_iterations": 7},
                           job_outputs={"pagerank": ranks(2)}))
    sink.close()
    rows = pq.read_table(tmp_path / "summary.parquet").to_pylist()
    assert [r["epoch"] for r in rows] == [1, 2] and rows[-1]["pagerank_iterations"] == 7 and rows[-1]["events"] == 2


def test_output_every_writes_the_last_epoch_at_close(tmp_path):
    sink = ParquetResultsSink(tmp_path, output_every=4, keep_epochs=1)
    for epoch in range(1, 8):
        sink.write(result(epoch, outputs={"pagerank": ranks(epoch)}))
    sink.flush()                                   # the background writes are done when flush returns
    assert os.listdir(tmp_path / "pagerank") == ["epoch=4"]
    sink.close()
    assert os.listdir(tmp_path / "pagerank") == ["epoch=7"]
    assert vinestream.read_results(tmp_path)["pagerank"].column("rank").to_pylist()[-1] == 7.5


class CountingOutputs(dict):
    """Job outputs that count which epochs' tables were read (the pipeline's are computed on read)."""

    def __init__(self, epoch, reads):
        super().__init__(pagerank=ranks(epoch))
        self.epoch, self.reads = epoch, reads

    def __getitem__(self, job):
        self.reads.append(self.epoch)
        return super().__getitem__(job)


def test_output_every_computes_only_the_outputs_it_writes(tmp_path):
    """Epochs between two outputs cost no output table: only the written epochs and the last one are read."""
    reads = []
    sink = ParquetResultsSink(tmp_path, output_every=3)
    for epoch in range(1, 9):
        sink.write(result(epoch, outputs=CountingOutputs(epoch, reads)))
    sink.settle()                   # the tables are made on the writer thread
    assert reads == [3, 6]
    sink.close()
    assert reads == [3, 6, 8]
    assert sorted(os.listdir(tmp_path / "pagerank")) == ["epoch=3", "epoch=6", "epoch=8"]


def test_job_outputs_are_synced_by_flush(tmp_path, monkeypatch):
    """A job output is fsynced once, by the flush that precedes a commit or checkpoint, not when written."""
    from vinestream.connectors import parquet
    synced = []
    real = parquet.os.fsync
    monkeypatch.setattr(parquet.os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")),
                                                         real(fd)))
    sink = ParquetResultsSink(tmp_path, summary_interval_s=3600)
    sink.write(result(1, outputs={"pagerank": ranks(1)}))        # the first summary row is flushed at once
    sink.write(result(2, outputs={"pagerank": ranks(2)}))
    sink.write(result(3, outputs={"pagerank": ranks(3)}))

    def epochs():
        return sorted(os.path.basename(os.path.dirname(p)) for p in synced if "pagerank" in p)
    sink.settle()                                   # the first row's timed append runs on the writer thread
    assert epochs() == ["epoch=1"]
    sink.flush()
    assert epochs() == ["epoch=1", "epoch=2", "epoch=3"]
    assert pq.read_table(tmp_path / "pagerank" / "epoch=2" / "part-0.parquet").column("rank").to_pylist()[-1] == 2.5


@pytest.mark.parametrize("has_syncfs", [True, False], ids=["syncfs", "no-syncfs"])
def test_a_flush_of_many_job_outputs_syncs_their_file_system_once(tmp_path, monkeypatch, has_syncfs):
    """From SYNCFS_FILES job outputs on, a flush syncs the file system holding them once (``syncfs``) instead of
    fsyncing each file; where ``syncfs`` is missing, each file is fsynced."""
    from vinestream.connectors import parquet
    if has_syncfs and parquet._SYNCFS is None:
        pytest.skip("no syncfs in this C library")
    calls, fsynced = [], []
    real_syncfs, real_fsync = parquet._SYNCFS, parquet.os.fsync
    monkeypatch.setattr(parquet, "_SYNCFS", (lambda fd: (calls.append(fd), real_syncfs(fd))[1]) if has_syncfs else None)
    monkeypatch.setattr(parquet.os, "fsync", lambda fd: (fsynced.append(os.readlink(f"/proc/self/fd/{fd}")),
                                                         real_fsync(fd)))
    sink = ParquetResultsSink(tmp_path, summary_interval_s=3600)
    sink.write(result(1, outputs={"pagerank": ranks(1)}))
    sink.settle()
    calls.clear()
    fsynced.clear()
    n = parquet.SYNCFS_FILES + 2
    for epoch in range(2, 2 + n):
        sink.write(result(epoch, outputs={"pagerank": ranks(epoch)}))
    sink.flush()
    outputs = [p for p in fsynced if "pagerank" in p]
    if has_syncfs:
        assert len(calls) == 1 and outputs == []
    else:
        assert calls == [] and len(outputs) == n
    assert sorted(os.listdir(tmp_path / "pagerank")) == sorted(f"epoch={e}" for e in range(1, 2 + n))


def test_bad_retention_values_are_rejected():
    with pytest.raises(ValueError):
        ParquetResultsSink("/tmp/unused-vinestream-test", keep_epochs=0)


def test_summary_invalid_counts_every_dead_letter(tmp_path, capsys):
    """Issue 10: a batch in which no event was valid used to vanish from the summary's invalid count."""
    log = tmp_path / "mixed.parquet"
    pq.write_table(pa.table({"op": ["add"] * 10 + ["bogus"] * 10 + ["add"] * 3, "src": list(range(23)),
                             "dst": list(range(1, 24))}), log)
    assert main(["replay", str(log), "--batch-size", "10", "--jobs", "none", "--out", str(tmp_path / "o"),
                 "--no-progress"]) == 0
    results = vinestream.read_results(tmp_path / "o")
    assert sum(results["summary"].column("invalid").to_pylist()) == results["dead_letters"].num_rows == 10


def test_job_outputs_are_written_off_the_callers_thread_and_failures_surface(tmp_path, monkeypatch):
    """The files are encoded and written by the sink's writer thread (overlapping the next batch); a
    write that fails raises from a later write or flush, never silently."""
    import threading

    from vinestream.connectors import parquet
    writers, real = [], parquet.write_atomic

    def recording(table, path, **kw):
        if "pagerank" in str(path):                # job outputs (the summary's appends are the caller's)
            writers.append(threading.current_thread().name)
        if "epoch=3" in str(path):
            raise OSError("disk full")
        real(table, path, **kw)

    monkeypatch.setattr(parquet, "write_atomic", recording)
    sink = ParquetResultsSink(tmp_path, summary_interval_s=3600)
    sink.write(result(1, outputs={"pagerank": ranks(1)}))
    sink.write(result(2, outputs={"pagerank": ranks(2)}))
    sink.flush()
    assert sorted(os.listdir(tmp_path / "pagerank")) == ["epoch=1", "epoch=2"]
    assert writers and all(name.startswith("vinestream-results") for name in writers)
    assert threading.current_thread().name not in writers
    sink.write(result(3, outputs={"pagerank": ranks(3)}))
    with pytest.raises(OSError, match="disk full"):
        sink.flush()


def test_the_timed_summary_append_does_not_hold_up_the_batches(tmp_path, monkeypatch):
    """The append that ``summary_interval_s`` times runs on the writer thread: ``write`` returns while it
    waits on the disk, ``flush`` waits for it, and a rewound epoch waits for it before it truncates."""
    import threading
    import time

    from vinestream.connectors.parquet import AppendedTable
    gate = threading.Event()
    real = AppendedTable.append

    def slow(self, table):
        assert gate.wait(10)
        return real(self, table)
    monkeypatch.setattr(AppendedTable, "append", slow)
    sink = ParquetResultsSink(tmp_path, summary_interval_s=3600)
    t0 = time.monotonic()
    sink.write(result(1, outputs={"pagerank": ranks(1)}))      # the first row: a timed append, queued
    sink.write(result(2, outputs={"pagerank": ranks(2)}))
    assert time.monotonic() - t0 < 5 and sink.rewrites == 1
    assert read_summary(tmp_path / "summary.parquet") is None          # nothing appended yet
    threading.Timer(0.3, gate.set).start()
    t0 = time.monotonic()
    sink.write(result(1, {"events": 7}))                       # a rewind to epoch 1: the append lands first
    assert time.monotonic() - t0 >= 0.2
    sink.close()
    got = read_summary(tmp_path / "summary.parquet")
    assert got.column("epoch").to_pylist() == [1] and got.column("events").to_pylist() == [7]


def test_resident_memory_is_read_at_most_every_rss_every_s(tmp_path, monkeypatch):
    """The summary's ``rss_bytes`` comes from /proc at most every RSS_EVERY_S (a read gives up the interpreter lock,
    which the apply thread then waits to get back); the rows in between repeat the last reading, which is the
    process's resident memory."""
    from vinestream.connectors import parquet
    reads = []
    real = parquet._read_rss
    monkeypatch.setattr(parquet, "_read_rss", lambda: reads.append(1) or real())
    monkeypatch.setattr(parquet, "_rss_read", [-float("inf"), 0])
    monkeypatch.setattr(parquet, "RSS_EVERY_S", 3600.0)
    sink = ParquetResultsSink(tmp_path, summary_interval_s=0)
    for epoch in range(1, 6):
        sink.write(result(epoch))
    monkeypatch.setattr(parquet, "RSS_EVERY_S", 0.0)
    sink.write(result(6))
    sink.close()
    rss = vinestream.read_results(tmp_path)["summary"].column("rss_bytes").to_pylist()
    assert len(reads) == 2 and len(rss) == 6
    assert len(set(rss[:5])) == 1 and rss[0] > 10 * 2**20        # one reading for the first five rows, of a process


class _Killed(BaseException):
    """The process dies here (raised from inside a file removal: nothing after it runs)."""


@pytest.mark.parametrize("dies_at_removal", [1, 2, 3])
def test_a_summary_cut_killed_half_way_is_cut_again_without_doubled_rows(tmp_path, monkeypatch, dies_at_removal):
    """A resumed run cuts the summary back to its checkpoint's epoch (truncate).  That merged every part into one
    first and removed the old parts after: killed in between, the merged part [1-150] stayed beside [81-160], and
    the next run's cut kept epochs 81-150 twice.  Whatever removal the kill comes at, the next cut leaves each
    epoch once."""
    def rows(first, last):
        return pa.table({"epoch": pa.array(range(first, last + 1), pa.int64()),
                         "events": pa.array([10 * e for e in range(first, last + 1)], pa.int64())})
    path = tmp_path / "summary.parquet"
    table = AppendedTable(path)
    for first, last in ((1, 80), (81, 160), (161, 170), (171, 175)):
        table.append(rows(first, last))
    real_unlink, calls = Path.unlink, []

    def unlink(self, *args, **kwargs):
        calls.append(self.name)
        if len(calls) == dies_at_removal:
            raise _Killed(self.name)
        return real_unlink(self, *args, **kwargs)
    monkeypatch.setattr(Path, "unlink", unlink)
    with pytest.raises(_Killed):
        table.truncate(151)                          # the resumed run's first write, killed
    monkeypatch.setattr(Path, "unlink", real_unlink)
    again = AppendedTable(path)                      # the next start
    again.truncate(151)
    again.append(rows(151, 175))
    got = read_summary(path).column("epoch").to_pylist()
    assert sorted(got) == list(range(1, 176)), f"doubled: {sorted({e for e in got if got.count(e) > 1})[:5]}"


def test_the_results_of_a_live_run_read_while_its_summary_parts_merge(tmp_path):
    """A reader of a running job's results (the report, a dashboard) listed the summary's parts, and a merge
    removed some before it opened them: a fifth of its reads failed with FileNotFoundError.  Each read lists
    again then, and always sees each epoch so far once."""
    writer_done = threading.Event()
    table = AppendedTable(tmp_path / "summary.parquet")      # opened first: before it, tmp_path holds no results

    def write():
        try:
            for epoch in range(1, 401):                 # one part an epoch: FANOUT of them merge, over and over
                table.append(pa.table({"epoch": pa.array([epoch], pa.int64()), "events": [epoch]}))
        finally:
            writer_done.set()
    writer = threading.Thread(target=write)
    writer.start()
    reads = 0
    while not writer_done.is_set():
        epochs = vinestream.read_results(tmp_path)["summary"]["epoch"].to_pylist()
        assert epochs == list(range(1, len(epochs) + 1))
        reads += 1
    writer.join()
    assert reads > 10 and len(read_summary(tmp_path / "summary.parquet")) == 400


def test_a_directory_without_results_is_no_results_directory(tmp_path, capsys):
    """read_results of a directory holding no results (a mistyped --out, a folder of other files) read as empty
    tables, as a run that had read nothing; it names the directory and what one holds, and `report` says so in one
    line.  A directory a sink has opened, or with only _run.json (a run that read nothing), is one."""
    other = tmp_path / "notes"
    other.mkdir()
    (other / "readme.txt").write_text("not results")
    (other / "pagerank").mkdir()                     # a folder named as a job, without epochs
    with pytest.raises(ValueError, match=f"^{other} is not a results directory: it holds no summary.parquet, "
                                         r"dead_letter.parquet, <job>/epoch=<n>/ or _run.json"):
        vinestream.read_results(other)
    assert main(["report", str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"vinestream: error: {other} is not a results directory: it holds no summary.parquet, "
                   "dead_letter.parquet, <job>/epoch=<n>/ or _run.json (give the --out of a replay or run)"], err
    ParquetResultsSink(tmp_path / "opened").close()
    assert vinestream.read_results(tmp_path / "opened")["summary"].num_rows == 0
    (tmp_path / "ran").mkdir()
    (tmp_path / "ran" / "_run.json").write_text('{"command": "replay"}')
    assert vinestream.read_results(tmp_path / "ran")["run"].num_rows == 1


def test_the_parquet_and_kafka_summaries_count_trailing_rejects_alike(tmp_path, monkeypatch):
    """Rejects read after the last epoch join its row: add_invalid of the Parquet and of the Kafka results sink
    each added ``invalid`` and ``batches`` with its own copy of the same lines.  Both amend through
    connectors.base.add_rejected now, and their newest rows agree."""
    import json

    from vinestream.connectors import kafka
    from vinestream.connectors.base import add_rejected
    parquet = ParquetResultsSink(tmp_path, summary_interval_s=0)
    assert not parquet.add_invalid(3, 2)                            # no row yet: the caller keeps its carry
    parquet.write(result(1, {"events": 5}), invalid=1, batches=1)
    assert parquet.add_invalid(3, 2)
    parquet.flush()

    class Producer:
        def __init__(self, *args, **kwargs):
            self.sent = []

        def send_all(self, topic, records):
            self.sent += records
    monkeypatch.setattr(kafka, "DurableProducer", Producer)
    topic = kafka.KafkaResultsSink("127.0.0.1:1", "results")
    assert not topic.add_invalid(3, 2)
    topic.write(result(1, {"events": 5}), invalid=1, batches=1)
    assert topic.add_invalid(3, 2)
    sent = json.loads(topic.out.sent[-1][1])
    row = read_summary(tmp_path / "summary.parquet").to_pylist()[-1]
    assert (row["invalid"], row["batches"]) == (sent["invalid"], sent["batches"]) == (4, 3)
    assert add_rejected({"epoch": 2, "invalid": None}, 3, 2) == {"epoch": 2, "invalid": 3, "batches": 2}


def test_a_replay_killed_without_checkpoints_leaves_the_dead_letters_its_summary_counts(tmp_path):
    """The summary is appended a second after a batch while the dead letters waited in memory for the end of the
    run (or a checkpoint): a replay killed with SIGKILL in between left summary.parquet counting invalid 40 and no
    dead_letter.parquet.  The dead letters are made durable no later than the summary row that counts them."""
    import signal
    import subprocess
    import sys
    import time
    n, bad = 200, 40
    log = tmp_path / "log.parquet"
    ops = [1] * (n - bad) + [9] * bad + [1] * n            # op 9: unknown_op dead letters in the first batch
    pq.write_table(pa.table({"op": pa.array(ops, pa.int8()), "src": list(range(1, 2 * n + 1)),
                             "dst": list(range(2, 2 * n + 2)),
                             # the second batch is due a minute of event time later: --speed 1 holds the run there
                             "ts": pa.array([0] * n + [60_000] * n, pa.timestamp("ms"))}), log)
    out = tmp_path / "out"
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "vinestream", "replay", str(log), "--batch-size", str(n),
                             "--jobs", "none", "--out", str(out), "--speed", "1", "--no-progress", "--backend", "cpu"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not list((out / "summary.parquet").glob("part-*.parquet")) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    results = vinestream.read_results(out)
    assert results["summary"].to_pylist()[0]["invalid"] == bad          # the row was there when the kill came
    assert results["dead_letters"].num_rows == bad
    assert set(results["dead_letters"].column("reason").to_pylist()) == {"unknown_op"}


def test_a_run_that_wrote_no_row_leaves_an_out_directory_the_next_run_takes(tmp_path, capsys):
    """The results sink makes summary.parquet/ when it opens: a run that then wrote no row (its brokers out of reach,
    a stop during start-up) left it empty, and the same command run again was refused ("already holds results
    (summary.parquet)").  An empty dataset directory is nothing to write over; one with a part is."""
    from vinestream.connectors.parquet import written_results
    out = tmp_path / "out"
    ParquetResultsSink(out).close()
    assert (out / "summary.parquet").is_dir() and written_results(out) == []
    for _ in range(2):          # the second run finds the first one's rows
        code = main(["replay", "--structure", "coo", "--jobs", "none", "--out", str(out), "--no-progress"])
    assert code == 2 and "already holds results (summary.parquet)" in capsys.readouterr().err
    assert written_results(out) == ["summary.parquet"]
