"""vinestream.connectors.files.convert: each input format, on tiny hand-written files and real-data slices."""
import gzip
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vinestream.connectors import files
from vinestream.connectors.files import ConvertError, convert, detect_format
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
    r = convert(src, tmp_path / "o.parquet", columns="src,dst,ts")
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


def test_ragged_lines_are_dead_letters_with_their_line(tmp_path):
    (tmp_path / "bad.txt").write_text("1 2\n3 4 5\n# c\n6 7\n")
    r = convert(tmp_path / "bad.txt", tmp_path / "o.parquet")
    assert _pairs(_read(tmp_path / "o.parquet")) == [(1, 2), (6, 7)]
    dead = pq.read_table(tmp_path / "o.dead_letter.parquet").to_pylist()
    assert r.rejected == 1 and [(d["position"], d["reason"], d["payload"]) for d in dead] == [(2, "malformed", "3 4 5")]


@pytest.mark.parametrize("name, text", [
    ("e.csv", "# c\nsrc,dst,ts\n1,2,10\n\nx,4,5\n5,6\n% c\n7,8,1e30\n9,10,20\n"),
    ("e.tsv", "src\tdst\n\n1\t2\n1\t\n3\t4\n"),
    ("e.txt", "# c\n1 2\n\n3 4 5\n6 y\n7 8\n"),
    ("e.jsonl", '{"src": 1, "dst": 2}\n\n# c\n{bad\n{"src": "x", "dst": 2}\n{"src": 3, "dst": 4}\n'),
    ("e.mtx", "%%MatrixMarket matrix coordinate pattern general\n% c\n3 3 4\n1 2\n\n4 1\n2 3 4\n3 1\n"),
    ("e.graph", "% c\n3 3\n2 3\n1 9\n1 x\n"),
    ("ev.csv", "op,src,dst\n\nadd,1,2\nbogus,1,2\n# c\nadd_vertex\nadd,2,3\n"),
])
def test_dead_letter_positions_are_the_files_line_numbers(tmp_path, name, text):
    """A dead letter of a text file names the row by its line number as editors, grep -n and convert's own
    messages count it (from 1): the position was 0-based (the row on file line 2 was position 1) while the error
    for a file whose every row is rejected said "line 2" for the same row."""
    f = tmp_path / name
    f.write_text(text)
    r = convert(f, tmp_path / "o.parquet")
    lines = text.split("\n")
    assert r.rejected > 0 and r.position == "line" and "(position: line number, from 1)" in str(r)
    for d in r.dead.select(["position", "payload"]).to_pylist():
        assert lines[d["position"] - 1] == d["payload"], (d, lines)


def test_positions_in_messages_and_dead_letters_agree(tmp_path):
    (tmp_path / "onebad.csv").write_text("src,dst\nx,1\n3,4\n")
    (tmp_path / "allbad.csv").write_text("src,dst\nx,1\ny,2\n")
    r = convert(tmp_path / "onebad.csv", tmp_path / "ob.parquet")
    assert _dead(r) == [(2, "bad_id")]
    with pytest.raises(ConvertError, match=r"every one of 2 rows was rejected \(line 2: bad_id: src 'x'"):
        convert(tmp_path / "allbad.csv", tmp_path / "ab.parquet")
    # a Parquet input's rows count from 0, as replay counts a log's rows (its dead letters' positions)
    pq.write_table(pa.table({"src": ["1", "x"], "dst": [2, 3]}), tmp_path / "t.parquet")
    r = convert(tmp_path / "t.parquet", tmp_path / "t2.parquet")
    assert _dead(r) == [(1, "bad_id")] and r.position == "row" and "(position: row, from 0)" in str(r)
    pq.write_table(pa.table({"src": ["y", "x"], "dst": [2, 3]}), tmp_path / "t.parquet")
    with pytest.raises(ConvertError, match=r"every one of 2 rows was rejected \(row 0, counting from 0: bad_id"):
        convert(tmp_path / "t.parquet", tmp_path / "t2.parquet")


def test_the_issue_edge_list_is_not_corrupted(tmp_path):
    """Issue 10: '1,2 / 3,4,0.5 / 9,10' used to become one event and "add vertex 4"."""
    (tmp_path / "e.csv").write_text("1,2\n3,4,0.5\n9,10\n")
    r = convert(tmp_path / "e.csv", tmp_path / "e.parquet")
    assert _pairs(_read(tmp_path / "e.parquet")) == [(1, 2), (9, 10)]
    assert r.rejected == 1 and "1 row rejected" in str(r) and "comma-separated, no header" in str(r)
    assert "columns src, dst" in str(r)


@pytest.mark.parametrize("header, sep", [("source,target", ","), ("src,dst", ","), ("from,to", ","),
                                         ("Source\tTarget", "\t"), ("FROM TO", " ")])
def test_csv_tsv_and_blank_headers_are_recognised(tmp_path, header, sep):
    suffix = {",": ".csv", "\t": ".tsv", " ": ".txt"}[sep]
    f = tmp_path / f"h{suffix}"
    f.write_text(f"{header}\n1{sep}2\n3{sep}4\n")
    r = convert(f, tmp_path / "o.parquet")
    assert _pairs(_read(tmp_path / "o.parquet")) == [(1, 2), (3, 4)] and r.rejected == 0
    assert "header" in str(r)


def test_header_with_weight_and_time_and_an_unknown_column(tmp_path):
    f = tmp_path / "w.csv"
    f.write_text("source,target,weight,timestamp\n1,2,0.5,20\n2,3,1.5,10\n")
    convert(f, tmp_path / "o.parquet")
    t = _read(tmp_path / "o.parquet")
    assert _pairs(t) == [(2, 3), (1, 2)] and t.column("weight").to_pylist() == [1.5, 0.5]
    f.write_text("source,target,label\n1,2,x\n")
    with pytest.raises(ConvertError, match="column 'label' has no known meaning"):
        convert(f, tmp_path / "o.parquet")
    r = convert(f, tmp_path / "o.parquet", columns="src,dst,_")
    assert r.rows == 1


@pytest.mark.parametrize("columns, unit, weight, ts", [
    ("src,dst,weight", "s", [0.5, 2.0], [None, None]),
    ("src,dst,ts", "s", [None, None], [500, 2000]),
    ("src,dst,ts", "ms", [None, None], [0, 2]),            # 0.5 ms and 2 ms, rounded to ms
    ("src,dst,weight,_", "s", [0.5, 2.0], [None, None]),
])
def test_a_declared_third_column(tmp_path, columns, unit, weight, ts):
    f = tmp_path / "t.txt"
    f.write_text("1 2 0.5 9\n3 4 2 9\n" if columns.endswith("_") else "1 2 0.5\n3 4 2\n")
    convert(f, tmp_path / "o.parquet", columns=columns, time_unit=unit)
    t = _read(tmp_path / "o.parquet")
    assert t.column("weight").to_pylist() == weight
    assert t.column("ts").cast(pa.int64()).to_pylist() == ts


