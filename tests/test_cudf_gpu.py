"""The cuDF paths on a GPU (issue 17): the same outcome as pyarrow for every record, replay, results.

Skipped without CuPy, a CUDA device and an importable cuDF.  Run on the GPU host with
``VINESTREAM_BACKEND=gpu python -m pytest tests/test_cudf_gpu.py``.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.backends import HAS_GPU
from tests.hostile_corpus import MAX_PAYLOAD, generated, named
from tests.test_cudf_decode import _events
from vinestream.connectors.kafka import _text_lines
from vinestream.connectors.parquet import ReplaySource
from vinestream.stream.bench.decode import payloads_of
from vinestream.stream.events.cudf_decode import cudf_available, cudf_decode, make_decoder
from vinestream.stream.events.decode import decode
from vinestream.stream.events.device import DeviceEvents, host_events
from vinestream.stream.pipeline import build_pipeline
from vinestream.stream.pipeline.pipeline import as_frame

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not HAS_GPU or not cudf_available()[0], reason="needs a GPU and cuDF")]


def _same(payloads, fmt, positions=None, **kw):
    """cuDF's decode == pyarrow's: events (as Arrow), dead letters, positions; returns the cuDF one."""
    a = decode(payloads, fmt, source="t", partition=0, positions=positions, max_payload_bytes=MAX_PAYLOAD, **kw)
    b = cudf_decode(payloads, fmt, source="t", partition=0, positions=positions, max_payload_bytes=MAX_PAYLOAD,
                    **kw)
    assert host_events(b.events).equals(a.events)
    assert b.dead.equals(a.dead)
    assert np.array_equal(b.positions, a.positions)
    return b


@pytest.mark.parametrize("fmt", ["json", "csv", "arrow"])
def test_named_hostile_messages_alone_and_together(fmt):
    payloads = [p for p, _ in named(fmt)]
    for p in payloads:
        _same([p], fmt)
    _same(payloads, fmt, positions=np.arange(len(payloads)) * 7)


@pytest.mark.parametrize("fmt", ["json", "csv", "arrow"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_hostile_polls_with_clean_neighbours(fmt, data):
    clean = payloads_of(_events(400, seed=data.draw(st.integers(0, 100))), fmt, per_message=100)
    hostile = generated(fmt, data, 6)
    poll = data.draw(st.permutations(clean + hostile))
    _same(poll, fmt)
    for p in hostile:
        _same([p], fmt)


@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize("names", [False, True])
def test_clean_polls_are_decoded_on_the_device(fmt, names):
    table = _events(20_000, seed=5, names=names)
    lines = [v.as_py() for v in _text_lines(table, fmt).cast(pa.binary())]
    payloads = [b"\n".join(lines[i:i + 1000]) + (b"\n" if i % 2000 else b"") for i in range(0, len(lines), 1000)]
    for line_positions in (False, True):
        got = _same(payloads, fmt, positions=np.arange(len(payloads)) * 1000, line_positions=line_positions)
        assert isinstance(got.events, DeviceEvents) and got.events.num_rows == 20_000


def test_auto_leaves_small_polls_to_pyarrow():
    small = payloads_of(_events(50), "json")
    assert not isinstance(make_decoder("auto", gpu=True)(small, "json", source="t").events, DeviceEvents)
    big = payloads_of(_events(60_000), "json")
    assert isinstance(make_decoder("auto", gpu=True)(big, "json", source="t").events, DeviceEvents)


def _log(path, table, row_group=3000):
    pq.write_table(table, path, row_group_size=row_group)
    return str(path)


@pytest.mark.parametrize("hostile", [False, True])
def test_replay_through_cudf_gives_the_same_batches_and_graph(tmp_path, hostile):
    table = _events(20_000, seed=6)
    if hostile:                       # text ops with a few unknown ones: validated on the host, row by row
        ops = np.array(["add", "delete", "add_vertex", "delete_vertex"])[np.asarray(table.column("op")) - 1]
        ops[::997] = "explode"
        table = table.set_column(0, "op", pa.array(ops))
    path = _log(tmp_path / "log.parquet", table)
    a = list(ReplaySource([path], batch_size=4096))
    b = list(ReplaySource([path], batch_size=4096, device=True))
    assert [x.position for x in a] == [x.position for x in b]
    for x, y in zip(a, b):
        assert host_events(y.events).equals(x.events) and y.dead.equals(x.dead)
    # clean batches stay on the device; with an unknown op in every batch, all are validated on the host
    assert any(isinstance(y.events, DeviceEvents) for y in b) != hostile
    start = list(ReplaySource([path], batch_size=4096, device=True, start=(path, 5000)))
    assert start[0].first_row == 5000 and start[-1].last_row == 19_999
    p, q = build_pipeline(structure="graphvine", backend="gpu"), build_pipeline(structure="graphvine", backend="gpu")
    for x, y in zip(a, b):
        p.apply(x.events)
        q.apply(y.events)
    assert p.edges().equals(q.edges())


def test_results_and_edges_as_cudf_frames():
    import cupy
    p = build_pipeline(structure="graphvine", backend="gpu", jobs=["pagerank", "bfs", "triangles"],
                       bfs_sources=[int(_events(10).column("src")[0].as_py())])
    p.apply(_events(5000, seed=8))
    assert p.edges(to="cudf").to_arrow().equals(p.edges())
    assert p.vertices(to="cudf").to_arrow().equals(p.vertices())
    arrow, frames = p.results(), p.results(to="cudf")
    for name, table in arrow.items():
        assert frames[name].to_arrow().cast(table.schema).equals(table), name
    values = cupy.arange(10, dtype=np.int64)
    frame = as_frame({"x": (values, None)}, "cudf")
    assert frame["x"].to_cupy().data.ptr == values.data.ptr       # a view, not a copy


@pytest.mark.kafka
@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_the_kafka_worker_with_the_cudf_decoder_builds_the_same_graph(kafka_bootstrap, tmp_path, fmt):
    from tests.event_logs import random_events, write_log
    from tests.kafka_helpers import worker_config
    from vinestream.connectors.kafka import produce
    from vinestream.stream.app.run import run_worker

    log = random_events(6000, seed=12)
    topic = f"cudf-{fmt}"
    produce(write_log(tmp_path / "log.parquet", log), topic, kafka_bootstrap, fmt=fmt, partitions=2,
            batch_events=500)
    graphs = []
    for decoder in (decode, make_decoder("cudf", gpu=True)):
        built = []

        def factory(built=built):
            built.append(build_pipeline(structure="graphvine", backend="gpu"))
            return built[-1]
        cfg = worker_config(kafka_bootstrap, topic, f"g-{fmt}-{len(graphs)}", format=fmt, batch_size=1500)
        report = run_worker(cfg, factory, decoder=decoder, handle_signals=False)
        assert report.events == 6000 and report.dead_letters == 0
        graphs.append((built[-1].edges(), built[-1].vertices()))
    assert graphs[0][0].equals(graphs[1][0]) and graphs[0][1].equals(graphs[1][1])
