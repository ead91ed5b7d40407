"""`vinestream report`: one self-contained HTML page with inlined plots, from the output directory alone."""
from __future__ import annotations

import base64
import re
import shutil

import pytest

from vinestream.stream.app.cli import main

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "out"
    assert main(["replay", "--structure", "coo", "--out", str(out), "--no-progress"]) == 0   # all three jobs
    return out


def test_the_page_is_self_contained_and_has_every_plot(out, tmp_path, capsys):
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)                  # the directory alone: nothing else is read
    page_path = tmp_path / "r.html"
    assert main(["report", str(moved), "--html", str(page_path)]) == 0
    page = page_path.read_text()
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 7                      # throughput, size, phases, memory, pagerank, bfs, triangles
    assert all(base64.b64decode(b64)[:8] == b"\x89PNG\r\n\x1a\n" for b64 in images)
    for title in ("Throughput", "Graph size", "Latency by phase", "Memory", "Top PageRank vertices", "BFS depths",
                  "Triangles"):
        assert f"<b>{title}</b>" in page
    assert not re.search(r'(src|href)="(http|//|file:)', page)   # no external resource
    assert "14,319" in page                      # CollegeMsg's triangles (SNAP), from summary.parquet
    assert "59,835" in page


def test_a_directory_without_run_info_is_titled_by_its_name(out, tmp_path, capsys):
    """_run.json is what wrote the directory; one without it (written before it existed) was titled
    "vinestream run:  on "."""
    moved = tmp_path / "old-run"
    shutil.copytree(out, moved)
    (moved / "_run.json").unlink()
    assert main(["report", str(moved)]) == 0
    page = (moved / "report.html").read_text()
    assert "<h1>vinestream results: old-run</h1>" in page and " on </h1>" not in page


def test_report_errors_are_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert "empty is not a results directory" in err and err.count("\n") == 1
    from vinestream.connectors.parquet import ParquetResultsSink
    ParquetResultsSink(tmp_path / "opened").close()         # a results directory whose summary has no row
    assert main(["report", str(tmp_path / "opened")]) == 2
    err = capsys.readouterr().err
    assert "holds no summary.parquet rows" in err and err.count("\n") == 1


def test_a_run_that_applied_nothing_is_reported_as_such(tmp_path, capsys):
    """Every row of the log refused (an op code that does not exist): the run succeeds with its dead letters,
    and the report says that the run applied nothing and why, in one line, not that the directory is wrong."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    log = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"op": pa.array([0, 0, 9], pa.int8()), "src": pa.array([1, 2, 3], pa.int64()),
                             "dst": pa.array([2, 3, 1], pa.int64())}), log)
    out = tmp_path / "out"
    assert main(["replay", str(log), "--jobs", "pagerank", "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the run applied no event; all 3 went to dead_letter.parquet" in err
    assert "unknown_op x3" in err


def test_a_run_that_read_nothing_is_reported_as_such(tmp_path, capsys):
    """An empty log replays (no batch); the report says the replay read no event from it, not that the directory
    is no run's --out."""
    import pyarrow.parquet as pq

    from vinestream.stream.events.schema import EVENT_SCHEMA
    log = tmp_path / "empty.parquet"
    pq.write_table(EVENT_SCHEMA.empty_table(), log)
    out = tmp_path / "out"
    assert main(["replay", str(log), "--jobs", "pagerank", "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"the replay read no event from {log}: nothing to report" in err


def test_a_replay_from_python_is_reported_with_its_settings(tmp_path, capsys):
    """`vinestream.replay(out=...)`, the README's Results example, wrote no _run.json (only the command line did):
    its report was titled "vinestream run:  on " and listed no settings."""
    import json

    import vinestream
    out = tmp_path / "out"
    vinestream.replay(structure="coo", backend="cpu", jobs=["pagerank", "triangles"], out=str(out))
    info = json.loads((out / "_run.json").read_text())
    assert (info["command"], info["structure"], info["backend"], info["jobs"]) == (
        "replay", "coo", "cpu", ["pagerank", "triangles"])
    assert "run" in vinestream.read_results(str(out))
    assert main(["report", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "<h1>vinestream replay: coo on cpu</h1>" in page and "<h2>Run</h2>" in page
