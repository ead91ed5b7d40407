"""Prometheus metrics: the update rules, and a scrape of a worker's HTTP endpoint."""
from __future__ import annotations

import math
import urllib.request

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.event_logs import oracle_of, random_events, write_log
from tests.kafka_helpers import run, worker_config
from tests.pipelines import ObservedPipeline
from vinestream.stream.app.metrics import PipelineMetrics
from vinestream.stream.app.replay import replay
from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA


def scrape(port: int) -> dict:
    """{(name, frozenset(labels)): value} from GET /metrics."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def test_observe_batch_counts_and_is_idempotent_per_epoch():
    m = PipelineMetrics(structure="dict", backend="cpu", process_metrics=False)
    p = ObservedPipeline()
    events = random_events(500, seed=1)
    r = p.apply(events)
    m.observe_batch(r, events, decode_seconds=0.01)
    m.observe_batch(r, events)                      # the pipeline and the worker may both report it
    # a dropped self-loop is counted under invalid{self_loop}, not as an applied event of its op
    loop = pa.compute.fill_null(pa.compute.equal(events.column("src"), events.column("dst")), False)
    ops = pa.compute.value_counts(events.filter(pa.compute.invert(loop)).column("op")).to_pylist()
    names = {1: "add_edge", 2: "delete_edge", 3: "add_vertex", 4: "delete_vertex"}
    assert r.counts["self_loops"] == pa.compute.sum(loop).as_py() > 0
    for row in ops:
        assert m.value("vinestream_events_total", {"op": names[row["values"]]}) == row["counts"]
    assert m.value("vinestream_batches_total") == 1
    assert m.value("vinestream_graph_edges") == len(oracle_of(events).edges)
    assert m.value("vinestream_invalid_events_total", {"reason": "self_loop"}) == r.counts["self_loops"]
    assert m.value("vinestream_batch_seconds_count", {"phase": "decode"}) == 1
    assert m.value("vinestream_batch_seconds_count", {"phase": "resolve"}) == 1
    assert math.isnan(m.value("vinestream_checkpoint_age_seconds"))
    dead = pa.table({"source": ["t"] * 3, "partition": [0] * 3, "position": [1, 2, 3],
                     "reason": ["malformed", "malformed", "bad_weight"], "detail": [""] * 3,
                     "payload": [""] * 3}, schema=DEAD_LETTER_SCHEMA)
    m.observe_dead_letters(dead)
    assert m.value("vinestream_invalid_events_total", {"reason": "malformed"}) == 2
    assert m.value("vinestream_invalid_events_total", {"reason": "bad_weight"}) == 1
    m.observe_structure(p.structure)
    assert m.value("vinestream_structure_bytes", {"kind": "used"}) == p.structure.memory()["used_bytes"]
    assert m.value("vinestream_device_memory_bytes") > 0
    m.observe_lag({("t", 0): 5, ("t", 1): 0})
    m.observe_lag({("t", 1): 2})                    # partition 0 revoked: its series goes away
    assert m.value("vinestream_consumer_lag", {"topic": "t", "partition": "0"}) is None
    assert m.value("vinestream_consumer_lag", {"topic": "t", "partition": "1"}) == 2
    assert m.value("vinestream_build_info", {"structure": "dict", "backend": "cpu", "version": "0.1.0"}) == 1


def test_two_instances_do_not_share_counters():
    a, b = PipelineMetrics(process_metrics=False), PipelineMetrics(process_metrics=False)
    a.batches.inc()
    assert a.value("vinestream_batches_total") == 1 and b.value("vinestream_batches_total") == 0


@pytest.mark.kafka
def test_scrape_worker_metrics_endpoint(kafka_bootstrap, tmp_path):
    from vinestream.connectors.kafka import produce
    log = random_events(2500, seed=31)
    produce(write_log(tmp_path / "log.parquet", log), "events-metrics", kafka_bootstrap, fmt="arrow",
            partitions=2, batch_events=300)
    m = PipelineMetrics(structure="coo", backend="cpu")
    cfg = worker_config(kafka_bootstrap, "events-metrics", "g-metrics", format="arrow", batch_size=600,
                        metrics_port=0, checkpoint_dir=str(tmp_path / "ck"))
    try:
        report, pipe = run(cfg, metrics=m)
        got = scrape(m.port)
    finally:
        m.close()
    total = sum(v for (name, _), v in got.items() if name == "vinestream_events_total")
    loops = got[("vinestream_invalid_events_total", frozenset({("reason", "self_loop")}))]
    assert total + loops == report.events == 2500
    assert got[("vinestream_batches_total", frozenset())] == report.batches
    assert got[("vinestream_graph_edges", frozenset())] == pipe.structure.num_edges
    assert got[("vinestream_graph_vertices", frozenset())] == pipe.structure.num_vertices
    lags = {k: v for k, v in got.items() if k[0] == "vinestream_consumer_lag"}
    assert len(lags) == 2 and all(v == 0 for v in lags.values())
    assert got[("vinestream_last_commit_timestamp_seconds", frozenset())] > 1.6e9
    assert 0 <= got[("vinestream_checkpoint_age_seconds", frozenset())] < 60
    assert got[("vinestream_batch_seconds_count", frozenset({("phase", "decode")}))] == report.batches
    assert got[("process_resident_memory_bytes", frozenset())] > 0


def test_every_structure_phase_has_a_series_before_and_after_a_batch():
    """coo and graphvine time both edge phases as one ``edges`` phase: it reads 0 before any batch (a
    dashboard finds it) and counts the batches that report it, like the separate phases."""
    from vinestream.stream.app.metrics import PIPELINE_PHASES
    from vinestream.stream.pipeline import build_pipeline
    m = PipelineMetrics(structure="coo", backend="cpu", process_metrics=False)
    for phase in PIPELINE_PHASES:
        assert m.value("vinestream_batch_seconds_count", {"phase": phase}) == 0
    r = build_pipeline(structure="coo", backend="cpu").apply(random_events(300, seed=2))
    m.observe_batch(r)
    for phase in r.seconds:
        assert m.value("vinestream_batch_seconds_count", {"phase": phase}) == 1
    assert {"edges", "delete", "insert"} & set(r.seconds) <= set(PIPELINE_PHASES)


def test_a_paced_replay_does_not_count_its_waits_as_decode_time(tmp_path):
    """`replay --speed` waits for each batch's event time; that wait is no decoding, so the scraped decode
    histogram stays far below it (it held every second waited: 13 s of "decode" for a 17 s paced replay)."""
    n = 6
    log = pa.table({"op": pa.array([1] * n, pa.int8()), "src": list(range(1, n + 1)), "dst": list(range(2, n + 2)),
                    "ts": pa.array([i * 250 for i in range(n)], pa.timestamp("ms"))})
    pq.write_table(log, tmp_path / "log.parquet")
    metrics = PipelineMetrics(structure="csr", backend="cpu", process_metrics=False)
    port = metrics.serve(0)
    try:
        report, _ = replay([str(tmp_path / "log.parquet")], batch_size=1, speed=1.0, metrics=metrics)
        got = scrape(port)
    finally:
        metrics.close()
    assert report.events == n and report.seconds >= 1.2          # five waits of 0.25 s
    assert got[("vinestream_batch_seconds_count", frozenset({("phase", "decode")}))] == n
    assert got[("vinestream_batch_seconds_sum", frozenset({("phase", "decode")}))] < 0.5


def test_the_last_commit_time_is_nan_until_a_commit(tmp_path):
    """A worker commits only after its first checkpoint (a replay never does): the last commit time read 0 until
    then, a commit in 1970, and the dashboard's "time() - vinestream_last_commit_timestamp_seconds" said 56
    years.  It reads NaN, as the checkpoint age does before the first checkpoint."""
    log = write_log(tmp_path / "log.parquet", random_events(500, seed=4))
    metrics = PipelineMetrics(structure="csr", backend="cpu", process_metrics=False)
    port = metrics.serve(0)
    try:
        replay([log], batch_size=100, metrics=metrics)
        before = scrape(port)
        metrics.observe_commit(1_800_000_000.0)
        after = scrape(port)
    finally:
        metrics.close()
    assert before[("vinestream_batches_total", frozenset())] == 5
    assert math.isnan(before[("vinestream_last_commit_timestamp_seconds", frozenset())])
    assert after[("vinestream_last_commit_timestamp_seconds", frozenset())] == 1_800_000_000.0


def test_a_batch_whose_every_event_was_rejected_is_counted_in_the_metric_and_the_summary(tmp_path):
    """A batch of dead letters only was processed (decoded, its rejects written) but has no epoch: the metric
    skipped it (2 batches scraped, 4 in the end summary).  Scraped over HTTP, the metric counts every batch, and
    the summary rows' ``batches`` (which carry the batches without an epoch) add up to it."""
    op = pa.array([1, 1, 9, 9, 1, 1, 9, 9], pa.int8())       # batches of 2: valid, rejected, valid, rejected
    pq.write_table(pa.table({"op": op, "src": list(range(1, 9)), "dst": list(range(2, 10))}), tmp_path / "log.parquet")
    metrics = PipelineMetrics(structure="csr", backend="cpu", process_metrics=False)
    port = metrics.serve(0)
    try:
        report, _ = replay([str(tmp_path / "log.parquet")], batch_size=2, metrics=metrics, out=str(tmp_path / "out"))
        got = scrape(port)
    finally:
        metrics.close()
    summary = pq.read_table(tmp_path / "out" / "summary.parquet").sort_by("epoch")
    assert report.batches == 4
    assert got[("vinestream_batches_total", frozenset())] == 4
    assert summary.column("batches").to_pylist() == [1, 3]     # the trailing rejected batch joins the last row
    assert summary.column("invalid").to_pylist() == [0, 4]
    assert got[("vinestream_batch_seconds_count", frozenset({("phase", "decode")}))] == 4


