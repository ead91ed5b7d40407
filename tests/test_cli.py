"""The `vinestream` command line: the bundled-sample replay end to end, convert, and one-line errors."""
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.backends import HAS_GPU
from tests.event_logs import oracle_of
from vinestream.connectors.sample import sample_log_path
from vinestream.stream.app.cli import main


def test_replay_of_the_bundled_sample_matches_the_oracle(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["replay", "--out", str(out), "--batch-size", "7000", "--structure", "coo",
                 "--jobs", "triangles,bfs", "--bfs-source", "1", "--no-progress"]) == 0
    table = capsys.readouterr().out
    oracle = oracle_of(pq.read_table(sample_log_path()))
    summary = pq.read_table(out / "summary.parquet").to_pylist()
    last = summary[-1]
    assert last["vertices"] == len(oracle.vertices) and last["edges"] == len(oracle.edges)
    assert sum(row["events"] for row in summary) == 59_835
    assert len(summary) == -(-59_835 // 7000)
    assert f"{len(oracle.edges)}" in table.replace(",", "")
    assert (out / "triangles" / f"epoch={last['epoch']}" / "part-0.parquet").exists()
    bfs = pq.read_table(out / "bfs" / f"epoch={last['epoch']}" / "part-0.parquet")
    assert last["bfs_reached"] == sum(d >= 0 for d in bfs.column("distance").to_pylist())


@pytest.mark.skipif(HAS_GPU, reason="checks the error on a machine without a GPU")
def test_asking_for_a_gpu_without_one_is_a_one_line_error(capsys):
    assert main(["replay", "--backend", "gpu", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("vinestream: error: backend 'gpu'") and "\n" not in err


@pytest.mark.parametrize("argv, message", [
    (["replay", "--jobs", "pagerank", "--bfs-source", "1", "--no-progress"], "bfs is not in --jobs"),
    (["replay", "--jobs", "pagerank,walks", "--no-progress"], "unknown job 'walks'"),
    (["replay", "/nonexistent/log.parquet", "--no-progress"], "error"),
    (["bench", "nothing"], "unknown benchmark"),
])
def test_bad_arguments_are_one_line_errors(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and err.count("\n") == 0


def test_convert_then_replay(tmp_path, capsys):
    edges = tmp_path / "tiny.txt"
    edges.write_text("# a comment\n1 2 100\n2 3 50\n1 2 200\n3 1 300\n")
    log = tmp_path / "tiny.parquet"
    assert main(["convert", str(edges), str(log)]) == 2            # a third column must be declared
    assert "--columns" in capsys.readouterr().err
    assert main(["convert", str(edges), str(log), "--columns", "src,dst,ts"]) == 0
    printed = capsys.readouterr().out
    assert "columns src, dst, ts" in printed and "ts read as seconds" in printed and "1 rows moved" not in printed
    table = pq.read_table(log)
    assert table.column("ts").to_pylist() == sorted(table.column("ts").to_pylist())   # sorted by time
    assert main(["replay", str(log), "--no-progress", "--out", str(tmp_path / "o")]) == 0
    last = pq.read_table(tmp_path / "o" / "summary.parquet").to_pylist()[-1]
    assert (last["vertices"], last["edges"]) == (3, 3)


def test_convert_no_sort_prints_no_false_claim(tmp_path, capsys):
    """QA: `convert nt.txt nt.parquet --columns src,dst,ts --no-sort` printed "...; already in time order" for a log
    whose second row is 200 s before its first."""
    (tmp_path / "nt.txt").write_text("1 2 300\n2 3 100\n")
    assert main(["convert", str(tmp_path / "nt.txt"), str(tmp_path / "nt.parquet"), "--columns", "src,dst,ts",
                 "--no-sort"]) == 0
    printed = capsys.readouterr().out
    assert "already in time order" not in printed
    assert "not sorted by ts (--no-sort): 1 row out of time order" in printed


def test_json_summary_goes_into_a_folder_made_for_it(tmp_path, capsys):
    """--json names a file whose folders may not exist yet: they are made, as `convert` and `report --html` make
    theirs, and the file holds the run's summary."""
    import json
    path = tmp_path / "runs" / "first" / "summary.json"
    assert main(["replay", "--jobs", "none", "--no-progress", "--json", str(path)]) == 0
    capsys.readouterr()
    summary = json.loads(path.read_text())
    assert summary["events"] == 59_835                  # the bundled sample's events


@pytest.mark.parametrize("first", [
    {"op": 9, "src": 50, "dst": 51},          # a dead letter (no such op)
    {"op": 1, "src": 60, "dst": None},         # a dead letter (an edge without dst)
    {"op": 2, "src": 70, "dst": 71},           # a delete: no vertex of the graph
    {"op": 1, "src": 80, "dst": 80},           # a self-loop, dropped
])
def test_the_default_bfs_source_is_a_vertex_of_the_graph(tmp_path, capsys, first):
    """The default BFS source is the src of the first event that puts its vertex in the graph. It was the first
    row's src whatever the row: a dead letter, a delete or a dropped self-loop gave a source outside the graph,
    and every distance -1 without a word."""
    import json

    import pyarrow as pa
    rows = [first, {"op": 1, "src": 1, "dst": 2}, {"op": 1, "src": 2, "dst": 3}]
    log = tmp_path / "log.parquet"
    pq.write_table(pa.table({"op": pa.array([r["op"] for r in rows], pa.int8()), "src": [r["src"] for r in rows],
                             "dst": pa.array([r["dst"] for r in rows], pa.int64())}), log)
    out = tmp_path / "out"
    assert main(["replay", str(log), "--jobs", "bfs", "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    info = json.loads((out / "_run.json").read_text())
    assert info["bfs_sources"] == [1] and info["keep_self_loops"] is False and info["structure_options"] == {}
    assert pq.read_table(out / "summary.parquet").to_pylist()[-1]["bfs_reached"] == 3


def test_a_bfs_source_beside_a_bad_id_is_found(tmp_path, capsys):
    """--bfs-source looks the id up in the log as the replay reads ids: a text id column holding one row that is no
    id (a dead letter) failed the check's cast of the whole column, and every source in the log was refused."""
    import pyarrow as pa
    log = tmp_path / "log.parquet"
    pq.write_table(pa.table({"op": ["add", "add", "3"], "src": ["7", "abc", "9"], "dst": ["8", "1", None]}), log)
    out = tmp_path / "out"
    assert main(["replay", str(log), "--jobs", "bfs", "--bfs-source", "9", "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert {r["vertex"]: r["distance"] for r in pq.read_table(out / "bfs").to_pylist()} == {7: -1, 8: -1, 9: 0}
    assert pq.read_table(out / "dead_letter.parquet").column("reason").to_pylist() == ["bad_id"]


def test_resume_of_a_run_killed_before_its_first_checkpoint_starts_over(tmp_path, capsys):
    """`--resume` with a --checkpoint-dir that holds no checkpoint yet (the run died before its first one) starts
    over and rewrites the epochs, as prepare_out_dir says; the command line refused it, telling the user to pass
    --resume with the run's --checkpoint-dir, which they had."""
    out, ck = tmp_path / "out", tmp_path / "ck"
    assert main(["replay", "--jobs", "none", "--batch-size", "20000", "--out", str(out), "--no-progress"]) == 0
    whole = pq.read_table(out / "summary.parquet").select(["epoch", "events", "edges"])
    ck.mkdir()
    assert main(["replay", "--jobs", "none", "--batch-size", "20000", "--out", str(out), "--checkpoint-dir", str(ck),
                 "--resume", "--no-progress"]) == 0
    capsys.readouterr()
    assert pq.read_table(out / "summary.parquet").select(["epoch", "events", "edges"]).equals(whole)


_COUNT_OUT_PREPARES = """
import os, sys
out = os.path.realpath(sys.argv[1])
seen = {"probe": 0, "cleared": 0}

def hook(event, args):
    # what preparing --out does to the directory: a write probe, and (--overwrite) _run.json removed
    if event == "open" and isinstance(args[0], str) and os.path.basename(args[0]).startswith(".vinestream-write-test"):
        seen["probe"] += os.path.realpath(os.path.dirname(args[0])) == out
    if event == "os.remove" and os.path.realpath(str(args[0])) == os.path.join(out, "_run.json"):
        seen["cleared"] += 1
sys.addaudithook(hook)
from vinestream.stream.app.cli import main
code = main(sys.argv[2:])
print("prepares", seen["probe"], seen["cleared"], code, file=sys.stderr)
"""


def test_a_command_line_replay_prepares_its_out_dir_once(tmp_path):
    """The command line prepared --out (write probe, --overwrite's clearing, the locks) and then replay() did it all
    again for the same directory.  Counted by what it does to the directory (seen through Python's audit hooks,
    in a process of its own): one write probe and one clearing per run; the Python API still prepares its own."""
    root = Path(__file__).resolve().parent.parent
    out = tmp_path / "out"
    args = [sys.executable, "-c", _COUNT_OUT_PREPARES, str(out), "replay", "--out", str(out), "--jobs", "none",
            "--no-progress", "--backend", "cpu", "--checkpoint-dir", str(tmp_path / "ck")]
    env = {**os.environ, "PYTHONPATH": str(root)}
    first = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    again = subprocess.run([*args, "--overwrite"], capture_output=True, text=True, env=env, timeout=300)
    assert first.stderr.splitlines()[-1] == "prepares 1 0 0", first.stderr
    assert again.stderr.splitlines()[-1] == "prepares 1 1 0", again.stderr
    assert pq.read_table(out / "summary.parquet").num_rows == 12 and (out / "_run.json").is_file()
