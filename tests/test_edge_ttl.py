"""--edge-ttl: the batched sliding window against an oracle that applies the rule one event at a time.

The rule (stream/batching/ttl.py): watermark = max ts seen; an insert records the edge's last
insert time (its ts, or the watermark when it has none, minus infinity before any ts); after every
event, each edge whose last insert time is older than watermark - ttl is deleted.  Vertices stay.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tests.strategies import OPS
from vinestream.stream.app.cli import main
from vinestream.stream.events.schema import EVENT_SCHEMA
from vinestream.stream.pipeline import build_pipeline


class TTLOracle(Oracle):
    """The one-at-a-time rule, on top of the reference graph."""

    def __init__(self, ttl_ms: float, **kw):
        super().__init__(**kw)
        self.ttl_ms = ttl_ms
        self.watermark = None
        self.last: dict = {}
        self.expired = 0          # edges the window deleted (that were in the graph then)

    def step(self, op, src, dst, weight, ts):
        dropped = op in (1, 2) and src == dst and not self.keep_self_loops     # no effect at all, nor its time
        if ts is not None and not dropped:
            self.watermark = ts if self.watermark is None else max(self.watermark, ts)
        self.apply(op, src, dst, weight)
        if op == 1 and (src != dst or self.keep_self_loops):
            key = (min(src, dst), max(src, dst)) if self.undirected else (src, dst)
            self.last[key] = ts if ts is not None else self.watermark
        if self.watermark is None:
            return
        for key, t in list(self.last.items()):
            if t is None or t < self.watermark - self.ttl_ms:      # None: inserted before any time was seen
                del self.last[key]
                self.expired += key in self.edges
                self.apply(2, key[0], key[1], None)


def _event():
    ids = st.integers(0, 9)

    @st.composite
    def one(draw):
        op = draw(OPS)
        ts = draw(st.one_of(st.none(), st.integers(0, 60)))     # late, early and missing times
        src = draw(ids)
        if op in (3, 4):
            return (op, src, None, None, ts)
        return (op, src, draw(ids), draw(st.sampled_from([None, 0.5, 2.0])) if op == 1 else None, ts)
    return one()


def _table(evs) -> pa.Table:
    return pa.table({
        "op": pa.array([e[0] for e in evs], pa.int8()),
        "src": pa.array([e[1] for e in evs], pa.int64()),
        "dst": pa.array([e[2] for e in evs], pa.int64()),
        "weight": pa.array([e[3] for e in evs], pa.float32()),
        "ts": pa.array([None if e[4] is None else e[4] * 1000 for e in evs], pa.timestamp("ms")),
    }, schema=EVENT_SCHEMA)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(st.lists(_event(), max_size=40), min_size=1, max_size=6),
       ttl=st.sampled_from([1, 5, 17]), undirected=st.booleans())
def test_windowed_pipeline_equals_the_one_at_a_time_rule(batches, ttl, undirected):
    pipeline = build_pipeline(structure="coo", backend="cpu", undirected=undirected, edge_ttl=ttl)
    oracle = TTLOracle(ttl * 1000.0, undirected=undirected)
    for batch in batches:
        for op, src, dst, w, ts in batch:
            oracle.step(op, src, dst, w, None if ts is None else ts * 1000)
        result = pipeline.apply(_table(batch))
        assert result.counts["events"] == len(batch)      # the window's appended deletes are no events of the log
        got = pipeline.edges()
        assert set(zip(got.column("src").to_pylist(), got.column("dst").to_pylist())) == set(oracle.edges)
        assert set(pipeline.vertices().column("vertex").to_pylist()) == oracle.vertices


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(_event(), max_size=40), ttl=st.sampled_from([1, 5, 17]), undirected=st.booleans())
def test_expired_counts_the_edges_the_window_deleted(events, ttl, undirected):
    """One event a batch, ``expired`` is what the one-at-a-time rule deletes: an edge deleted by an event (or with a
    vertex) before its time ran out was counted again when it did, as were its record's bytes kept until then."""
    pipeline = build_pipeline(structure="csr", backend="cpu", undirected=undirected, edge_ttl=ttl)
    oracle = TTLOracle(ttl * 1000.0, undirected=undirected)
    for op, src, dst, w, ts in events:
        before = oracle.expired
        oracle.step(op, src, dst, w, None if ts is None else ts * 1000)
        assert pipeline.apply(_table([(op, src, dst, w, ts)])).counts["expired"] == oracle.expired - before
    if not undirected:                  # a record per live edge, no more
        assert len(pipeline.edge_ttl) == len(oracle.edges)