def test_events_and_invalid_events_add_up_to_the_events_read(tmp_path):
    """A dropped self-loop's one outcome is ``invalid_events_total{reason="self_loop"}``: events_total{op} counted
    it as applied too (2932 applied + 78 invalid scraped for a log of 3000 events).  Scraped over HTTP, each op's
    count is the input's events of that op that are neither dead letters nor self-loops."""
    n = 3000
    log = random_events(n, seed=5)
    op = log.column("op").to_numpy().copy()
    op[::97] = 9                                            # unknown_op dead letters
    src = log.column("src").to_numpy().copy()
    dst = log.column("dst").to_numpy(zero_copy_only=False).copy()
    edge_rows = [i for i in range(n) if op[i] in (1, 2)]
    for i in edge_rows[3::150]:                             # self-loops of both edge ops
        dst[i] = src[i]
    log = log.set_column(0, "op", pa.array(op, pa.int8())).set_column(
        2, "dst", pa.array(dst, pa.int64(), mask=log.column("dst").is_null().to_numpy(zero_copy_only=False)))
    path = write_log(tmp_path / "log.parquet", log)
    metrics = PipelineMetrics(structure="coo", backend="cpu", process_metrics=False)
    port = metrics.serve(0)
    try:
        report, _ = replay([path], structure="coo", batch_size=400, metrics=metrics, out=str(tmp_path / "out"))
        got = scrape(port)
    finally:
        metrics.close()
    loops = [i for i in range(n) if op[i] in (1, 2) and src[i] == dst[i]]
    assert loops and {op[i] for i in loops} == {1, 2}
    applied = [op[i] for i in range(n) if op[i] in (1, 2, 3, 4) and i not in set(loops)]
    names = {1: "add_edge", 2: "delete_edge", 3: "add_vertex", 4: "delete_vertex"}
    for code, name in names.items():
        assert got[("vinestream_events_total", frozenset({("op", name)}))] == applied.count(code), name
    invalid = sum(v for (name, _), v in got.items() if name == "vinestream_invalid_events_total")
    events = sum(v for (name, _), v in got.items() if name == "vinestream_events_total")
    assert got[("vinestream_invalid_events_total", frozenset({("reason", "self_loop")}))] == len(loops)
    assert events + invalid == n
    summary = pq.read_table(tmp_path / "out" / "summary.parquet")
    assert events == pa.compute.sum(summary["events"]).as_py() - pa.compute.sum(summary["self_loops"]).as_py()
    assert invalid == pa.compute.sum(summary["invalid"]).as_py() == report.invalid


