"""vinestream.connectors.files.convert: each input format, on tiny hand-written files and real-data slices."""
import gzip
from pathlib import Path

import networkx as nx
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from vinestream.connectors.files import convert, detect_format
from vinestream.connectors.shared_data import shared_data_dir
from vinestream.stream.events.schema import EVENT_SCHEMA

DATA = shared_data_dir() or Path("/nonexistent")
needs_data = pytest.mark.skipif(shared_data_dir() is None, reason="shared real data not present")


def _read(path):
    t = pq.read_table(path)
    assert t.schema.remove_metadata() == EVENT_SCHEMA
    assert set(t.column("op").to_pylist()) <= {1}
    return t


def _pairs(t):
    return list(zip(t.column("src").to_pylist(), t.column("dst").to_pylist()))


def test_snap_comments_tabs_runs_of_blanks_and_time_sort(tmp_path):
    src = tmp_path / "log.txt"
    src.write_text("# comment\n% other comment\n1\t2  30\n  3 4\t10\n\n5   6 20 \r\n7 8 10\n")
    r = convert(src, tmp_path / "o.parquet")
    t = _read(tmp_path / "o.parquet")
    assert r.format == "snap" and r.rows == 4 and r.has_ts
    assert _pairs(t) == [(3, 4), (7, 8), (5, 6), (1, 2)]          # stable by time
    assert t.column("ts").cast(pa.int64()).to_pylist() == [10_000, 10_000, 20_000, 30_000]


def test_snap_without_time_gz(tmp_path):
    src = tmp_path / "g.txt.gz"
    with gzip.open(src, "wt") as fh:
        fh.write("# FromNodeId\tToNodeId\n10\t20\n20\t10\n30\t10\n")
    r = convert(src, tmp_path / "o.parquet")
    t = _read(tmp_path / "o.parquet")
    assert not r.has_ts and t.column("ts").null_count == 3 and _pairs(t) == [(10, 20), (20, 10), (30, 10)]


def test_snap_ragged_lines_raise(tmp_path):
    (tmp_path / "bad.txt").write_text("1 2\n3 4 5\n")
    with pytest.raises(ValueError):
        convert(tmp_path / "bad.txt", tmp_path / "o.parquet")


def test_signed_csv(tmp_path):
    src = tmp_path / "s.csv"
    src.write_text("1,2,-5,1289241941.53378\n3,4,10,1289241911.72836\n")
    assert detect_format(src) == "signed"
    convert(src, tmp_path / "o.parquet")
    t = _read(tmp_path / "o.parquet")
    assert _pairs(t) == [(3, 4), (1, 2)] and t.column("weight").to_pylist() == [10.0, -5.0]
    assert t.column("ts").cast(pa.int64()).to_pylist() == [1289241911728, 1289241941534]


def test_mtx_symmetric_real_and_general(tmp_path):
    sym = tmp_path / "s.mtx"
    sym.write_text("%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 3\n2 1 0.5\n3 3 2\n3 1 1.5\n")
    convert(sym, tmp_path / "s.parquet")
    t = _read(tmp_path / "s.parquet")
    assert _pairs(t) == [(2, 1), (1, 2), (3, 3), (3, 1), (1, 3)]
    assert t.column("weight").to_pylist() == [0.5, 0.5, 2.0, 1.5, 1.5]
    gen = tmp_path / "g.mtx"
    gen.write_text("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n")
    convert(gen, tmp_path / "g.parquet")
    t = _read(tmp_path / "g.parquet")
    assert _pairs(t) == [(1, 2), (2, 1)] and t.column("weight").null_count == 2


def test_metis_with_isolated_vertex_and_edge_weights(tmp_path):
    g = tmp_path / "g.graph"
    g.write_text("% comment\n4 2\n2 3\n1\n1\n\n")          # vertex 4 isolated
    convert(g, tmp_path / "o.parquet")
    assert _pairs(_read(tmp_path / "o.parquet")) == [(1, 2), (1, 3), (2, 1), (3, 1)]
    w = tmp_path / "w.graph"
    w.write_text("3 2 1\n2 5 3 7\n1 5\n1 7\n")
    convert(w, tmp_path / "w.parquet")
    t = _read(tmp_path / "w.parquet")
    assert _pairs(t) == [(1, 2), (1, 3), (2, 1), (3, 1)] and t.column("weight").to_pylist() == [5, 7, 5, 7]


def test_event_csv_with_rejects(tmp_path):
    f = tmp_path / "e.csv"
    f.write_text("op,src,dst,weight,ts\nadd,1,2\ndelete,1,2,,5\nadd_vertex,9\nadd,x,1\n")
    r = convert(f, tmp_path / "o.parquet")
    t = pq.read_table(tmp_path / "o.parquet")
    assert r.format == "events" and t.column("op").to_pylist() == [1, 2, 3]
    assert r.rejected == 1 and r.dead.column("position").to_pylist() == [4]


def _slice_gz(src, dst, lines):
    with gzip.open(src, "rt") as fh, open(dst, "w") as out:
        for i, line in enumerate(fh):
            if i >= lines:
                break
            out.write(line)


@needs_data
def test_collegemsg_full_against_independent_counts(tmp_path):
    r = convert(DATA / "temporal/CollegeMsg.txt.gz", tmp_path / "c.parquet")
    t = _read(tmp_path / "c.parquet")
    assert r.rows == 59_835                                   # SOURCES.md, and line count below
    with gzip.open(DATA / "temporal/CollegeMsg.txt.gz", "rt") as fh:
        lines = [tuple(map(int, line.split())) for line in fh]
    assert r.rows == len(lines)
    assert len(set(_pairs(t))) == 20_296 == len({(a, b) for a, b, _ in lines})
    assert np.all(np.diff(t.column("ts").cast(pa.int64()).to_numpy()) >= 0)


@needs_data
def test_unsorted_real_slice_is_sorted_stably(tmp_path):
    _slice_gz(DATA / "temporal/email-Eu-core-temporal.txt.gz", tmp_path / "e.txt", 3000)
    convert(tmp_path / "e.txt", tmp_path / "e.parquet")
    t = _read(tmp_path / "e.parquet")
    rows = [tuple(map(int, line.split())) for line in open(tmp_path / "e.txt")]
    want = sorted(rows, key=lambda r: r[2])                  # Python's sort is stable
    assert _pairs(t) == [(a, b) for a, b, _ in want]


@needs_data
def test_real_signed_and_matrix_market_and_metis_counts(tmp_path):
    r = convert(DATA / "temporal/soc-sign-bitcoinalpha.csv.gz", tmp_path / "b.parquet")
    assert r.format == "signed" and r.rows == 24_186
    r = convert(DATA / "static/delaunay_n16.mtx.gz", tmp_path / "d.parquet")
    t = _read(tmp_path / "d.parquet")
    assert r.rows == 2 * 196_575
    g = nx.Graph(_pairs(t))
    assert g.number_of_nodes() == 65_536 and g.number_of_edges() == 196_575
    r = convert(DATA / "static/rgg_n_2_15_s0.graph.gz", tmp_path / "r.parquet")
    assert r.rows == 2 * 160_240


@needs_data
def test_real_ca_grqc_slice_with_comments(tmp_path):
    _slice_gz(DATA / "static/ca-GrQc.txt.gz", tmp_path / "ca.txt", 500)
    convert(tmp_path / "ca.txt", tmp_path / "ca.parquet")
    t = _read(tmp_path / "ca.parquet")
    want = [tuple(map(int, line.split("\t"))) for line in open(tmp_path / "ca.txt") if not line.startswith("#")]
    assert _pairs(t) == want
