"""A replay's reader thread (``ReplaySource(read_ahead_rows=...)``): the same batches, rows, outcomes and
positions as reading in ``poll``, in order; bounded; errors raised in their place; seek and close stop it;
the application starts it before building the pipeline; replays with and without it write the same results."""
from __future__ import annotations

import datetime as dt
import threading
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.event_logs import random_events, write_log
from vinestream.connectors import parquet as pq_mod
from vinestream.connectors.parquet import ReplaySource, read_results
from vinestream.stream.app.application import Application, LoopConfig
from vinestream.stream.app.replay import replay


def _hostile_log(path, n: int = 3000, seed: int = 5) -> str:
    """Valid events with garbage rows mixed in (unknown ops, unparsable and missing ids): dead letters."""
    t = random_events(n, seed=seed)
    rng = np.random.default_rng(seed)
    ops = [str(v) for v in t.column("op").to_pylist()]
    src = [str(v) for v in t.column("src").to_pylist()]
    dst = t.column("dst").to_pylist()
    for i in rng.choice(n, n // 10, replace=False).tolist():
        kind = i % 3
        if kind == 0:
            ops[i] = "bogus"
        elif kind == 1:
            src[i] = "x" * (1 + i % 7)
        else:
            dst[i] = None
    table = pa.table({"op": ops, "src": src, "dst": pa.array(dst, pa.int64()), "ts": t.column("ts")})
    pq.write_table(table, path, row_group_size=257)
    return str(path)


def _polls(src: ReplaySource) -> list:
    out = []
    while True:
        p = src.poll()
        if not p.messages:
            assert src.at_end()
            break
        out.append(p)
    src.close()
    return out


def _same(a: list, b: list) -> None:
    assert len(a) == len(b) > 1
    for x, y in zip(a, b):
        assert x.events.equals(y.events) and x.dead.equals(y.dead)
        assert x.next_positions == y.next_positions and x.messages == y.messages


@pytest.mark.parametrize("cut", [{"batch_size": 128}, {"batch_size": 1000}, {"window": dt.timedelta(milliseconds=700)},
                                 {"window": dt.timedelta(milliseconds=700), "batch_size": 50}])
@pytest.mark.parametrize("ahead", [1, 300, 10**6])
def test_read_ahead_polls_equal_polls_in_the_loop(tmp_path, cut, ahead):
    log = _hostile_log(tmp_path / "h.parquet")
    plain = _polls(ReplaySource(log, **cut))
    src = ReplaySource(log, read_ahead_rows=ahead, **cut)
    src.start_reading()
    ahead_polls = _polls(src)
    _same(plain, ahead_polls)
    assert sum(p.dead.num_rows for p in plain) > 0         # the garbage rows are dead letters in both
    assert sum(p.messages for p in plain) == 3000


def test_read_ahead_over_several_files_and_a_resume(tmp_path):
    for i in range(3):
        write_log(tmp_path / f"part{i}.parquet", random_events(500, seed=i))
    plain = _polls(ReplaySource(tmp_path, batch_size=128))
    ahead = _polls(ReplaySource(tmp_path, batch_size=128, read_ahead_rows=200))
    _same(plain, ahead)
    # started, then sought (as a resume does): reading restarts from the position
    position = {}                   # every log read so far, as a checkpoint has them
    for polled in plain[:6]:
        position.update(polled.next_positions)
    src = ReplaySource(tmp_path, batch_size=128, read_ahead_rows=200)
    src.start_reading()
    time.sleep(0.05)
    src.seek(position)
    src.start_reading()
    _same(plain[6:], _polls(src))


def test_the_reader_keeps_at_most_its_rows_queued(tmp_path):
    log = write_log(tmp_path / "a.parquet", random_events(5000, seed=2))
    src = ReplaySource(log, batch_size=100, read_ahead_rows=350)
    src.start_reading()
    seen = []
    for _ in range(20):
        time.sleep(0.01)
        seen.append(src._reader._rows)
        src.poll()
    assert max(seen) <= 300 and max(seen) > 0          # whole batches of 100 rows up to 350 rows
    one = ReplaySource(log, batch_size=1000, read_ahead_rows=10)        # a batch larger than the limit
    one.start_reading()
    time.sleep(0.1)
    assert one._reader._rows == 1000                     # one batch, never more
    assert one.poll().messages == 1000
    one.close()
    src.close()


def test_an_error_is_raised_by_the_poll_that_reaches_it(tmp_path, monkeypatch):
    log = write_log(tmp_path / "a.parquet", random_events(1000, seed=4))
    real = pq_mod.validate
    calls = []

    def failing(rows, **kw):
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk gone")
        return real(rows, **kw)
    monkeypatch.setattr(pq_mod, "validate", failing)
    for ahead in (0, 10**6):
        calls.clear()
        src = ReplaySource(log, batch_size=100, read_ahead_rows=ahead)
        src.start_reading()
        assert src.poll().messages == 100 and src.poll().messages == 100
        with pytest.raises(OSError, match="disk gone"):
            src.poll()
        after = src.poll()                                 # the stream ends after the error, as a generator does
        assert after.messages == 0 and src.at_end()
        src.close()


def test_close_stops_the_reader_thread(tmp_path):
    log = write_log(tmp_path / "a.parquet", random_events(3000, seed=1))
    src = ReplaySource(log, batch_size=100, read_ahead_rows=100)
    src.start_reading()
    thread = src._reader._thread
    time.sleep(0.05)
    assert thread.is_alive()                             # blocked on its full queue
    src.close()
    assert not thread.is_alive()


def test_pacing_and_the_device_decoder_read_in_poll(tmp_path):
    log = write_log(tmp_path / "a.parquet", random_events(300, seed=1))
    assert ReplaySource(log, batch_size=100, speed=1e9, read_ahead_rows=10**6).read_ahead_rows == 0
    assert ReplaySource(log, batch_size=100, device=True, read_ahead_rows=10**6).read_ahead_rows == 0


def test_the_application_starts_reading_before_it_builds_the_pipeline(tmp_path):
    log = write_log(tmp_path / "a.parquet", random_events(2000, seed=6))
    src = ReplaySource(log, batch_size=500, read_ahead_rows=10**6)
    started = threading.Event()
    seen = {}
    real_start = src.start_reading

    def start_reading():
        real_start()
        started.set()
    src.start_reading = start_reading

    def factory():
        from vinestream.stream.pipeline import build_pipeline
        seen["reader_started_first"] = started.is_set()
        time.sleep(0.2)                                      # a slow device set-up: the reader works meanwhile
        seen["read_during_build"] = src._reader._rows
        return build_pipeline(structure="coo", backend="cpu")
    report = Application(LoopConfig(until_end=True), src, factory).run()
    assert seen["reader_started_first"] and seen["read_during_build"] == 2000
    assert report.events + report.dead_letters == 2000 and report.batches == 4


def test_a_failing_pipeline_build_stops_the_reader(tmp_path):
    log = write_log(tmp_path / "a.parquet", random_events(2000, seed=6))
    src = ReplaySource(log, batch_size=100, read_ahead_rows=100)

    def factory():
        raise RuntimeError("no device")
    with pytest.raises(RuntimeError, match="no device"):
        Application(LoopConfig(until_end=True), src, factory).run()
    assert src._reader is None


@pytest.mark.parametrize("structure", ["coo", "graphvine"])
def test_replays_with_and_without_read_ahead_write_the_same_results(tmp_path, structure):
    log = _hostile_log(tmp_path / "h.parquet", n=4000, seed=9)
    reports = {}
    for ahead in (False, True):
        out = tmp_path / f"out-{ahead}"
        report, _ = replay([log], structure=structure, backend="cpu", batch_size=300, jobs=["pagerank", "triangles"],
                           out=str(out), read_ahead=ahead)
        reports[ahead] = (report, read_results(out))
    (a, ra), (b, rb) = reports[False], reports[True]
    assert (a.batches, a.events, a.dead_letters, a.invalid, a.edges, a.vertices) == \
        (b.batches, b.events, b.dead_letters, b.invalid, b.edges, b.vertices)
    assert a.dead_letters > 0
    assert set(ra) == set(rb)
    for name in ra:
        x, y = ra[name], rb[name]
        if name == "summary":
            keep = [c for c in x.column_names if not c.endswith("_ms") and c not in ("wall_time", "rss_bytes")]
            x, y = x.select(keep), y.select(keep)
        if name == "run":                   # _run.json: when each was written (to the second) differs
            x, y = x.drop_columns(["written"]), y.drop_columns(["written"])
        assert x.num_rows == y.num_rows
        if name == "pagerank":
            assert np.allclose(x.column("rank").to_numpy(), y.column("rank").to_numpy(), rtol=0, atol=1e-12)
            x, y = x.drop_columns(["rank"]), y.drop_columns(["rank"])
        assert x.equals(y), name


def test_application_hands_the_queued_batch_to_the_pipeline(tmp_path, monkeypatch):
    """The apply thread offers the pipeline the batch queued next (``Pipeline.apply(next_events=...)``, asked
    after the structure update): whenever it names one, it is the table the pipeline applies next.  Three
    batches in flight (what a GPU replay of small batches keeps), so that the next one can be queued."""
    from vinestream.stream.pipeline.pipeline import Pipeline
    from vinestream.structures import registry
    seen = []
    real = Pipeline.apply

    def apply(self, events, next_events=None):
        time.sleep(0.02)                     # a pipeline slower than the reader, as on a GPU with jobs
        following = next_events() if callable(next_events) else next_events
        seen.append((events, following))
        return real(self, events, next_events=following)

    monkeypatch.setattr(Pipeline, "apply", apply)
    log = write_log(tmp_path / "log.parquet", random_events(4000, seed=3))
    for _ in range(3):         # the reader runs ahead of the apply thread in some of these
        seen.clear()
        source = ReplaySource([log], batch_size=250)
        app = Application(LoopConfig(until_end=True, max_inflight_batches=3), source,
                          lambda: Pipeline(registry.create("coo"), jobs=[]))
        app.run()
        assert len(seen) == 16
        named = [i for i, (_, following) in enumerate(seen) if following is not None]
        assert all(seen[i][1] is seen[i + 1][0] for i in named)
        if named:
            break
    assert named, "the next batch was never queued while a batch was applied"


@pytest.fixture
def loop_configs(monkeypatch) -> list:
    """The LoopConfig of every Application a replay builds, in order."""
    from vinestream.stream.app import replay as replay_mod
    configs = []
    real = replay_mod.Application

    def application(config, *args, **kwargs):
        configs.append(config)
        return real(config, *args, **kwargs)

    monkeypatch.setattr(replay_mod, "Application", application)
    return configs


def test_replay_keeps_three_batches_in_flight_only_where_it_resolves_ahead(tmp_path, loop_configs):
    """A replay asks for a third batch in flight only on a GPU with batches the fused resolve takes; on a
    CPU (or with larger batches) it keeps two, one batch's memory less."""
    configs = loop_configs
    log = write_log(tmp_path / "log.parquet", random_events(600, seed=4))
    replay([log], structure="coo", backend="cpu", batch_size=100, progress=False)
    assert configs[-1].max_inflight_batches == 2


@pytest.mark.gpu
def test_a_gpu_replay_of_small_batches_resolves_each_next_batch_ahead(tmp_path, loop_configs):
    """On a GPU, batches the fused resolve takes: three in flight, and the next batches resolved ahead; a
    batch too large for it: two."""
    from tests.backends import cupy_or_skip
    cupy_or_skip()
    configs = loop_configs
    log = write_log(tmp_path / "log.parquet", random_events(6000, seed=4))
    report, pipeline = replay([log], structure="coo", backend="gpu", batch_size=500, jobs=["pagerank"],
                              progress=False)
    assert configs[-1].max_inflight_batches == 3 and report.batches == 12
    assert 0 < pipeline.resolved_ahead <= report.batches - 1
    replay([log], structure="coo", backend="gpu", batch_size=100_000, progress=False)
    assert configs[-1].max_inflight_batches == 2


def test_a_pipeline_whose_apply_takes_the_events_only_is_called_so(tmp_path):
    """A Pipeline subclass that overrides ``apply(events)`` (no ``next_events``) still runs in the loop."""
    from vinestream.stream.pipeline.pipeline import Pipeline
    from vinestream.structures import registry
    calls = []

    class Plain(Pipeline):
        def apply(self, events):
            calls.append(events.num_rows)
            return super().apply(events)

    log = write_log(tmp_path / "log.parquet", random_events(1000, seed=4))
    source = ReplaySource([log], batch_size=300)
    app = Application(LoopConfig(until_end=True), source, lambda: Plain(registry.create("coo")))
    report = app.run()
    assert report.events == 1000 and sum(calls) == 1000 and app.error is None


def test_a_replaced_apply_is_called_as_written(tmp_path, monkeypatch):
    """The loop asks each ``apply`` function whether it takes ``next_events``: after a run with Pipeline's
    own, a wrapper without it (put on the class) is called with the events only."""
    from vinestream.stream.pipeline.pipeline import Pipeline
    log = write_log(tmp_path / "log.parquet", random_events(500, seed=6))
    replay([log], structure="coo", backend="cpu", batch_size=100, progress=False)
    real = Pipeline.apply
    seen = []
    monkeypatch.setattr(Pipeline, "apply", lambda self, ev: (seen.append(ev.num_rows), real(self, ev))[1])
    report, _ = replay([log], structure="coo", backend="cpu", batch_size=100, progress=False)
    assert report.events == 500 and len(seen) == 5          # (before: a TypeError from the wrapper)