def test_a_command_line_replay_closes_its_metrics_endpoint(tmp_path):
    """`vinestream replay --metrics-port P` left its endpoint serving after main() returned: a second replay in the
    same process (main() may run inside a longer one) was refused, 'cannot listen on ...: Address already in use'.
    Each replay now serves its own metrics and closes them at its end."""
    import socket

    from vinestream.stream.app.cli import main
    log = write_log(tmp_path / "log.parquet", random_events(300, seed=6))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for _ in range(2):
        assert main(["replay", log, "--metrics-port", str(port), "--jobs", "none", "--no-progress"]) == 0
        with pytest.raises(OSError):            # nothing listens there any more
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_two_replays_on_one_registry_both_count(tmp_path):
    """One metrics endpoint for a process that replays twice: the second replay starts again at epoch 1, and the
    metrics, which ignore an epoch they counted already, counted none of its batches (8 batches scraped after
    two replays of 8).  Each run's epochs count from where that run starts."""
    log = write_log(tmp_path / "log.parquet", random_events(1000, seed=8, vertex_ops=False))
    metrics = PipelineMetrics(structure="csr", backend="cpu", process_metrics=False)
    port = metrics.serve(0)
    try:
        scraped = []
        for _ in range(2):
            report, _ = replay([log], batch_size=250, metrics=metrics)
            scraped.append(scrape(port))
    finally:
        metrics.close()
    assert report.batches == 4
    for runs, got in enumerate(scraped, start=1):
        assert got[("vinestream_batches_total", frozenset())] == 4 * runs
        assert got[("vinestream_batch_seconds_count", frozenset({("phase", "resolve")}))] == 4 * runs
        events = sum(v for (name, _), v in got.items() if name == "vinestream_events_total")
        loops = got[("vinestream_invalid_events_total", frozenset({("reason", "self_loop")}))]
        assert events + loops == report.events * runs


