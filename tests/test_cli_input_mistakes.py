"""Mistakes a QA pass found in the command line, its config file and the Python API (branch fix-cli2), each run
through the real command line (a subprocess: one stderr line ``vinestream: error: ...``, a nonzero exit, no
traceback) or the public Python API."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(args, cwd=ROOT, timeout=120):
    env = {k: v for k, v in os.environ.items() if k != "VINESTREAM_DEBUG" and not k.startswith("VINESTREAM_")}
    return subprocess.run([sys.executable, "-m", "vinestream", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


def one_line(proc, code=2) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code, proc.stderr[:2000]
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr[:2000]
    assert lines[0].startswith("vinestream: error: "), proc.stderr[:2000]
    return lines[0]


def test_a_huge_value_is_quoted_as_an_excerpt_in_the_error_line_and_the_dead_letter(tmp_path):
    """`convert` of an edge list whose only row has a 10 MB id printed a 10 MB error line: the dead letter's detail
    quoted the whole value (its payload was cut at 1,000 characters).  Both quote an excerpt and say the length."""
    huge = "1" * 2_000_000
    (tmp_path / "one.csv").write_text(f"src,dst\n{huge},3\n")
    line = one_line(run(["convert", tmp_path / "one.csv", tmp_path / "one.parquet"]))
    assert len(line) < 400, len(line)
    assert "every one of 1 rows was rejected" in line and "(2,000,000 characters) is outside int64" in line
    (tmp_path / "two.csv").write_text(f"src,dst\n1,2\n4,{huge}\n")
    proc = run(["convert", tmp_path / "two.csv", tmp_path / "two.parquet"])
    assert proc.returncode == 0 and len(proc.stderr) < 400, proc.stderr[:1000]
    dead = pq.read_table(tmp_path / "two.dead_letter.parquet").to_pylist()
    assert [d["reason"] for d in dead] == ["id_out_of_range"]
    assert dead[0]["detail"] == f"dst {huge[:100]!r}... (2,000,000 characters) is outside int64"
    assert len(dead[0]["payload"]) == 1000


def test_dead_letter_details_of_any_producer_are_bounded():
    """The details a decoder or reader writes itself are cut as the payload is (at 1,000 characters)."""
    from vinestream.stream.events.validate import dead_letters
    table = dead_letters(source="s", partition=None, positions=[0], reasons=["malformed"], details=["x" * 5000],
                         payloads=["y" * 5000])
    assert len(table.column("detail")[0].as_py()) == 1000 and len(table.column("payload")[0].as_py()) == 1000


def test_a_log_with_two_columns_of_one_name_is_refused_naming_the_file_and_the_column(tmp_path):
    """A Parquet log with two columns ``src`` gave "unreadable input: Can't unify schema with duplicate field names."
    (pyarrow's dataset), naming neither the file nor the column."""
    log = tmp_path / "dup.parquet"
    pq.write_table(pa.table([pa.array([1, 1]), pa.array([1, 2]), pa.array([2, 3])], names=["op", "src", "src"]), log)
    line = one_line(run(["replay", log, "--jobs", "none", "--no-progress"]))
    assert line.endswith(f"replay log {log}: the column src appears twice; an event log names each column once "
                         "(rename or drop the copy)"), line
    line = one_line(run(["produce", log, "--topic", "t", "--bootstrap-servers", "127.0.0.1:1"]))
    assert f"produce log {log}: the column src appears twice" in line


def test_a_config_file_with_a_utf8_byte_order_mark_is_read(tmp_path):
    """A TOML config that an editor on Windows saved with a byte-order mark was refused as "not valid TOML (Invalid
    statement (at line 1, column 1))"."""
    config = tmp_path / "worker.toml"
    config.write_bytes(b'\xef\xbb\xbftopics = ["edges"]\nbatch_size = 7\n')
    proc = run(["run", "--config", config, "--check"])
    assert proc.returncode == 0, proc.stderr
    assert f'topics = ["edges"]   # topics in {config}' in proc.stdout
    assert f"batch_size = 7   # batch_size in {config}" in proc.stdout


@pytest.mark.parametrize("line, expected", [
    ("edge_ttl = inf", "edge_ttl in {config}: inf is not valid; expected a number > 0"),
    ("edge_ttl = nan", "edge_ttl in {config}: nan is not valid; expected a number > 0"),
    ("out = 5", "out in {config}: 5 is not text"),
    ('topics = [1, 2]', "topics in {config}: [1, 2] is not comma-separated values, each text"),
    ("group = 5", "group in {config}: 5 is not text"),
    ('undirected = "yes"', "undirected in {config}: 'yes' is not true or false"),
    ("batch_size = 1e3", "batch_size in {config}: 1000.0 is not an integer"),
    ('edge_ttl = "60"', "edge_ttl in {config}: '60' is not a number"),
    (f'group = "{"g" * 5000}"', None),
])
def test_every_key_of_the_config_file_is_checked_for_its_type(tmp_path, line, expected):
    """``edge_ttl = inf`` was refused later without the file's name (``nan`` named it), ``out = 5`` ran with the
    directory "5" and ``topics = [1, 2]`` with topics "1" and "2": a key's value is of the key's type, or one line
    naming the file, the key and what was expected, as the flag's own message does."""
    config = tmp_path / "worker.toml"
    config.write_text(("" if line.startswith("topics") else 'topics = ["edges"]\n') + line + "\n")
    proc = run(["run", "--config", config, "--check"])
    if expected is None:                 # a value of the right type is taken, however long
        assert proc.returncode == 0, proc.stderr
        return
    assert one_line(proc).endswith(expected.format(config=config))


def test_a_long_bad_config_value_is_quoted_as_an_excerpt(tmp_path):
    config = tmp_path / "worker.toml"
    config.write_text(f'topics = ["edges"]\nauto_offset_reset = "{"x" * 100_000}"\n')
    line = one_line(run(["run", "--config", config, "--check"]))
    assert len(line) < 400 and "(100,000 characters) is not valid; expected one of earliest, latest" in line, line


@pytest.mark.parametrize("name, text", [("empty.csv", ""), ("header.csv", "src,dst\n"), ("comments.txt", "# x\n\n"),
                                        ("none.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 0\n")])
def test_an_input_with_no_rows_is_an_error_as_one_whose_every_row_is_rejected(tmp_path, name, text):
    """An empty file, or a CSV with only a header, converted to a 0-event log with exit 0, while a file whose every
    row is rejected is an error: both are one line and exit 2, and write nothing (an earlier output stays)."""
    (tmp_path / name).write_text(text)
    out = tmp_path / "out.parquet"
    out.write_bytes(b"earlier")
    line = one_line(run(["convert", tmp_path / name, out]))
    assert line.endswith(f"{tmp_path / name}: no rows to convert (the file holds no edge or event, only a header, "
                         "comments or nothing); nothing written"), line
    assert out.read_bytes() == b"earlier"
    assert "no rows, or whose every row is rejected, is an error" in " ".join(run(["convert", "--help"]).stdout.split())


def test_a_fifo_where_a_file_is_read_is_refused_before_it_is_opened(tmp_path):
    """`replay FIFO` said the FIFO "is empty (0 bytes)", and `run --config FIFO` blocked in open() until a writer
    came, past SIGTERM (only SIGKILL ended it): a FIFO, socket or device is refused in one line, never opened."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    line = one_line(run(["replay", fifo, "--jobs", "none", "--no-progress"], timeout=60))
    assert line.endswith(f"replay log {fifo}: is a FIFO (named pipe), not a regular file: an event log is a Parquet "
                         "file"), line
    line = one_line(run(["produce", fifo, "--topic", "t", "--bootstrap-servers", "127.0.0.1:1"], timeout=60))
    assert f"produce log {fifo}: is a FIFO (named pipe), not a regular file" in line
    for extra in (["--check"], []):
        line = one_line(run(["run", "--config", fifo, "--topic", "t", *extra], timeout=60))
        assert line.endswith(f"--config {fifo}: is a FIFO (named pipe), not a regular file: give the TOML file "
                             "itself"), line
    line = one_line(run(["replay", "/dev/null", "--jobs", "none", "--no-progress"], timeout=60))
    assert "replay log /dev/null: is a character device, not a regular file" in line


def test_bench_real_and_convert_refuse_a_fifo_as_replay_does(tmp_path):
    """`bench --real FIFO` said "no such file" (and `convert FIFO` "not a file"): both say what it is, in the words
    replay uses, before they open it (a FIFO blocks an open until a writer comes)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    line = one_line(run(["bench", "algorithms", "--real", fifo, "--scales", "4", "--backend", "cpu"], timeout=60))
    assert line.endswith(f"--real {fifo}: is a FIFO (named pipe), not a regular file: give an edge list or event "
                         "log file"), line
    line = one_line(run(["convert", fifo, tmp_path / "out.parquet"], timeout=60))
    assert line.endswith(f"{fifo}: is a FIFO (named pipe), not a regular file: convert reads a graph file"), line
    line = one_line(run(["convert", tmp_path, tmp_path / "out.parquet"], timeout=60))
    assert line.endswith(f"{tmp_path}: a directory: give a file (an edge list or event log in it)"), line


@pytest.mark.parametrize("argument, expected", [
    ({"batch_size": "x"}, "batch_size='x': expected an integer >= 1"),
    ({"batch_size": 2.5}, "batch_size=2.5: expected an integer >= 1"),
    ({"speed": "x"}, "speed='x': expected a number > 0"),
    ({"speed": float("inf")}, "speed=inf: expected a number > 0"),
    ({"window": "x"}, "window='x': expected a number of seconds from 0.000001 to 86400000000000"),
    ({"window": 1e300}, "window=1e+300: expected a number of seconds from 0.000001 to 86400000000000"),
    ({"checkpoint_every_batches": -1}, "checkpoint_every_batches=-1: expected an integer >= 0"),
    ({"checkpoint_every_seconds": "60"}, "checkpoint_every_seconds='60': expected a number >= 0"),
    ({"keep_epochs": 0, "out": "OUT"}, "keep_epochs=0: expected an integer >= 1"),
    ({"output_every": 0, "out": "OUT"}, "output_every=0: expected an integer >= 1"),
    ({"decoder": "gpu"}, "decoder='gpu': expected one of auto, pyarrow, cudf"),
    ({"progress": "yes"}, "progress='yes': expected True or False"),
    ({"paths": 5}, "paths=5: expected an event Parquet file or directory, or a list of them"),
])
def test_the_python_replay_checks_its_arguments_up_front(tmp_path, argument, expected):
    """``vinestream.replay(batch_size="x")`` and ``speed="x"`` raised TypeErrors from a comparison deep inside, and
    ``checkpoint_every_batches=-1`` was taken: each is a ValueError naming the argument, with the flags' checks,
    before anything is opened or created."""
    import vinestream
    out = tmp_path / "out"
    argument = {k: (str(out) if v == "OUT" else v) for k, v in argument.items()}
    with pytest.raises(ValueError) as caught:
        vinestream.replay(jobs=[], **argument)
    assert str(caught.value) == expected
    assert not out.exists()


def test_read_results_names_a_bad_argument(tmp_path):
    import vinestream
    with pytest.raises(TypeError, match=r"^out_dir=5: expected a results directory \(a str or os.PathLike path\)$"):
        vinestream.read_results(5)
    with pytest.raises(ValueError, match=r"^epoch=-1: expected an epoch number >= 0"):
        vinestream.read_results(tmp_path, epoch=-1)


_COUNT_LOG_CHECKS = """
import collections, sys
seen = collections.Counter()
NAMES = ("check_event_log", "has_event_times", "first_source")
def count(frame, event, arg):
    if event == "call" and frame.f_code.co_name in NAMES and frame.f_code.co_filename.endswith("preflight.py"):
        seen[frame.f_code.co_name] += 1
sys.setprofile(count)
if sys.argv[1] == "cli":
    from vinestream.stream.app.cli import main
    code = main(sys.argv[2:])
else:
    import vinestream
    vinestream.replay([sys.argv[2]], jobs=["pagerank", "bfs"], window=86400, backend="cpu")
    code = 0
sys.setprofile(None)
print("checks", *(seen[n] for n in NAMES), code, file=sys.stderr)
"""


def test_a_command_line_replay_checks_its_logs_once(tmp_path):
    """check_event_logs and check_event_times ran in the command line and again in replay() for the same logs (on a
    large log the time check scans its ts column: twice the time before the first batch).  Counted by the calls into
    preflight (a profile hook, in a process of its own): once each per command-line replay, and replay() called
    directly still checks everything (and finds the BFS source itself)."""
    from vinestream.connectors.sample import sample_log_path
    log = str(sample_log_path())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cli = subprocess.run([sys.executable, "-c", _COUNT_LOG_CHECKS, "cli", "replay", log, "--jobs", "pagerank,bfs",
                          "--window", "86400", "--no-progress", "--backend", "cpu"],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert cli.stderr.splitlines()[-1] == "checks 1 1 1 0", cli.stderr
    api = subprocess.run([sys.executable, "-c", _COUNT_LOG_CHECKS, "api", log], capture_output=True, text=True,
                         env=env, timeout=300, cwd=tmp_path)
    assert api.stderr.splitlines()[-1] == "checks 1 1 1 0", api.stderr


@pytest.mark.parametrize("argv, flag", [
    (["convert", "{bad}.parquet", "{d}/x.parquet"], "argument input"),
    (["convert", "{d}/ev.parquet", "{bad}.parquet"], "argument output"),
    (["replay", "{bad}.parquet", "--jobs", "none", "--no-progress"], "argument LOG"),
    (["replay", "{d}/ev.parquet", "--jobs", "none", "--no-progress", "--out", "{bad}"], "argument --out"),
    (["replay", "{d}/ev.parquet", "--jobs", "none", "--no-progress", "--checkpoint-dir", "{bad}"],
     "argument --checkpoint-dir"),
    (["replay", "{d}/logs", "--jobs", "none", "--no-progress"], "replay log directory {d}/logs holds"),
    (["produce", "{bad}.parquet", "--topic", "t", "--bootstrap-servers", "localhost:9"], "produce log"),
])
def test_a_file_name_that_is_not_utf8_is_named_in_one_line(tmp_path, argv, flag):
    """A file name of bytes that are no UTF-8 (Python holds them as lone surrogates) failed inside pyarrow with
    "'utf-8' codec can't encode character '\\udcff' in position 3: surrogates not allowed", naming neither the file
    nor the flag: the flag and the name (its bytes escaped) are said, and what to do."""
    d = tmp_path
    bad = os.path.join(os.fsdecode(bytes(d)), os.fsdecode(b"bad\xffname"))
    try:
        pq.write_table(pa.table({"op": [1], "src": [1], "dst": [2]}), d / "ev.parquet")
        (d / "logs").mkdir()
        for target in (bad + ".parquet", os.path.join(str(d / "logs"), os.fsdecode(b"b\xff.parquet"))):
            with open(target, "wb") as fh:
                fh.write((d / "ev.parquet").read_bytes())
    except (OSError, UnicodeError):
        pytest.skip("this file system takes only UTF-8 names")
    line = one_line(run([a.format(d=d, bad=bad) for a in argv]))
    flag = flag.format(d=d)
    shown = f"{d}/logs/b\\xff.parquet" if "directory" in flag else f"{d}/bad\\xffname"
    assert f"{flag}" in line and f"{shown}" in line and "surrogates" not in line, line
    assert "the name is not valid UTF-8 (its non-UTF-8 bytes shown as \\xNN)" in line, line
