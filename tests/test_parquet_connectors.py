"""vinestream.connectors.parquet: replay batching (size, ts windows, pacing, resume) and the results sink layout."""
import datetime as dt
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from vinestream.connectors.dead_letters import ParquetDeadLetterSink
from vinestream.connectors.parquet import ParquetResultsSink, ReplaySource
from vinestream.connectors.sample import sample_log_path
from vinestream.connectors.synthetic import random_events
from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA, EVENT_SCHEMA
from vinestream.stream.pipeline import BatchResult


@pytest.fixture
def log(tmp_path):
    n = 1000
    t = random_events(n, 50, seed=1).set_column(4, "ts", pa.array(np.arange(n) * 1000, pa.timestamp("ms")))
    pq.write_table(t, tmp_path / "a.parquet", row_group_size=128)
    return tmp_path / "a.parquet", t


class FakeClock:
    def __init__(self):
        self.now, self.slept = 100.0, []

    def clock(self):
        return self.now

    def sleep(self, s):
        self.slept.append(s)
        self.now += s


def test_batches_by_size_cover_the_log(log):
    path, t = log
    src = ReplaySource(path, batch_size=300)
    assert src.total_rows == 1000
    batches = list(src)
    assert [(b.first_row, b.last_row) for b in batches] == [(0, 299), (300, 599), (600, 899), (900, 999)]
    assert pa.concat_tables([b.events for b in batches]).equals(t)
    assert all(b.file == str(path) for b in batches)