def test_the_structure_memory_gauge_is_the_summary_s_reading(tmp_path):
    """The summary's reserved_bytes / used_bytes were read before an epoch's jobs and the Prometheus gauge after them,
    and the jobs change coo's memory (its index log is compacted): the two differed by a few bytes.  Each epoch's
    memory is read once, at its end, and the gauge after every batch is that epoch's summary row."""
    from vinestream.connectors.parquet import read_results

    class Recorded(PipelineMetrics):
        """The gauges as they stand after each batch (read when the next one comes, and at the end)."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.after = []

        def gauges(self):
            return {kind: self.value("vinestream_structure_bytes", {"kind": kind}) for kind in ("reserved", "used")}

        def observe_batch(self, result, *args, **kwargs):
            if result is not None and result.epoch > 1:
                self.after.append(self.gauges())
            super().observe_batch(result, *args, **kwargs)

    m = Recorded(structure="coo", backend="cpu", process_metrics=False)
    log = write_log(tmp_path / "log.parquet", random_events(6000, seed=0))
    replay([log], structure="coo", backend="cpu", batch_size=500, out=str(tmp_path / "out"), metrics=m,
           jobs=["pagerank", "bfs", "triangles"], bfs_sources=[-7])
    m.after.append(m.gauges())
    rows = read_results(tmp_path / "out")["summary"].to_pylist()
    assert len(rows) == len(m.after) == 12
    assert [{"reserved": r["reserved_bytes"], "used": r["used_bytes"]} for r in rows] == m.after
