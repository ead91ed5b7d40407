"""The cuDF decoders without a GPU: the line screen's promise, the device batch type, decoder choice and errors.

The cuDF paths themselves run in ``tests/test_cudf_gpu.py`` (skipped here).  What CI
can check: a line the screen passes is one the pyarrow decoder turns into exactly
one valid event (so the device path can never disagree with it on what is valid);
lines the producer writes pass; ``DeviceEvents`` behaves like the Arrow batch it
stands for (through the merge and the pipeline); asking for cuDF where it cannot
run is one line and a nonzero exit.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import screen_emulation
from tests.hostile_corpus import generated, named
from vinestream.connectors.kafka import _text_lines
from vinestream.connectors.partition_merge import PartitionMerge
from vinestream.stream.events.cudf_decode import OP_NAME, DecoderUnavailable, make_decoder, resolve_decoder
from vinestream.stream.events.decode import decode
from vinestream.stream.events.device import DeviceEvents, concat_events, host_events
from vinestream.stream.events.schema import EVENT_SCHEMA
from vinestream.stream.pipeline import build_pipeline

needs_gpp = pytest.mark.skipif(not screen_emulation.available(), reason="needs g++ for the kernel emulation")


def _events(n: int, seed: int = 0, *, names: bool = False) -> pa.Table:
    """Random valid events: edge and vertex ops, null and set weights and times."""
    rng = np.random.default_rng(seed)
    op = rng.choice([1, 1, 1, 2, 3, 4], n).astype(np.int8)
    edge = op <= 2
    weight = pa.array(rng.random(n).astype(np.float32), mask=~edge | (rng.random(n) < 0.3))
    ts = pa.array(1_700_000_000_000 + rng.integers(0, 10 ** 6, n), pa.int64(), mask=rng.random(n) < 0.2)
    table = pa.table({"op": pa.array(op), "src": rng.integers(-50, 10 ** 12, n),
                      "dst": pa.array(rng.integers(0, 10 ** 12, n), mask=~edge), "weight": weight,
                      "ts": ts.cast(pa.timestamp("ms"))}).cast(EVENT_SCHEMA)
    if names:
        table = table.set_column(0, "op", pa.array(np.array(["add", "delete", "add_vertex", "delete_vertex"])[op - 1]))
    return table


def _lines(payloads) -> list[bytes]:
    return [line for p in payloads if p is not None for line in p.split(b"\n")]


# -- the screen --------------------------------------------------------------------------------
#: the only outcomes besides a valid event that a screened line may have: the rules the device checks
#: after cuDF's parse (``validate_frame``: op names, an edge's dst, a finite float32 weight, a ts within the
#: years 1740-2200)
CHECKED_AFTER_PARSE = {"unknown_op", "missing_dst", "bad_weight", "bad_timestamp"}


@needs_gpp
@pytest.mark.parametrize("fmt", ["json", "csv"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_line_the_screen_passes_is_one_record_pyarrow_reads_the_same(fmt, data):
    lines = _lines(generated(fmt, data, 30)) + _lines(p for p, _ in named(fmt) if p is None or len(p) < 4096)
    verdict = screen_emulation.screen_host(lines, fmt)
    for line, ok in zip(lines, verdict):
        if ok:
            d = decode([line], fmt, source="t")
            assert d.events.num_rows + d.dead.num_rows == 1, line
            assert d.events.num_rows or d.dead.column("reason")[0].as_py() in CHECKED_AFTER_PARSE, line


@needs_gpp
@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize("names", [False, True])
def test_the_lines_the_producer_writes_pass_the_screen(fmt, names):
    table = _events(3000, seed=1, names=names)
    lines = [v.as_py() for v in _text_lines(table, fmt).cast(pa.binary())]
    verdict = screen_emulation.screen_host(lines, fmt)
    assert verdict.all()
    assert set((verdict % OP_NAME).tolist()) == {5 if fmt == "csv" else 1}     # the field count for CSV
    assert set((verdict // OP_NAME).tolist()) == {int(names)}                 # op names are flagged


@needs_gpp
def test_the_screen_refuses_what_cudf_would_read_differently():
    # cuDF 26.10 accepts all of these (or reads them differently); pyarrow rejects them or reads them otherwise
    json_lines = [b'{"op":1,"src":2,"dst":3,}', b'{"op":1,"src":02,"dst":3}', b'{"op":1,"src":2,"dst":+3}',
                  b'{"op":1,"src":2,"dst":3,"weight":NaN}', b'{"op":1,"op":2,"src":2,"dst":3}',
                  b'{"op":1,"src":2,"dst":3,"x":{"y":1}}', b'{"op":1,"src":"2","dst":3}',
                  b'{"op":1.0,"src":2,"dst":3}', b'{"op":1,"src":1e3,"dst":3}', b'{"op":1,"src":2,"dst":3}\r']
    assert not screen_emulation.screen_host(json_lines, "json").any()
    csv_lines = [b"1,NA,3", b"1,2,null", b"1,2,3,NaN", b"op,src,dst", b'1,"2",3', b"1, 2,3", b"1,2,3,1,2,3"]
    assert not screen_emulation.screen_host(csv_lines, "csv").any()


# -- the device batch type (on NumPy) -------------------------------------------------------
def test_device_events_round_trip_and_table_operations():
    table = _events(500, seed=2)
    dev = DeviceEvents.from_arrow(table, np)
    assert dev.to_arrow().equals(table)
    assert dev.slice(10, 20).to_arrow().equals(table.slice(10, 20))
    idx = np.random.default_rng(0).permutation(500)[:100]
    assert dev.take(pa.array(idx)).to_arrow().equals(table.take(pa.array(idx)))
    mask = np.arange(500) % 3 == 0
    assert dev.filter(pa.array(mask)).to_arrow().equals(table.filter(pa.array(mask)))
    for name in EVENT_SCHEMA.names:
        assert dev.column(name).equals(table.column(name).combine_chunks())
    both = concat_events([table.slice(0, 200), DeviceEvents.from_arrow(table.slice(200), np)])
    assert isinstance(both, DeviceEvents) and both.to_arrow().equals(table)
    assert concat_events([table.slice(0, 1), table.slice(1)]).equals(table)
    filled = dev.with_ts_filled(np.full(500, 42, np.int64)).to_arrow().column("ts").cast(pa.int64())
    expect = table.column("ts").cast(pa.int64()).fill_null(42)
    assert filled.equals(expect) and host_events(dev).equals(table)


def test_a_device_batch_gives_the_pipeline_the_same_graph():
    table = _events(4000, seed=3)
    a, b = build_pipeline(structure="coo", backend="cpu"), build_pipeline(structure="coo", backend="cpu")
    for lo in range(0, 4000, 1000):
        a.apply(table.slice(lo, 1000))
        b.apply(DeviceEvents.from_arrow(table.slice(lo, 1000), np))
    assert a.edges().equals(b.edges()) and a.vertices().equals(b.vertices())


def test_the_partition_merge_orders_device_batches_as_arrow_ones():
    tables = {p: _events(300, seed=10 + p).set_column(4, "ts", pa.array(
        np.sort(np.random.default_rng(p).integers(0, 1000, 300)), pa.int64()).cast(pa.timestamp("ms")))
        for p in range(3)}
    released = []
    for device in (False, True):
        merge = PartitionMerge()
        for p, t in tables.items():
            events = DeviceEvents.from_arrow(t, np) if device else t
            merge.add(("t", p), events, np.arange(300), pa.table({"position": pa.array([], pa.int64())}), 0, 300)
        released.append(host_events(merge.release({("t", p): True for p in tables}).events))
    assert released[0].num_rows == 900 and released[0].equals(released[1])


# -- choosing the decoder --------------------------------------------------------------------
def test_decoder_choice_without_a_gpu():
    assert resolve_decoder("pyarrow", gpu=False) == "pyarrow"
    assert resolve_decoder("auto", gpu=False) == "pyarrow"
    assert make_decoder("auto", gpu=False) is decode
    with pytest.raises(DecoderUnavailable, match="GPU backend"):
        resolve_decoder("cudf", gpu=False)
    with pytest.raises(ValueError, match="unknown decoder"):
        resolve_decoder("simdjson", gpu=False)


def test_results_as_cudf_without_a_gpu_is_a_clear_error():
    p = build_pipeline(structure="coo", backend="cpu", jobs=["triangles"])
    p.apply(_events(100))
    with pytest.raises(Exception, match="GPU backend"):
        p.edges(to="cudf")
    with pytest.raises(ValueError, match="arrow' or 'cudf"):
        p.results(to="pandas")
    assert p.results()["triangles"].num_rows == p.structure.num_vertices


@pytest.mark.parametrize("argv", [
    ["replay", "--decoder", "cudf", "--backend", "cpu", "--no-progress"],
    ["run", "--topic", "t", "--bootstrap-servers", "127.0.0.1:9", "--backend", "cpu", "--decoder", "cudf",
     "--check"],
    ["replay", "--decoder", "gpu"],
])
def test_asking_for_cudf_where_it_cannot_run_is_one_line(argv):
    proc = subprocess.run([sys.executable, "-m", "vinestream", *argv], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert "Traceback" not in proc.stderr and len(lines) <= 3, proc.stderr
    assert "decoder" in proc.stderr