def test_a_dropped_self_loop_moves_no_watermark():
    """A dropped self-loop has no effect at all (DESIGN.md), but its time moved the watermark: a late one expired
    every edge it passed."""
    pipeline = build_pipeline(structure="csr", backend="cpu", edge_ttl=5)
    r = pipeline.apply(_table([(1, 1, 2, None, 0), (1, 3, 3, None, 100)]))
    assert (r.counts["expired"], r.counts["self_loops"], r.counts["edges"]) == (0, 1, 1)
    kept = build_pipeline(structure="csr", backend="cpu", edge_ttl=5, keep_self_loops=True)
    r = kept.apply(_table([(1, 1, 2, None, 0), (1, 3, 3, None, 100)]))
    assert (r.counts["expired"], r.counts["edges"]) == (1, 1)              # a kept one is an event like any


def test_an_edge_deleted_before_its_time_does_not_expire():
    pipeline = build_pipeline(structure="csr", backend="cpu", edge_ttl=5)
    r = pipeline.apply(_table([(1, 1, 2, None, 0), (1, 2, 3, None, 0), (1, 3, 4, None, 0), (2, 1, 2, None, 1),
                               (4, 3, None, None, 1), (1, 5, 6, None, 100)]))
    assert (r.counts["expired"], r.counts["edges"]) == (0, 1)      # (1, 2) deleted, (2, 3) and (3, 4) with 3


def test_an_edge_expires_in_the_batch_the_watermark_passes_it_and_reinsert_refreshes():
    pipeline = build_pipeline(structure="csr", backend="cpu", edge_ttl=10)
    ev = lambda rows: _table([(1, s, d, None, t) for s, d, t in rows])
    pipeline.apply(ev([(1, 2, 0), (2, 3, 5)]))
    r = pipeline.apply(ev([(3, 4, 10)]))               # watermark 10: 0 < 10 - 10 is false, nothing expires
    assert r.counts["expired"] == 0 and pipeline.structure.num_edges == 3
    pipeline.apply(ev([(1, 2, 9)]))                    # re-insert refreshes (1, 2) to 9
    r = pipeline.apply(ev([(5, 6, 16)]))               # watermark 16: (2, 3) last at 5 < 6 expires; (1, 2) at 9 stays
    assert r.counts["expired"] == 1 and r.counts["deleted"] == 1
    edges = pipeline.edges()
    assert sorted(zip(edges.column("src").to_pylist(), edges.column("dst").to_pylist())) == \
        [(1, 2), (3, 4), (5, 6)]
    assert set(pipeline.vertices().column("vertex").to_pylist()) == {1, 2, 3, 4, 5, 6}   # vertices stay


def test_the_summary_counts_the_batch_events_not_the_expiry_deletes(tmp_path):
    """summary.parquet's events column counted the delete events the window appends for expired edges (3 here)."""
    pq.write_table(_table([(1, 1, 2, None, 0), (1, 3, 4, None, 100)]), tmp_path / "log.parquet")
    assert main(["replay", str(tmp_path / "log.parquet"), "--edge-ttl", "5", "--jobs", "none", "--backend", "cpu",
                 "--no-progress", "--out", str(tmp_path / "out")]) == 0
    (row,) = pq.read_table(tmp_path / "out" / "summary.parquet").to_pylist()
    assert (row["events"], row["expired"], row["edges"]) == (2, 1, 1)


def test_checkpointed_window_state_round_trips(tmp_path):
    first = build_pipeline(structure="coo", backend="cpu", edge_ttl=3)
    first.apply(_table([(1, 1, 2, None, 0), (1, 2, 3, None, 2)]))
    state = first.state()
    second = build_pipeline(structure="coo", backend="cpu", edge_ttl=3)
    second.load_state(state)
    assert second.edge_ttl.watermark == first.edge_ttl.watermark and len(second.edge_ttl) == 2


@pytest.mark.parametrize("ttl", ["86400"])
def test_replay_with_edge_ttl_keeps_a_live_window_of_the_sample(tmp_path, capsys, ttl):
    out = tmp_path / "out"
    assert main(["replay", "--structure", "coo", "--edge-ttl", ttl, "--jobs", "none", "--out", str(out),
                 "--no-progress"]) == 0
    summary = pq.read_table(out / "summary.parquet").to_pylist()
    assert sum(r["expired"] for r in summary) > 0
    assert summary[-1]["edges"] < 20_296          # the whole sample's graph has 20,296 edges