def test_batches_by_window(log):
    path, t = log
    batches = list(ReplaySource(path, window=dt.timedelta(seconds=90)))
    ts = t.column("ts").cast(pa.int64()).to_numpy()
    expect = np.bincount(ts // 90_000)
    assert [b.num_rows for b in batches] == expect[expect > 0].tolist()
    for b in batches:
        w = b.events.column("ts").cast(pa.int64()).to_numpy() // 90_000
        assert len(set(w.tolist())) == 1
    capped = list(ReplaySource(path, window=dt.timedelta(seconds=90), batch_size=40))
    assert max(b.num_rows for b in capped) == 40
    assert sum(b.num_rows for b in capped) == 1000


def test_unsorted_late_events_join_current_window(tmp_path):
    ts = np.array([0, 5, 61, 3, 62, 130, 10, 200], dtype=np.int64) * 1000
    t = random_events(len(ts), 5, seed=0, op_probs=(1, 0, 0, 0)).set_column(4, "ts", pa.array(ts, pa.timestamp("ms")))
    pq.write_table(t, tmp_path / "u.parquet")
    sizes = [b.num_rows for b in ReplaySource(tmp_path / "u.parquet", window=dt.timedelta(minutes=1))]
    assert sizes == [2, 3, 2, 1]


@pytest.mark.parametrize("bad", [10**15, 10**16])
def test_a_rejected_time_cuts_no_window(tmp_path, bad):
    """A time the validation rejects (past 2200; past 2**53, which the float cast refused with a traceback) is a
    bad_timestamp dead letter and no window's time: the rows after it keep their own windows."""
    t = pa.table({"op": pa.array([1] * 6, pa.int8()), "src": [1, 2, 3, 4, 5, 6], "dst": [2, 3, 4, 5, 6, 7],
                  "ts": pa.array([0, 10_000, bad, 20_000, 30_000, 40_000], pa.int64())})
    pq.write_table(t, tmp_path / "bad.parquet")
    batches = list(ReplaySource(tmp_path / "bad.parquet", window=dt.timedelta(seconds=5)))
    assert [(b.first_row, b.last_row) for b in batches] == [(0, 0), (1, 2), (3, 3), (4, 4), (5, 5)]
    assert [r["reason"] for b in batches for r in b.dead.to_pylist()] == ["bad_timestamp"]


def test_text_times_cut_windows(tmp_path):
    """Event times in a text column (the validation reads them, and the events carry them) cut windows and pace
    the replay as a timestamp column does; they were read as no time at all, so the whole file was one batch."""
    t = pa.table({"op": ["add"] * 4, "src": ["1", "2", "3", "4"], "dst": ["2", "3", "4", "5"],
                  "ts": ["0", "10000", "1970-01-01T00:00:20Z", "30000"]})
    pq.write_table(t, tmp_path / "text.parquet")
    batches = list(ReplaySource(tmp_path / "text.parquet", window=dt.timedelta(seconds=5)))
    assert [b.num_rows for b in batches] == [1, 1, 1, 1]
    fc = FakeClock()
    list(ReplaySource(tmp_path / "text.parquet", batch_size=1, speed=10.0, clock=fc.clock, sleep=fc.sleep))
    assert fc.now - 100.0 == pytest.approx(3.0)          # last event at 30 s, at 10x


def test_a_resume_between_the_pieces_of_a_capped_window_cuts_the_same_batches(tmp_path):
    """A window capped at batch_size is cut into pieces, and a checkpoint may fall between them.  Resumed there, a
    late row (ts of an earlier window) at the piece's head began a window of its own: the batches after the resume,
    so the epochs, differed from the run's that never stopped."""
    ts = np.array([0, 61, 62, 30, 63, 130], dtype=np.int64) * 1000
    t = random_events(len(ts), 5, seed=0, op_probs=(1, 0, 0, 0)).set_column(4, "ts", pa.array(ts, pa.timestamp("ms")))
    path = tmp_path / "capped.parquet"
    pq.write_table(t, path)
    window = dt.timedelta(minutes=1)
    whole = [(b.first_row, b.last_row) for b in ReplaySource(path, window=window, batch_size=2)]
    assert whole == [(0, 0), (1, 2), (3, 4), (5, 5)]
    for k in range(1, len(whole)):
        source = ReplaySource(path, window=window, batch_size=2)
        source.seek({(str(path), 0): whole[k - 1][1] + 1})
        assert [(b.first_row, b.last_row) for b in source] == whole[k:]


def test_pacing_with_fake_clock(log):
    path, _ = log
    fc = FakeClock()
    batches = []
    for b in ReplaySource(path, window=dt.timedelta(seconds=100), speed=10.0, clock=fc.clock, sleep=fc.sleep):
        batches.append((b.first_row, fc.now))
    # windows of 100 s at 10x: one every 10 s of wall time, the first after 10 s
    assert [round(now - 100.0, 6) for _, now in batches] == [10.0 * (i + 1) for i in range(10)]
    fc = FakeClock()
    list(ReplaySource(path, batch_size=500, speed=2.0, clock=fc.clock, sleep=fc.sleep))
    assert fc.now - 100.0 == pytest.approx(999 / 2.0)     # last event at 999 s, at 2x


def test_a_stop_ends_a_pacing_wait_at_once(tmp_path):
    """At one tenth of real time the second batch is due in ten hours: wake (what a stop calls) ends the wait, and
    the batch comes at once, then every later one."""
    ts = np.array([0, 3600, 7200], dtype=np.int64) * 1000
    t = random_events(3, 5, seed=0, op_probs=(1, 0, 0, 0)).set_column(4, "ts", pa.array(ts, pa.timestamp("ms")))
    pq.write_table(t, tmp_path / "slow.parquet")
    source = ReplaySource(tmp_path / "slow.parquet", batch_size=1, speed=0.1)
    assert source.poll().events.num_rows == 1                # the first event: due at once
    waker = threading.Timer(0.5, source.wake)
    waker.start()
    started = time.monotonic()
    assert source.poll().events.num_rows == 1 and source.poll().events.num_rows == 1
    assert time.monotonic() - started < 30                  # not ten hours
    waker.join()


def test_sigterm_stops_a_paced_replay(tmp_path):
    """`vinestream replay --speed` waits for each batch's event time; SIGTERM drains and exits 0 at once (the
    wait held the run until the next batch was due)."""
    ts = np.array([0, 3600, 7200], dtype=np.int64) * 1000
    t = random_events(3, 5, seed=0, op_probs=(1, 0, 0, 0)).set_column(4, "ts", pa.array(ts, pa.timestamp("ms")))
    pq.write_table(t, tmp_path / "slow.parquet")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "vinestream", "replay", str(tmp_path / "slow.parquet"),
                             "--speed", "1", "--batch-size", "1", "--jobs", "none", "--out", str(out),
                             "--no-progress", "--backend", "cpu"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (out / "summary.parquet").exists() and time.monotonic() < deadline:  # the first batch applied
        time.sleep(0.2)
    time.sleep(1.0)                                          # now waiting an hour for the second
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the paced replay did not stop within 60 s of SIGTERM")
    assert proc.returncode == 0, err
    assert pq.read_table(out / "summary.parquet").column("events").to_pylist()[0] == 1


def test_directory_and_resume(tmp_path):
    for i in range(3):
        pq.write_table(random_events(100, 10, seed=i), tmp_path / f"part{i}.parquet")
    src = ReplaySource(tmp_path, batch_size=64)
    assert src.total_rows == 300
    batches = list(src)
    assert sum(b.num_rows for b in batches) == 300
    assert all(b.last_row < 100 for b in batches)            # never spans files
    resumed = list(ReplaySource(tmp_path, batch_size=64, start=(batches[2].file, 50)))
    assert resumed[0].file == batches[2].file and resumed[0].first_row == 50
    assert sum(b.num_rows for b in resumed) == 300 - 100 - 50


def test_a_dataset_directory_replays_its_parts_in_number_order(tmp_path):
    """pyarrow's write_dataset names its files part-0 ... part-11: by plain string order part-10 and part-11 came
    before part-2, so an edge deleted in part-10 and added in part-2 stayed in the graph.  Numbers in names count
    by value (zero-padded and dated names keep their order), for replay and for the checks before it."""
    from vinestream import replay
    from vinestream.stream.app.preflight import parquet_files
    n_parts = 12
    for i in range(n_parts):
        # part-2 adds 1->2, part-10 deletes it, part-11 adds 3->4; every other part adds an edge of its own
        op, src, dst = {2: (1, 1, 2), 10: (2, 1, 2), 11: (1, 3, 4)}.get(i, (1, 100 + i, 200 + i))
        pq.write_table(pa.table({"op": pa.array([op], pa.int8()), "src": [src], "dst": [dst]}),
                       tmp_path / f"part-{i}.parquet")
    expected = [str(tmp_path / f"part-{i}.parquet") for i in range(n_parts)]
    assert [b.file for b in ReplaySource(tmp_path, batch_size=10)] == expected
    assert parquet_files([tmp_path]) == expected
    _, pipeline = replay([str(tmp_path)], batch_size=1, jobs=[])
    edges = pipeline.edges().to_pylist()
    pairs = {(e["src"], e["dst"]) for e in edges}
    assert (1, 2) not in pairs and (3, 4) in pairs and len(pairs) == n_parts - 2


def test_replay_validates_garbage_with_file_rows(tmp_path):
    t = pa.table({"op": ["add", "bogus", "add", "add"], "src": ["1", "2", "x", "4"], "dst": [2, 3, 4, None]})
    pq.write_table(t, tmp_path / "g.parquet")
    (b,) = list(ReplaySource(tmp_path / "g.parquet", batch_size=10))
    assert b.events.schema == EVENT_SCHEMA and b.events.column("src").to_pylist() == [1]
    assert list(zip(b.dead.column("position").to_pylist(), b.dead.column("reason").to_pylist())) == \
        [(1, "unknown_op"), (2, "bad_id"), (3, "missing_dst")]
    assert b.dead.column("source").to_pylist() == [str(tmp_path / "g.parquet")] * 3


def _corrupt_log(path, groups: int, bad: int, rows: int = 10_000):
    """A log of ``groups`` row groups of ``rows`` events whose row group ``bad`` has a page header overwritten."""
    n = groups * rows
    i = np.arange(n)
    pq.write_table(pa.table({"op": pa.array(np.ones(n, np.int8)), "src": pa.array(i % 1000),
                             "dst": pa.array((i * 7 + 1) % 1000)}), path, row_group_size=rows, compression="none")
    data = bytearray(path.read_bytes())
    at = pq.ParquetFile(path).metadata.row_group(bad).column(1).data_page_offset
    data[at:at + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("read_ahead", [0, 50_000])
@pytest.mark.parametrize("batch_size", [1000, 3000])
def test_a_corrupt_row_group_ends_the_replay_after_every_readable_row(tmp_path, batch_size, read_ahead):
    """A corrupt page in the third of three row groups: the dataset scan, which reads ahead, raised at its first
    batch, and a replay applied the first row group only (10 of 20 batches), then stopped with "internal error
    ... a bug" (QA).  Now every row before the unreadable row group comes out, in the same batches as from a
    whole file (a last partial batch too), then one ValueError naming the file and the row group."""
    log = _corrupt_log(tmp_path / "corrupt.parquet", 3, 2)
    source = ReplaySource([str(log)], batch_size=batch_size, read_ahead_rows=read_ahead)
    rows = []
    with pytest.raises(ValueError, match=r"corrupt.parquet: row group 2 \(rows 20,000 to 29,999\) cannot be read"):
        while not source.at_end():
            rows.append(source.poll().events.num_rows)
    source.close()
    assert sum(rows) == 20_000
    assert rows == [min(batch_size, 20_000 - k) for k in range(0, 20_000, batch_size)]


def test_a_corrupt_log_on_the_command_line_is_one_line_and_exit_2(tmp_path):
    """The command line: one line (not "internal error ... a bug"), exit 2, the readable rows' epochs written;
    a log corrupt in its first row group: the same line, no epoch."""
    for bad, epochs in ((1, 10), (0, 0)):
        log = _corrupt_log(tmp_path / f"bad{bad}.parquet", 2, bad)
        out = tmp_path / f"out{bad}"
        got = subprocess.run([sys.executable, "-m", "vinestream", "replay", str(log), "--out", str(out), "--jobs",
                              "none", "--batch-size", "1000", "--no-progress"], capture_output=True, text=True,
                             timeout=120)
        assert got.returncode == 2, got.stderr
        lines = got.stderr.strip().splitlines()
        assert len(lines) == 1 and f"row group {bad} (rows {bad * 10_000:,} to" in lines[0], lines
        summary = out / "summary.parquet"
        assert (pq.read_table(summary).num_rows if summary.exists() else 0) == epochs


def test_sample_log():
    src = ReplaySource(sample_log_path(), batch_size=20_000)
    assert src.total_rows == 59_835
    b = next(iter(src))
    assert b.events.num_rows == 20_000 and b.dead.num_rows == 0


def test_sink_layout_and_summary_readable_after_each_epoch(tmp_path):
    out = tmp_path / "out"
    sink = ParquetResultsSink(out, summary_interval_s=0)
    for epoch in range(4):
        summary = {"events": 10 * epoch, "inserted": np.int64(epoch), "insert_ms": 0.5 + epoch}
        if epoch == 2:
            summary["triangles"] = 7
        sink.write(epoch_result(epoch, summary, {"pagerank": pa.table({"vertex": [1, 2], "rank": [0.4, 0.6]}),
                                          "bfs": pa.table({"vertex": [1], "distance": [epoch]})}))
        got = pq.read_table(out / "summary.parquet")
        assert got.column("epoch").to_pylist() == list(range(epoch + 1))
        assert got.column("events").to_pylist() == [10 * e for e in range(epoch + 1)]
    assert got.column("triangles").to_pylist() == [None, None, 7, None]
    assert pq.read_table(out / "bfs" / "epoch=3" / "part-0.parquet").column("distance").to_pylist() == [3]
    dead_sink = ParquetDeadLetterSink(out, interval_s=0)
    dead_sink.write(DEAD_LETTER_SCHEMA.empty_table())
    dead = pa.Table.from_pylist([{"source": "t", "partition": 0, "position": 5, "reason": "bad_id",
                                  "detail": "d", "payload": "p"}], schema=DEAD_LETTER_SCHEMA)
    dead_sink.write(dead)
    dead_sink.write(dead)
    sink.close()
    dead_sink.close()
    assert pq.read_table(out / "dead_letter.parquet").num_rows == 2
    assert sorted(p.name for p in out.iterdir()) == ["bfs", "dead_letter.parquet", "pagerank", "summary.parquet"]
    assert not list(out.rglob("*.tmp"))


def test_sink_throttles_and_restarts(tmp_path):
    now = [0.0]
    sink = ParquetResultsSink(tmp_path, summary_interval_s=10.0, clock=lambda: now[0])
    for epoch in range(50):
        sink.write(epoch_result(epoch, {"events": 1}))
        now[0] += 0.1
    assert sink.rewrites == 1                                 # the first epoch only (one part appended)
    sink.settle()                                             # timed appends are the writer thread's
    assert pq.read_table(tmp_path / "summary.parquet").num_rows == 1
    now[0] += 10
    sink.write(epoch_result(50, {"events": 1}))
    sink.settle()
    assert pq.read_table(tmp_path / "summary.parquet").num_rows == 51
    sink.write(epoch_result(51, {"events": 1}))
    sink.flush()
    assert pq.read_table(tmp_path / "summary.parquet").num_rows == 52
    # a restarted worker replays from epoch 40: the summary stays one row per epoch
    again = ParquetResultsSink(tmp_path, summary_interval_s=0)
    again.write(epoch_result(40, {"events": 2}))
    again.close()
    got = pq.read_table(tmp_path / "summary.parquet")
    assert got.column("epoch").to_pylist() == list(range(41)) and got.column("events").to_pylist()[-1] == 2


def epoch_result(epoch, summary, outputs=None):
    """A BatchResult whose summary row is ``summary`` (what the pipeline hands the sinks)."""
    return BatchResult(epoch, None, dict(summary), {}, job_outputs=outputs or {})


def test_summary_keeps_the_job_columns_of_rows_after_a_row_without_them(tmp_path):
    """With --jobs-every N the jobs run at every Nth epoch: the summary keeps their columns, null at the epochs
    where they did not run.  The rows were made a table by the first pending row's keys, so a flush that began at
    an epoch without jobs lost every job column (found by QA: the report had no triangle plot)."""
    import vinestream
    vinestream.replay(None, out=str(tmp_path / "o"), batch_size=5000, jobs=["pagerank", "triangles"], jobs_every=5,
                      progress=False)
    summary = vinestream.read_results(str(tmp_path / "o"))["summary"].to_pylist()
    last = summary[-1]["epoch"]
    ran = [row["epoch"] for row in summary if row.get("triangles") is not None]
    assert ran == [e for e in range(1, last + 1) if e % 5 == 0 or e == last]
    assert all(row["pagerank_iterations"] is not None for row in summary if row["epoch"] in ran)


def test_dead_letter_parts_merge_and_a_merge_killed_half_way_is_read_once(tmp_path):
    """The results sink flushes the dead letters before each summary append (a second apart at most), so a run with
    a steady trickle of bad input wrote a part a second: trailing parts of one size class merge, as the summary's
    do; a merge killed before it removed the parts it holds leaves them inside its range, which the next open
    removes and read_results reads once."""
    from vinestream.connectors.parquet import FANOUT, read_results

    def letters(first, n):
        return pa.Table.from_pylist([{"source": "t", "partition": 0, "position": first + i, "reason": "bad_id",
                                      "detail": "", "payload": ""} for i in range(n)], schema=DEAD_LETTER_SCHEMA)
    sink = ParquetDeadLetterSink(tmp_path)
    for i in range(100):
        sink.write(letters(i, 1))
        sink.flush()                                     # one flush a summary append
    parts = sorted((tmp_path / "dead_letter.parquet").iterdir())
    assert len(parts) < 2 * FANOUT, [p.name for p in parts]
    assert sink.table().column("position").to_pylist() == list(range(100))
    for i in range(100, 108):
        sink.write(letters(i, 1))
        sink.flush()
    merged = tmp_path / "dead_letter.parquet" / f"part-{96:015d}-{8:09d}.parquet"
    assert merged.exists()                              # rows 96..103, merged from one-row parts
    for i in (96, 97):                                  # two of them put back, as a kill before their removal leaves
        pq.write_table(letters(i, 1), tmp_path / "dead_letter.parquet" / f"part-{i:015d}-{1:09d}.parquet")
    ParquetResultsSink(tmp_path).close()
    assert read_results(tmp_path)["dead_letters"].column("position").to_pylist() == list(range(108))
    reopened = ParquetDeadLetterSink(tmp_path)
    assert reopened.durable == 108 and reopened.table().column("position").to_pylist() == list(range(108))
    assert not (tmp_path / "dead_letter.parquet" / f"part-{96:015d}-{1:09d}.parquet").exists()