def test_times_in_the_wrong_unit_and_nan_times(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("1 2 1700000000000\n3 4 1700000000500\n")
    with pytest.raises(ConvertError, match=r"year 55,8.*--time-unit ms"):
        convert(f, tmp_path / "o.parquet", columns="src,dst,ts")
    f.write_text("1 2 100\n3 4 nan\n5 6 50\n")
    r = convert(f, tmp_path / "o.parquet", columns="src,dst,ts")
    t = _read(tmp_path / "o.parquet")
    assert _pairs(t) == [(5, 6), (1, 2)] and r.rejected == 1 and r.dead.column("reason").to_pylist() == [
        "bad_timestamp"]                                    # never the minimum timestamp


def test_times_each_row_on_its_own(tmp_path):
    # ISO text and numbers in one column, an impossible date, one time past 2200: each row has its own outcome
    f = tmp_path / "t.csv"
    f.write_text("src,dst,ts\n1,2,2020-01-01T00:00:00\n3,4,2020-13-45\n5,6,1e20\n7,8,-1\n9,10,1577836801\n")
    r = convert(f, tmp_path / "o.parquet")
    t = _read(tmp_path / "o.parquet")
    assert _pairs(t) == [(7, 8), (1, 2), (9, 10)]
    assert t.column("ts").cast(pa.int64()).to_pylist() == [-1000, 1_577_836_800_000, 1_577_836_801_000]
    assert _dead(r) == [(3, "bad_timestamp"), (4, "bad_timestamp")]
    assert "2200" in r.dead.column("detail")[1].as_py()
    # before 1740 (the same bound): said so, not "after the year 2200" nor "not an ISO 8601 time"
    f.write_text("src,dst,ts\n1,2,5\n3,4,-8000000000\n5,6,1600-01-01\n7,8,6\n")
    r = convert(f, tmp_path / "o.parquet")
    assert _dead(r) == [(3, "bad_timestamp"), (4, "bad_timestamp")]
    assert r.dead.column("detail").to_pylist() == [
        "ts read as seconds is before the year 1740",
        "ts is not an ISO 8601 time between the years 1740 and 2200, nor a number"]
    # most times past 2200: the unit is wrong, not the rows
    f.write_text("src,dst,ts\n1,2,1700000000000\n3,4,1700000000500\n5,6,1700000000\n")
    with pytest.raises(ConvertError, match=r"2 of 3 rows.*--time-unit ms"):
        convert(f, tmp_path / "o.parquet")


@pytest.mark.parametrize("name, content, words, unit", [
    ("n.csv", "src,dst,ts\n1,2,100\n", "ts read as seconds (--time-unit s)", "s"),
    ("iso.csv", "src,dst,ts\n1,2,2020-01-01T00:00:00\n", "ts read as ISO 8601 times", None),
    ("mix.csv", "src,dst,ts\n1,2,2020-01-01\n3,4,1600000000\n", "ts read as seconds (--time-unit s) and ISO 8601 times",
     "s"),
    ("e.csv", "op,src,dst,ts\nadd,1,2,100\n", "ts read as milliseconds (the event format's unit)", None),
    ("eiso.csv", "op,src,dst,ts\nadd,1,2,2020-01-01\n", "ts read as ISO 8601 times", None),
    ("j.jsonl", '{"src": 1, "dst": 2, "ts": "2020-01-01T00:00:00"}\n',
     "ts read as timestamps (--time-unit does not apply)", None),
    ("j2.jsonl", '{"src": 1, "dst": 2, "ts": 1600000000}\n', "ts read as seconds (--time-unit s)", "s"),
    ("typed.parquet", pa.table({"src": [1], "dst": [2], "ts": pa.array([1000], pa.timestamp("ms"))}),
     "ts read as timestamps (--time-unit does not apply)", None),
    ("ints.parquet", pa.table({"src": [1], "dst": [2], "ts": [1000]}), "ts read as seconds (--time-unit s)", "s"),
])
def test_the_time_unit_is_named_only_where_it_read_numbers(tmp_path, name, content, words, unit):
    """convert printed "ts read as seconds (--time-unit s)" for ISO text and typed timestamps, which the unit does
    not touch (and "ts (milliseconds)" for an event log whose times it had read as seconds)."""
    f = tmp_path / name
    if isinstance(content, pa.Table):
        pq.write_table(content, f)
    else:
        f.write_text(content)
    r = convert(f, tmp_path / "o.parquet")
    assert str(r).splitlines()[1].startswith(words + ": ") and r.time_unit == unit, str(r)


def test_utf8_byte_order_mark_before_a_header(tmp_path):
    f = tmp_path / "excel.csv"
    f.write_bytes(b"\xef\xbb\xbfsrc,dst\r\n1,2\r\n3,4\r\n")
    r = convert(f, tmp_path / "o.parquet")
    assert r.rejected == 0 and _pairs(_read(tmp_path / "o.parquet")) == [(1, 2), (3, 4)]


@pytest.mark.parametrize("name, text, columns", [
    ("t.csv", "# c\nsrc,dst,ts\n1,2,10\n\n3,4\n5,x,30\n% c\n7,8,40\n9,10,2020-01-01\n11,12,nan\n" * 7, None),
    ("t.txt", "1 2 10\n# c\n3 4 20 9\n\n5 6 5\n" * 9, "src,dst,ts"),
    ("t.mtx", "%%MatrixMarket matrix coordinate real symmetric\n% c\n5 5 40\n"
     + "2 1 0.5\n4 9 1\n% c\n3 3 2\n1 x 1\n5 1\n" * 8, None),

    ("e.csv", '"op","src","dst","weight","ts"\n' + 'add,1,2\n\n# c\n"add","3",4,0.5,10\nadd_vertex,x\ndel,"1,2"\n' * 7,
     None),
])
def test_text_read_in_pieces_gives_what_it_gives_whole(tmp_path, monkeypatch, name, text, columns):
    """Text is parsed a piece at a time (files.PIECE_BYTES): pieces of a few lines, cut anywhere, give the same
    events, the same dead letters at the same lines, the same header and the same time order."""
    f = tmp_path / name
    f.write_text(text)
    whole = convert(f, tmp_path / "whole.parquet", columns=columns)
    for size in (1, 17, 64):
        monkeypatch.setattr(files, "PIECE_BYTES", size)
        pieces = convert(f, tmp_path / f"p{size}.parquet", columns=columns)
        assert pq.read_table(tmp_path / f"p{size}.parquet").equals(pq.read_table(tmp_path / "whole.parquet"))
        assert pieces.dead.select(["position", "reason", "payload"]).equals(
            whole.dead.select(["position", "reason", "payload"]))
        assert (pieces.layout, pieces.columns, pieces.moved, pieces.rejected) == (
            whole.layout, whole.columns, whole.moved, whole.rejected)
    assert whole.rejected > 0 and whole.rows > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(times=st.lists(st.integers(0, 12), min_size=1, max_size=120), bucket=st.integers(1, 40),
       sample_every=st.integers(1, 5), piece=st.sampled_from([1, 40, 1 << 20]))
def test_time_sort_in_buckets_is_the_stable_sort(tmp_path, monkeypatch, times, bucket, sample_every, piece):
    """A log out of time order is sorted in buckets of ts ranges (files.SORT_BUCKET_ROWS rows, bounds from one
    time in files._SAMPLE_EVERY), written in row groups as they fill: the result is Python's stable sort of the
    lines by time, whatever the bucket, sample and piece sizes, and ``moved`` counts the rows it moved."""
    monkeypatch.setattr(files, "SORT_BUCKET_ROWS", bucket)
    monkeypatch.setattr(files, "_SAMPLE_EVERY", sample_every)
    monkeypatch.setattr(files, "PIECE_BYTES", piece)
    rows = [(i + 1, i + 2, t) for i, t in enumerate(times)]
    f = tmp_path / "log.txt"
    f.write_text("".join(f"{s} {d} {t}\n" for s, d, t in rows))
    out = tmp_path / "o.parquet"
    r = convert(f, out, columns="src,dst,ts", row_group_size=7)
    want = sorted(rows, key=lambda row: row[2])
    t = _read(out)
    assert list(zip(t.column("src").to_pylist(), t.column("dst").to_pylist(),
                    (v // 1000 for v in t.column("ts").cast(pa.int64()).to_pylist()))) == want
    assert r.moved == sum(a != b for a, b in zip(rows, want))
    assert [pq.ParquetFile(out).metadata.row_group(g).num_rows for g in range(pq.ParquetFile(out).num_row_groups)] \
        == [7] * (len(rows) // 7) + ([len(rows) % 7] if len(rows) % 7 else [])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.txt", "o.parquet"]      # no temporary file left


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_memory_does_not_grow_with_the_input(tmp_path):
    """Text is read a piece at a time, written a row group at a time and sorted a bucket at a time: a log 16x
    longer, in and out of time order, converts in about the same peak memory (the whole process's, as the kernel
    counts it).  Parsed in the same pieces but held whole and sorted whole, the longer one needed ~60 MB more."""
    # VmHWM: the peak resident memory of this process image (ru_maxrss keeps the forking parent's across exec)
    script = (
        "import re, sys\n"
        "from vinestream.connectors import files\n"
        "files.PIECE_BYTES, files.SORT_BUCKET_ROWS = 1 << 18, 20_000\n"
        "files.convert(sys.argv[1], sys.argv[2], columns='src,dst,ts', row_group_size=10_000)\n"
        "print(re.search(r'VmHWM:\\s*(\\d+) kB', open('/proc/self/status').read()).group(1))\n")
    rng = np.random.default_rng(7)
    peaks = {}
    for n in (50_000, 800_000):
        ts = rng.integers(0, 10**9, n)
        for order in ("sorted", "shuffled"):
            f = tmp_path / f"{order}{n}.txt"
            t = np.sort(ts) if order == "sorted" else ts
            columns = {"src": rng.integers(0, 10**6, n), "dst": rng.integers(0, 10**6, n), "ts": t}
            # the text np.savetxt(fmt="%d") writes ("SRC DST TS" lines), written by pyarrow in a fraction of its time
            pa.csv.write_csv(pa.table(columns), f, pa.csv.WriteOptions(include_header=False, delimiter=" ",
                                                                      quoting_style="none"))
            got = subprocess.run([sys.executable, "-c", script, str(f), str(tmp_path / f"{order}{n}.parquet")],
                                 capture_output=True, text=True, timeout=300, cwd=Path(__file__).parent.parent)
            assert got.returncode == 0, got.stderr
            peaks[order, n] = int(got.stdout.split()[-1]) * 1024
            assert pq.read_metadata(tmp_path / f"{order}{n}.parquet").num_rows == n
    for order in ("sorted", "shuffled"):
        assert peaks[order, 800_000] - peaks[order, 50_000] < 25 << 20, peaks


def test_a_refused_conversion_leaves_the_earlier_output(tmp_path):
    """The log is written to a temporary file that replaces the output only at the end: a file refused after
    some of it was read (a Matrix Market file cut short, a file whose every row is rejected) leaves the earlier
    output as it was, and no temporary file."""
    out = tmp_path / "o.parquet"
    (tmp_path / "good.txt").write_text("1 2\n3 4\n")
    convert(tmp_path / "good.txt", out)
    before = out.read_bytes()
    (tmp_path / "cut.mtx").write_text("%%MatrixMarket matrix coordinate pattern general\n5 5 4\n1 2\n2 3\n")
    (tmp_path / "bad.csv").write_text("src,dst\n1,x\ny,2\n")
    for name, match in (("cut.mtx", "says 4 entries"), ("bad.csv", "every one of 2 rows")):
        with pytest.raises(ConvertError, match=match):
            convert(tmp_path / name, out)
        assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "cut.mtx", "good.txt", "o.parquet"]


@pytest.mark.parametrize("piece", [1, 8, 1 << 20])
def test_no_sort_says_whether_the_log_is_in_time_order(tmp_path, monkeypatch, piece):
    """--no-sort printed "already in time order" for a log that was not (QA: '1 2 300 / 2 3 100'): it says that the
    log was not sorted, and how many rows have a ts before an earlier row's (a running maximum over the pieces)."""
    monkeypatch.setattr(files, "PIECE_BYTES", piece)
    (tmp_path / "nt.txt").write_text("1 2 300\n2 3 100\n")
    r = convert(tmp_path / "nt.txt", tmp_path / "nt.parquet", columns="src,dst,ts", sort_by_time=False)
    assert (r.unsorted_why, r.late, r.moved) == ("--no-sort", 1, 0)
    assert "; not sorted by ts (--no-sort): 1 row out of time order (a ts before an earlier row's)" in str(r)
    assert "in time order" not in str(r).replace("out of time order", "")
    assert _pairs(_read(tmp_path / "nt.parquet")) == [(1, 2), (2, 3)]                # the file's order, kept
    (tmp_path / "five.txt").write_text("1 2 5\n2 3 6\n3 4 1\n4 5 7\n5 6 2\n6 7 7\n")
    r = convert(tmp_path / "five.txt", tmp_path / "o.parquet", columns="src,dst,ts", sort_by_time=False)
    assert r.late == 2 and "2 rows out of time order" in str(r)
    (tmp_path / "in.txt").write_text("1 2 5\n2 3 5\n3 4 9\n")
    r = convert(tmp_path / "in.txt", tmp_path / "o.parquet", columns="src,dst,ts", sort_by_time=False)
    assert r.late == 0 and str(r).splitlines()[1].endswith("; not sorted by ts (--no-sort): in time order")
    r = convert(tmp_path / "five.txt", tmp_path / "o.parquet", columns="src,dst,ts")          # sorted: as before
    assert (r.unsorted_why, r.moved) == (None, 5) and "sorted by ts, 5 rows moved" in str(r)
    # an event log keeps its order, and says how far from time order it is
    (tmp_path / "ev.csv").write_text("op,src,dst,ts\nadd,1,2,5\nadd,2,3,4\nadd,3,4,9\n")
    r = convert(tmp_path / "ev.csv", tmp_path / "o.parquet")
    assert "not sorted by ts (event logs keep their order): 1 row out of time order" in str(r)


def test_a_parquet_event_log_keeps_its_order(tmp_path):
    """A Parquet log with an op column is an event log: its order is its meaning (a delete after its add), so it
    is not sorted by time, as a CSV event log is not (a Parquet one was sorted: its columns read "op=op")."""
    ts = pa.array([20_000, 10_000, 30_000], pa.timestamp("ms"))
    pq.write_table(pa.table({"op": ["add", "delete", "add"], "src": [1, 1, 2], "dst": [2, 2, 3], "ts": ts}),
                   tmp_path / "ev.parquet")
    r = convert(tmp_path / "ev.parquet", tmp_path / "o.parquet")
    t = pq.read_table(tmp_path / "o.parquet")
    assert r.unsorted_why == "event logs keep their order" and r.moved == 0
    assert t.column("op").to_pylist() == [1, 2, 1] and t.column("ts").equals(pa.chunked_array([ts]))


def test_json_lines(tmp_path):
    f = tmp_path / "e.jsonl"
    f.write_text('{"source": 1, "target": 2, "weight": 0.5}\n{"source": 3}\nnot json\n{"source": 4, "target": 5}\n')
    r = convert(f, tmp_path / "o.parquet")
    t = _read(tmp_path / "o.parquet")
    assert r.format == "json" and _pairs(t) == [(1, 2), (4, 5)] and t.column("weight").to_pylist() == [0.5, None]
    assert sorted(r.dead.column("reason").to_pylist()) == ["malformed", "missing_dst"]
    assert r.dead.column("position").to_pylist() == [2, 3]


def test_json_lines_with_a_malformed_line_keep_every_key_of_the_others(tmp_path):
    """A malformed line is a dead letter and changes nothing else: the other lines keep their op, weight and ts
    (the fallback parse took its columns from the first good line only: a delete became an add)."""
    good = '{"op":"add","src":1,"dst":2}\n{"op":"delete","src":1,"dst":2,"ts":5}\n{"src":2,"dst":3,"weight":0.5,' \
        '"op":"add"}\n'
    (tmp_path / "ok.jsonl").write_text(good)
    (tmp_path / "bad.jsonl").write_text(good + "{bad\n")
    ok = convert(tmp_path / "ok.jsonl", tmp_path / "ok.parquet")
    bad = convert(tmp_path / "bad.jsonl", tmp_path / "bad.parquet")
    assert pq.read_table(tmp_path / "bad.parquet").equals(pq.read_table(tmp_path / "ok.parquet"))
    assert pq.read_table(tmp_path / "ok.parquet").column("op").to_pylist() == [1, 2, 1]
    assert (ok.rejected, bad.rejected, bad.dead.column("position").to_pylist()) == (0, 1, [4])
    assert sorted(bad.columns) == sorted(ok.columns)


def test_parquet_edge_tables_and_event_logs(tmp_path):
    pq.write_table(pa.table({"source": [1, 2], "target": [3, 4]}), tmp_path / "edges.parquet")
    r = convert(tmp_path / "edges.parquet", tmp_path / "o.parquet")
    assert r.format == "parquet" and _pairs(_read(tmp_path / "o.parquet")) == [(1, 3), (2, 4)]
    events = pa.table({"op": ["add", "bogus"], "src": [1, 2], "dst": [2, 3]})
    pq.write_table(events, tmp_path / "ev.parquet")
    r = convert(tmp_path / "ev.parquet", tmp_path / "o2.parquet")
    assert r.rows == 1 and r.dead.column("reason").to_pylist() == ["unknown_op"]


def test_signed_csv(tmp_path):
    src = tmp_path / "s.csv"
    src.write_text("1,2,-5,1289241941.53378\n3,4,10,1289241911.72836\n")
    assert detect_format(src) == "csv"
    with pytest.raises(ConvertError, match="4 fields per line and no header"):   # never guessed
        convert(src, tmp_path / "o.parquet")
    convert(src, tmp_path / "o.parquet", fmt="signed")
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
    t = pq.read_table(tmp_path / "o.parquet")
    assert t.column("op").to_pylist() == [1, 1, 1, 1, 3]                 # the isolated vertex is kept
    assert t.column("src").to_pylist() == [1, 1, 2, 3, 4] and t.column("dst").to_pylist()[:4] == [2, 3, 1, 1]
    g.write_text("4 1\n2\n1\n\n\n")                        # vertices 3 and 4 isolated, blank lines
    convert(g, tmp_path / "o.parquet")
    t = pq.read_table(tmp_path / "o.parquet")
    assert list(zip(t.column("op").to_pylist(), t.column("src").to_pylist())) == [(1, 1), (1, 2), (3, 3), (3, 4)]
    w = tmp_path / "w.graph"
    w.write_text("3 2 1\n2 5 3 7\n1 5\n1 7\n")
    convert(w, tmp_path / "w.parquet")
    t = _read(tmp_path / "w.parquet")
    assert _pairs(t) == [(1, 2), (1, 3), (2, 1), (3, 1)] and t.column("weight").to_pylist() == [5, 7, 5, 7]


def _dead(report):
    return [(r["position"], r["reason"]) for r in report.dead.select(["position", "reason"]).to_pylist()]


def test_mtx_bad_entries_are_dead_letters_each_on_its_own(tmp_path):
    # one good entry between entries that are wrong each in its own way: every one has one outcome, by its line
    f = tmp_path / "m.mtx"
    f.write_text("%%MatrixMarket matrix coordinate real symmetric\n% c\n3 4 7\n"
                 "2 1 0.5\n4 1 1\n1 5 1\n1.5 2 1\n0 1 1\n3 2 x\n3 1\n")
    r = convert(f, tmp_path / "o.parquet")
    t = _read(tmp_path / "o.parquet")
    assert _pairs(t) == [(2, 1), (1, 2)] and t.column("weight").to_pylist() == [0.5, 0.5]   # mirrors of good ones
    assert _dead(r) == [(5, "id_out_of_range"), (6, "id_out_of_range"), (7, "bad_id"), (8, "id_out_of_range"),
                        (9, "bad_weight"), (10, "malformed")]
    assert "row 4 outside 1..3" in r.dead.column("detail")[0].as_py()
    assert r.dead.column("payload").to_pylist()[0] == "4 1 1"


@pytest.mark.parametrize("size, match", [("3 3 abc", "size line '3 3 abc'"), ("3 3 -1", "size line"),
                                         ("3 3", "size line"), ("3 3 2", "says 2 entries, the file has 1")])
def test_mtx_unreadable_size_line_or_cut_file_refused_in_one_line(tmp_path, size, match):
    f = tmp_path / "m.mtx"
    f.write_text(f"%%MatrixMarket matrix coordinate pattern general\n{size}\n1 2\n")
    with pytest.raises(ConvertError, match=match):
        convert(f, tmp_path / "o.parquet")


def test_metis_bad_neighbours_and_lines_are_dead_letters(tmp_path):
    g = tmp_path / "g.graph"
    g.write_text("4 3 1\n2 5 3\n1 5 4 2\n9 1\n3 x 2 2\n")   # edge weights: neighbour-weight pairs
    r = convert(g, tmp_path / "o.parquet")
    t = pq.read_table(tmp_path / "o.parquet")
    # line 2 (vertex 1) has an odd field count: malformed, vertex 1 kept as an isolated vertex (and vertex 2's
    # entry 1, which vertex 1's line no longer confirms, is a dead letter); 9 is past the header's 4 vertices (vertex
    # 3 kept without edges); 'x' is no weight
    assert list(zip(t.column("op").to_pylist(), t.column("src").to_pylist(), t.column("dst").to_pylist(),
                    t.column("weight").to_pylist())) == [
        (3, 1, None, None), (1, 2, 4, 2.0), (3, 3, None, None), (1, 4, 2, 2.0)]
    assert _dead(r) == [(2, "malformed"), (3, "malformed"), (4, "id_out_of_range"), (5, "bad_weight")]
    g.write_text("3 2\n2 0\n1 2.5\n\n")
    r = convert(g, tmp_path / "o.parquet")
    assert _dead(r) == [(2, "id_out_of_range"), (3, "bad_id")]


@pytest.mark.parametrize("text, match", [
    # QA: vertices 3-5 became isolated, exit 0, and 2->3 was kept without 3->2
    ("5 4\n2\n1 3\n", r"METIS header \(line 1\) says 5 vertices, the file has 2 vertex lines after it \(cut short"),
    ("% c\n4 3\n2\n1 3\n% c\n2 4\n", r"header \(line 2\) says 4 vertices, the file has 3 vertex lines"),
    ("3 3\n2 3\n1\n1\n", r"says 3 edges, which the adjacency lists hold twice \(6 neighbour entries: each edge is on "
                          r"both its vertices' lines\); they hold 4$"),
    ("3 4\n2 3\n1\n1\n", r"says 4 edges.* they hold 4$"),             # m counted each edge twice
    ("3 2\n2 3\n1\n1", None),                                         # no newline after the last line
    ("3 2\n2 3\n1\n1\n\n\n", None),                                   # blank lines after the last vertex
    ("3 2\n2 3\n1\n1 2", r"says 2 edges.* they hold 5; 1 of them without their mirror \(the first on line 4: "
                          r"vertex 3 lists 2, vertex 2's line has no 3\)$"),             # the last line holds more
    ("3 3 1\n2 5 3 7\n1 5\n1\n", r"\(6 neighbour entries.*they hold 3 \(and up to 1 more on 1 line whose fields"),
    ("4 3\n2\n3\n4\n1\n", r"says 3 edges.* they hold 4; 4 of them without their mirror \(the first on line 2: vertex "
                           r"1 lists 2, vertex 2's line has no 1: a directed graph\? METIS's are undirected\)$"),
    ("3 2 1\n2 5 3 7\n1 5\n1 7\n", None),                             # edge weights: pairs, each edge twice
    ("3 2 11 2\n4 9 2 5 3 7\n1 1 1 5\n2 2 1 7\n", None),              # two vertex weights before the pairs
    ("3 2 100\n8 2 3\n1 1\n1 1\n", None),                            # a vertex size before the neighbours
    ("3 2 100\n2 3\n1\n1\n", r"they hold 1; 1 of them without"),      # the sizes missing: one neighbour left
])
def test_metis_header_counts_are_the_files(tmp_path, text, match):
    """A METIS file is held to its header as Matrix Market is to its size line, and as METIS's own reader holds it:
    a vertex line for each of the n vertices (comment lines are none), and 2 m neighbour entries (each undirected
    edge is on both its vertices' lines; counted after the vertex fields fmt declares, pairs with edge weights)."""
    g = tmp_path / "g.graph"
    g.write_text(text)
    if match is None:
        r = convert(g, tmp_path / "o.parquet")
        assert r.rejected == 0 and r.ops == {"add_edge": 4}, str(r)
        t = pq.read_table(tmp_path / "o.parquet")
        assert sorted(_pairs(t)) == [(1, 2), (1, 3), (2, 1), (3, 1)]
    else:
        with pytest.raises(ConvertError, match=match):
            convert(g, tmp_path / "o.parquet")
        assert not (tmp_path / "o.parquet").exists()


def test_metis_comment_lines_are_no_vertices(tmp_path):
    """METIS skips comment lines: one between vertex lines made a vertex without neighbours of its own, and the
    vertex lines after it each the next vertex's."""
    g = tmp_path / "g.graph"
    g.write_text("% made by hand\n3 2\n2 3\n% vertex 2 next\n1\n  % indented\n1\n")
    r = convert(g, tmp_path / "o.parquet")
    t = pq.read_table(tmp_path / "o.parquet")
    assert r.rejected == 0 and list(zip(t.column("op").to_pylist(), t.column("src").to_pylist(),
                                        t.column("dst").to_pylist())) == [
        (1, 1, 2), (1, 1, 3), (1, 2, 1), (1, 3, 1)]


def test_metis_entries_without_their_mirror_are_dead_letters(tmp_path):
    """An undirected METIS file whose lists disagree (2 lists 3, 3 does not list 2) kept 2->3 without 3->2: each
    entry the other direction does not confirm, or confirms with another weight, is a dead letter naming the other
    line; the rest of the file converts."""
    g = tmp_path / "g.graph"
    g.write_text("4 3\n2\n1 3\n4\n3 2\n")               # 2 lists 3, 3 not 2; 4 lists 2, 2 not 4
    r = convert(g, tmp_path / "o.parquet")
    t = pq.read_table(tmp_path / "o.parquet")
    assert sorted(_pairs(t)) == [(1, 2), (2, 1), (3, 4), (4, 3)]
    assert _dead(r) == [(3, "malformed"), (5, "malformed")] and r.dead.column("payload").to_pylist() == ["1 3", "3 2"]
    assert r.dead.column("detail")[0].as_py().startswith("vertex 2 lists 3, but vertex 3's line (line 4) has no "
                                                         "valid 2: a METIS graph is undirected")
    g.write_text("% w\n3 2 1\n2 5 3 1\n1 5\n1 2\n")     # 1-3 has weight 1 on line 3, 2 on line 5
    r = convert(g, tmp_path / "o.parquet")
    t = pq.read_table(tmp_path / "o.parquet")
    assert _pairs(t.filter(pc.equal(t.column("op"), 1))) == [(1, 2), (2, 1)]
    assert _dead(r) == [(3, "malformed"), (5, "malformed")]
    assert r.dead.column("detail")[0].as_py().startswith("vertex 1 lists 3 with weight 1, vertex 3's line (line 5) "
                                                         "lists 1 with another")


@pytest.mark.parametrize("head", ["3 2 0 x", "abc 2", "3 2 2", "3", "3 2 1 0"])
def test_metis_unreadable_header_refused_in_one_line(tmp_path, head):
    g = tmp_path / "g.graph"
    g.write_text(f"{head}\n2\n1\n\n")
    with pytest.raises(ConvertError, match="METIS header"):
        convert(g, tmp_path / "o.parquet")


def test_a_binary_graph_file_is_refused_as_no_metis_text(tmp_path):
    """A WebGraph BVGraph ``.graph`` (binary, as shared/data's cnr-2000.graph) was refused with its first bytes
    quoted as a METIS header: "METIS header '\ufffd \ufffd \ufffd ...' is not ...", which said nothing."""
    g = tmp_path / "cnr.graph"
    g.write_bytes(bytes([0xE9, 0x9F, 0x20, 0xB3, 0x41, 0x0A, 0x93, 0x0A]))
    with pytest.raises(ConvertError, match=r"binary bytes where a METIS header .* belongs: not a METIS text file"):
        convert(g, tmp_path / "o.parquet")


@pytest.mark.parametrize("name, data, message", [
    ("web.txt", bytes([0x9c, 0x00, 0x1f, 0x00, 0xe3]) * 40, r"web\.txt: binary data, not a text edge list \(NUL "
     r"bytes in its first 200 bytes\)$"),
    ("web.graph", bytes([0x9c, 0x00, 0x1f, 0x00, 0xe3]) * 40, r"web\.graph: binary data, not a text edge list \(NUL "
     r"bytes in its first 200 bytes\)$"),
    ("cnr.txt", bytes([0xE9, 0x9F, 0x20, 0xB3, 0x41, 0x0A, 0x93, 0x0A]), r"cnr\.txt \(its first line\): binary data, "
     r"not a text edge list \(bytes that are no UTF-8 text\)$"),
    ("cnr.graph", bytes([0xE9, 0x9F, 0x20, 0xB3, 0x41, 0x0A, 0x93, 0x0A]), r"cnr\.graph \(its first line\): binary "
     r"bytes where a METIS header .* belongs: not a METIS text file"),
])
def test_convert_and_check_head_refuse_a_binary_file_alike(tmp_path, name, data, message):
    """``bench --real``'s look ahead (``check_head``: a NUL byte) and the METIS reader (a header of non-text bytes)
    each decided on their own whether a file was binary: a NUL-bearing .txt passed convert's look into its head
    and failed on "column '\ufffd' has no known meaning", a .graph was refused in two wordings, and a binary .txt
    without NUL passed check_head.  One test decides for both: the same file, the same one line."""
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ConvertError, match=message):
        files.check_head(path)
    with pytest.raises(ConvertError, match=message):
        convert(path, tmp_path / "o.parquet")


def test_event_csv_with_rejects(tmp_path):
    f = tmp_path / "e.csv"
    f.write_text("op,src,dst,weight,ts\nadd,1,2\ndelete,1,2,,5\nadd_vertex,9\nadd,x,1\n")
    r = convert(f, tmp_path / "o.parquet")
    t = pq.read_table(tmp_path / "o.parquet")
    assert r.format == "events" and t.column("op").to_pylist() == [1, 2, 3]
    assert r.rejected == 1 and r.dead.column("position").to_pylist() == [5]


def _slice_gz(src, dst, lines):
    with gzip.open(src, "rt") as fh, open(dst, "w") as out:
        for i, line in enumerate(fh):
            if i >= lines:
                break
            out.write(line)


@needs_data
def test_collegemsg_full_against_independent_counts(tmp_path):
    r = convert(DATA / "temporal/CollegeMsg.txt.gz", tmp_path / "c.parquet", columns="src,dst,ts")
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
    convert(tmp_path / "e.txt", tmp_path / "e.parquet", columns="src,dst,ts")
    t = _read(tmp_path / "e.parquet")
    rows = [tuple(map(int, line.split())) for line in open(tmp_path / "e.txt")]
    want = sorted(rows, key=lambda r: r[2])                  # Python's sort is stable
    assert _pairs(t) == [(a, b) for a, b, _ in want]


@needs_data
def test_real_signed_and_matrix_market_and_metis_counts(tmp_path):
    r = convert(DATA / "temporal/soc-sign-bitcoinalpha.csv.gz", tmp_path / "b.parquet", fmt="signed")
    assert r.format == "csv" and r.rows == 24_186 and r.rejected == 0
    r = convert(DATA / "static/delaunay_n16.mtx.gz", tmp_path / "d.parquet")
    t = _read(tmp_path / "d.parquet")
    assert r.rows == 2 * 196_575
    g = nx.Graph(_pairs(t))
    assert g.number_of_nodes() == 65_536 and g.number_of_edges() == 196_575
    r = convert(DATA / "static/rgg_n_2_15_s0.graph.gz", tmp_path / "r.parquet")
    t = pq.read_table(tmp_path / "r.parquet")
    assert r.ops["add_edge"] == 2 * 160_240
    # every one of the header's 32,768 vertices is in the log, the isolated ones as add_vertex events
    assert len(set(t.column("src").to_pylist())) == 32_768
    assert r.ops.get("add_vertex", 0) == 32_768 - len(set(t.filter(pc.equal(t.column("op"), 1))
                                                         .column("src").to_pylist()))


@needs_data
def test_real_ca_grqc_slice_with_comments(tmp_path):
    _slice_gz(DATA / "static/ca-GrQc.txt.gz", tmp_path / "ca.txt", 500)
    convert(tmp_path / "ca.txt", tmp_path / "ca.parquet")
    t = _read(tmp_path / "ca.parquet")
    want = [tuple(map(int, line.split("\t"))) for line in open(tmp_path / "ca.txt") if not line.startswith("#")]
    assert _pairs(t) == want


def test_bzip2_and_xz_inputs_and_compressions_it_cannot_read(tmp_path):
    """gzip, bzip2 and xz are read by their magic bytes (whatever the name); zstd is one line naming it (it was
    read as text: "column '\\ufffd' has no known meaning")."""
    import bz2
    import lzma
    text = b"src,dst,weight\n1,2,0.5\n3,4,1\n"
    (tmp_path / "e.csv").write_bytes(text)
    plain = convert(tmp_path / "e.csv", tmp_path / "plain.parquet")
    for name, packed in (("e.csv.bz2", bz2.compress(text)), ("e.csv.xz", lzma.compress(text)),
                         ("e.csv.gz", gzip.compress(text)), ("e.bin", bz2.compress(text))):
        (tmp_path / name).write_bytes(packed)
        r = convert(tmp_path / name, tmp_path / f"{name}.parquet", fmt="csv" if name == "e.bin" else "auto")
        assert (r.format, r.rows, r.columns) == ("csv", 2, plain.columns), name
        assert pq.read_table(tmp_path / f"{name}.parquet").equals(pq.read_table(tmp_path / "plain.parquet"))
    (tmp_path / "e.csv.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 20)
    with pytest.raises(ConvertError, match="is zstd-compressed, which convert does not read"):
        convert(tmp_path / "e.csv.zst", tmp_path / "z.parquet")
    # a zip file is an archive, not "a zip archive-compressed" file
    (tmp_path / "e.zip").write_bytes(b"PK\x03\x04" + b"\0" * 20)
    with pytest.raises(ConvertError, match=r"e\.zip is a zip archive, which convert does not read .*\(unzip "):
        convert(tmp_path / "e.zip", tmp_path / "zip.parquet")


def test_a_compressed_parquet_file_is_read(tmp_path):
    """A gzip-compressed Parquet log (`gzip -k x.parquet`) was "not a readable Parquet file (Parquet magic bytes not
    found in footer ...)", and replay called it "gzip-compressed text": convert unpacks it beside the output first
    (pyarrow reads Parquet from its footer) and reads it as the Parquet file it is, whatever its name."""
    import bz2
    import lzma
    pq.write_table(pa.table({"op": ["add", "delete"], "src": [1, 1], "dst": [2, 2]}), tmp_path / "ev.parquet")
    plain = convert(tmp_path / "ev.parquet", tmp_path / "plain.parquet")
    raw = (tmp_path / "ev.parquet").read_bytes()
    for name, packed in (("ev.parquet.gz", gzip.compress(raw)), ("ev.parquet.bz2", bz2.compress(raw)),
                         ("ev.parquet.xz", lzma.compress(raw)), ("noname.gz", gzip.compress(raw))):
        (tmp_path / name).write_bytes(packed)
        r = convert(tmp_path / name, tmp_path / "out" / "o.parquet")
        assert (r.format, r.rows, r.columns, r.layout) == ("parquet", 2, plain.columns, plain.layout), name
        assert pq.read_table(tmp_path / "out" / "o.parquet").equals(pq.read_table(tmp_path / "plain.parquet"))
        assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["o.parquet"]    # the unpacked copy is gone
    (tmp_path / "cut.parquet.gz").write_bytes(gzip.compress(raw)[:-30])
    with pytest.raises(ConvertError, match=r"cut\.parquet\.gz: cannot read"):
        convert(tmp_path / "cut.parquet.gz", tmp_path / "out" / "o2.parquet")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["o.parquet"]


def test_quoted_csv_fields_are_read_as_their_text(tmp_path):
    """Double quotes around a field (what spreadsheets write) are dropped from values as from the header: every
    quoted id was a bad_id.  A quoted field holding the separator is one field (standard CSV quoting; it was cut
    there), here an id that is no integer: its line is a dead letter for that."""
    f = tmp_path / "q.csv"
    f.write_text('"source","target","weight"\n"1","2","0.5"\n3,"4",1\n"5,6",7,1\n')
    r = convert(f, tmp_path / "o.parquet")
    t = _read(tmp_path / "o.parquet")
    assert _pairs(t) == [(1, 2), (3, 4)] and t.column("weight").to_pylist() == [0.5, 1.0]
    assert r.dead.column("position").to_pylist() == [4] and r.dead.column("reason").to_pylist() == ["bad_id"]
    assert r.dead.column("detail").to_pylist() == ["src '5,6' is not an integer"]


def _csv_text(rows, delimiter=",", quoting=None):
    import csv
    import io
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, quoting=csv.QUOTE_MINIMAL if quoting is None else quoting,
               lineterminator="\n").writerows(rows)
    return out.getvalue()


@pytest.mark.parametrize("quoting", ["QUOTE_NONNUMERIC", "QUOTE_ALL"])
@pytest.mark.parametrize("name, delimiter", [("e.csv", ","), ("e.tsv", "\t")])
@pytest.mark.parametrize("rows", [
    [["source", "target", "weight"], [1, 2, 0.5], [3, 4, 2.0]],
    [["op", "src", "dst", "weight"], ["add", 1, 2, 0.5], ["delete", 1, 2], ["add_vertex", 9]],
    [["add", 1, 2], ["delete", 1, 2], ["add_vertex", 9]],
], ids=["edges", "events", "events-no-header"])
def test_quoted_fields_and_headers_read_as_unquoted(tmp_path, quoting, name, delimiter, rows):
    """Standard CSV quoting, as Python's csv, pandas (QUOTE_NONNUMERIC quotes only the text fields) and spreadsheets
    write it, reads as the same file unquoted, in CSV and TSV, edge lists and event lines alike.  QA: the event
    line '"add",3,4' was an unknown_op '"add"', and a quoted header '"op","src","dst"' made an event file an edge
    list (read as csv, not events)."""
    import csv
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / name).write_text(_csv_text(rows, delimiter, csv.QUOTE_NONE))
    (tmp_path / name).write_text(_csv_text(rows, delimiter, getattr(csv, quoting)))
    assert '"' in (tmp_path / name).read_text()
    plain = convert(tmp_path / "plain" / name, tmp_path / "plain.parquet")
    quoted = convert(tmp_path / name, tmp_path / "quoted.parquet")
    assert (quoted.format, quoted.rows, quoted.rejected, quoted.columns) == (
        plain.format, plain.rows, 0, plain.columns)
    assert quoted.format == ({",": "csv", "\t": "tsv"}[delimiter] if rows[0][0] == "source" else "events")
    assert pq.read_table(tmp_path / "quoted.parquet").equals(pq.read_table(tmp_path / "plain.parquet"))


def test_the_qa_event_lines_with_quotes(tmp_path):
    (tmp_path / "ev.csv").write_text('op,src,dst\nadd,1,2\n"add",3,4\n"add","5","6"\n')
    r = convert(tmp_path / "ev.csv", tmp_path / "ev.parquet")
    assert (r.format, r.rows, r.rejected) == ("events", 3, 0)
    assert _pairs(_read(tmp_path / "ev.parquet")) == [(1, 2), (3, 4), (5, 6)]
    (tmp_path / "ev2.csv").write_text('"op","src","dst"\n"add",3,4\n')
    r = convert(tmp_path / "ev2.csv", tmp_path / "ev2.parquet")
    assert (r.format, r.rows, r.rejected, r.columns) == ("events", 1, 0, ["op", "src", "dst"])
    # a doubled quote inside quotes is one quote, and a separator inside quotes is text: each line its own outcome
    (tmp_path / "ev3.csv").write_text('op,src,dst\n"add","1,5",2\n"add","x""y",3\nadd,"4",5\n')
    r = convert(tmp_path / "ev3.csv", tmp_path / "ev3.parquet")
    assert _pairs(_read(tmp_path / "ev3.parquet")) == [(4, 5)]
    assert r.dead.column("detail").to_pylist() == ["src '1,5' is not an integer", "src 'x\"y' is not an integer"]


def test_event_lines_in_any_separator_by_their_header_names(tmp_path):
    """Event lines were always split on commas: a tab- or blank-separated event file had every row rejected; a
    header's names were ignored (the fourth field of 'op,src,dst,ts' was read as a weight); and dead letters were
    numbered by non-blank lines, not the file's lines."""
    lines = ["add 1 2", "delete 1 2", "add_vertex 9"]
    for name, sep in (("e.tsv", "\t"), ("e.txt", " "), ("e.csv", ",")):
        (tmp_path / name).write_text("".join(line.replace(" ", sep) + "\n" for line in lines))
        r = convert(tmp_path / name, tmp_path / "o.parquet")
        t = pq.read_table(tmp_path / "o.parquet")
        assert (r.format, r.rejected, t.column("op").to_pylist()) == ("events", 0, [1, 2, 3]), name
    (tmp_path / "ts.csv").write_text("op,src,dst,ts\nadd,1,2,100\nadd_vertex,3\n")
    r = convert(tmp_path / "ts.csv", tmp_path / "o.parquet")
    t = pq.read_table(tmp_path / "o.parquet")
    assert r.columns == ["op", "src", "dst", "ts"] and t.column("weight").to_pylist() == [None, None]
    assert t.column("ts").cast(pa.int64()).to_pylist() == [100, None]          # the event format's milliseconds
    (tmp_path / "gaps.csv").write_text("op,src,dst\n\nadd,1,2\n# c\n\nadd,x,3\nadd,1,2,3,4,5\n")
    r = convert(tmp_path / "gaps.csv", tmp_path / "o.parquet")
    assert _dead(r) == [(6, "bad_id"), (7, "malformed")]
    assert r.dead.column("detail")[1].as_py() == "expected 2 to 3 fields (op,src,dst), found 6"


@pytest.mark.parametrize("fmt", ["csv", "tsv", "snap", "json", "mtx", "metis", "signed"])
def test_a_parquet_file_given_as_a_text_format_is_called_parquet(tmp_path, fmt):
    """QA: `convert snap.parquet x.parquet --format csv` printed "column '\ufffd' has no known meaning" (its bytes
    read as a CSV header): the message says the file is Parquet and how to read it."""
    pq.write_table(pa.table({"src": [1, 2], "dst": [2, 3]}), tmp_path / "snap.parquet")
    with pytest.raises(ConvertError, match=rf"^--format {fmt}: \S+snap\.parquet is a Parquet file, not {fmt} text: "
                                           r"convert reads it with --format parquet \(or auto\)$"):
        convert(tmp_path / "snap.parquet", tmp_path / "x.parquet", fmt=fmt)
    assert convert(tmp_path / "snap.parquet", tmp_path / "x.parquet", fmt="parquet").rows == 2


def test_the_dead_letters_never_overwrite_the_input(tmp_path):
    """The dead letters of OUT.parquet go to OUT.dead_letter.parquet: an input of that name was deleted (no rows
    rejected) or overwritten (some rejected)."""
    src = tmp_path / "z.dead_letter.parquet"
    pq.write_table(pa.table({"src": [1, 2], "dst": [2, 3]}), src)
    before = src.read_bytes()
    with pytest.raises(ConvertError, match=r"would go to .*z\.dead_letter\.parquet, which is the input"):
        convert(src, tmp_path / "z.parquet")
    assert src.read_bytes() == before and not (tmp_path / "z.parquet").exists()


def test_signed_format_and_empty_json_lines(tmp_path):
    """--format signed names itself when a file does not fit it (it said "--columns names 4 columns", though no
    --columns was given); a JSON lines file of blank lines is refused as having no rows, as an empty edge list is."""
    (tmp_path / "s.tsv").write_text("1\t2\t10\t5\n")
    with pytest.raises(ConvertError, match=r"--format signed \(SRC,DST,RATING,TIME, comma-separated\) names 4"):
        convert(tmp_path / "s.tsv", tmp_path / "s.parquet", fmt="signed")
    (tmp_path / "e.jsonl").write_text("\n# nothing\n\n")
    with pytest.raises(ConvertError, match=r"e\.jsonl: no rows to convert .*; nothing written"):
        convert(tmp_path / "e.jsonl", tmp_path / "e.parquet")
    assert not (tmp_path / "e.parquet").exists()


@pytest.mark.parametrize("name, text, columns", [
    ("k.jsonl", '{"a": 1, "b": 2}\n', "src,dst"),
    ("m.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n", "src,dst"),
    ("g.graph", "2 1\n2\n1\n", "src,dst"),
    ("e.csv", "op,src,dst\nadd,1,2\n", "op,src,dst"),
])
def test_columns_for_a_format_that_names_its_own_is_refused(tmp_path, name, text, columns):
    """--columns with JSON lines, Matrix Market, METIS or CSV event lines was taken and ignored: JSON keys a, b were
    refused for lacking a source and a target with --columns src,dst given."""
    f = tmp_path / name
    f.write_text(text)
    fmt = "events" if name == "e.csv" else "auto"
    with pytest.raises(ConvertError, match=rf"--columns {columns}: \w+ input names its own columns"):
        convert(f, tmp_path / "o.parquet", fmt=fmt, columns=columns)


def test_convert_of_a_metis_file_tests_it_for_binary_data_once(tmp_path, monkeypatch):
    """convert tested a METIS file's head for binary data, then read_metis tested the same bytes again: one test,
    before the file is read whole."""
    calls = []
    refuse = files._refuse_binary

    def counted(data, *args, **kwargs):
        calls.append(len(data))
        return refuse(data, *args, **kwargs)
    monkeypatch.setattr(files, "_refuse_binary", counted)
    g = tmp_path / "g.graph"
    g.write_text("% a comment\n3 2\n2\n1 3\n2\n")
    report = convert(g, tmp_path / "o.parquet")
    assert report.rows == 4 and len(calls) == 1
