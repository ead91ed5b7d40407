"""Everyday mistakes found by the QA pass of branch qa-cli, each run as a subprocess of the real command line:
one stderr line ``vinestream: error: ...``, a nonzero exit, no traceback (what tests/test_cli_errors.py checks for
the mistakes found before)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
NO_BROKER = "127.0.0.1:1"


def run(args, cwd=ROOT, env_extra=None, timeout=120):
    env = {**os.environ, **(env_extra or {})}
    env.pop("VINESTREAM_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "vinestream", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


def one_line(proc, code=2) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    assert lines[0].startswith("vinestream: error: "), proc.stderr
    return lines[0]


def test_an_empty_log_path_is_refused_not_the_working_directory(tmp_path):
    """`replay ""` ("$LOG" unset) replayed the working directory (Path("") is "."); `produce ""` published nothing
    and went on to the brokers."""
    line = one_line(run(["replay", "", "--no-progress"], cwd=tmp_path))
    assert "replay log '': an empty path" in line
    line = one_line(run(["produce", "", "--topic", "t", "--bootstrap-servers", NO_BROKER], cwd=tmp_path))
    assert "produce: no log to publish (LOG is empty)" in line


def test_a_window_past_what_a_timedelta_holds_is_one_line():
    """--window 1e300 ended in "internal error: OverflowError" and --window 1e-300 in "window must be positive",
    which named no flag: both are the flag's range now."""
    for value in ("1e300", "1e-300"):
        line = one_line(run(["replay", "--window", value, "--jobs", "none", "--no-progress"]))
        assert f"argument --window: expected a number of seconds from 0.000001 to 86400000000000, got {value}" in line


def test_a_very_slow_speed_waits_instead_of_overflowing():
    """--speed 1e-300 asks for a wait of ~1e300 s before the second batch: threading's wait raised OverflowError
    (an internal error).  The wait now lasts until the replay is stopped (``wake``, what SIGTERM calls)."""
    import threading

    from vinestream.connectors.parquet import ReplaySource
    from vinestream.connectors.sample import sample_log_path
    source = ReplaySource([str(sample_log_path())], batch_size=20_000, speed=1e-300)
    threading.Timer(0.5, source.wake).start()
    batches = list(source)
    assert sum(b.events.num_rows + b.dead.num_rows for b in batches) == 59_835


def test_ctrl_c_during_a_replay_is_one_line_and_a_resumable_stop(tmp_path):
    """SIGINT drained and checkpointed the replay, then exited 0 with no word: a script took the replay for
    complete.  It says where it stopped in one line and exits 130; --resume then reads the rest."""
    import signal
    import time

    import pyarrow.parquet as pq
    out, ck = tmp_path / "out", tmp_path / "ck"
    args = ["replay", "--out", out, "--checkpoint-dir", ck, "--batch-size", "200", "--jobs", "none", "--no-progress"]
    proc = subprocess.Popen([sys.executable, "-m", "vinestream", *map(str, args), "--speed", "1e6"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 60
    # a summary part is written once a batch is done (the folder itself comes earlier: on a GPU, whose start-up is
    # longer, the signal then came before the first batch and the stop was at 0 events)
    while not list((out / "summary.parquet").glob("part-*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    lines = err.strip().splitlines()
    assert proc.returncode == 130 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("vinestream: replay stopped by SIGINT after ") and "rerun it with --resume" in lines[0]
    stopped_at = int(lines[0].split(" after ")[1].split(" events")[0].replace(",", ""))
    assert 0 < stopped_at < 59_835
    resumed = run([*args, "--resume"])
    assert resumed.returncode == 0, resumed.stderr
    assert sum(pq.read_table(out / "summary.parquet").column("events").to_pylist()) == 59_835


def test_a_write_that_does_not_fit_names_the_file_and_leaves_no_partial_file(tmp_path):
    """A full disk (here a file size limit, RLIMIT_FSIZE, as `ulimit -f` sets: EFBIG where a full disk gives ENOSPC)
    was "no space left on device writing the output": pyarrow's OSError names no file.  The one line names the
    file, and the partial temporary file is removed."""
    import resource
    out = tmp_path / "out"

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
    env = {**os.environ}
    env.pop("VINESTREAM_DEBUG", None)
    # on the CPU: a GPU run also writes CuPy's kernel cache under the limit (its error names no file)
    proc = subprocess.run([sys.executable, "-m", "vinestream", "replay", "--out", str(out), "--jobs", "pagerank",
                           "--batch-size", "20000", "--no-progress", "--backend", "cpu"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, preexec_fn=small_files)
    line = one_line(proc)
    # which output passes 8 KiB first (a job's output or the summary's part) depends on the columns written:
    # the line names one of them, a Parquet file under OUT
    named = line.split("File too large: ", 1)[1] if "File too large: " in line else ""
    assert named.startswith(f"{out}/") and named.endswith(".parquet"), line
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_report_html_under_a_file_is_named(tmp_path):
    """`report OUT --html afile/x.html` drew the page, then failed in one line "File exists: afile"."""
    out, afile = tmp_path / "out", tmp_path / "afile"
    assert run(["replay", "--out", out, "--jobs", "none", "--batch-size", "30000", "--no-progress"]).returncode == 0
    afile.write_text("x")
    line = one_line(run(["report", out, "--html", afile / "x.html"]))
    assert f"--html {afile}/x.html: {afile} is a file, not a directory" in line


def test_a_log_without_a_vertex_still_replays_its_dead_letters_with_the_default_jobs(tmp_path):
    """A log none of whose events adds a vertex (every row invalid, or deletes only): the default replay (bfs among
    its jobs) refused with "the log has no events" and wrote no dead letter, so a log of bad rows could not be
    reported at all (QA).  The default jobs now run without bfs, saying so in one warning, and every row is a dead
    letter; `--jobs bfs` asked for bfs: one line that says what is missing, exit 2."""
    log = tmp_path / "allbad.parquet"
    pq.write_table(pa.table({"op": pa.array([9, 2], pa.int8()), "src": pa.array([1, 2], pa.int64()),
                             "dst": pa.array([2, 3], pa.int64())}), log)
    got = run(["replay", str(log), "--out", str(tmp_path / "out"), "--no-progress"])
    assert got.returncode == 0, got.stderr
    assert got.stderr.strip().splitlines() == [
        "vinestream: warning: bfs not run: no event of the log adds a vertex to start from (a valid add_edge that "
        "is not a dropped self-loop, or an add_vertex); give --bfs-source to run it"]
    dead = pq.read_table(tmp_path / "out" / "dead_letter.parquet")
    assert dead.column("position").to_pylist() == [0]          # the unknown op; the delete of an absent edge applies
    assert not (tmp_path / "out" / "bfs").exists() and (tmp_path / "out" / "pagerank").exists()
    line = one_line(run(["replay", str(log), "--out", str(tmp_path / "out2"), "--no-progress", "--jobs", "bfs"]))
    assert "the bfs job needs a source vertex and no event of the log adds one" in line


def test_a_flag_the_command_lacks_points_to_the_command_s_help(tmp_path):
    """`vinestream replay --nope` pointed to `vinestream --help`, which lists the commands, not replay's flags."""
    assert one_line(run(["replay", "--nope"])).endswith(
        "unrecognized arguments: --nope (see `vinestream replay --help`)")
    assert one_line(run(["convert", "a.txt", "b.parquet", "--nope", "x"])).endswith(
        "unrecognized arguments: --nope x (see `vinestream convert --help`)")


def test_an_empty_job_list_is_refused(tmp_path):
    """`--jobs ""` (a `--jobs "$JOBS"` with the variable unset) ran no job without a word; `--jobs none` says so."""
    line = one_line(run(["replay", "--jobs", "", "--out", str(tmp_path / "out")]))
    assert "argument --jobs: no job named; choose from pagerank, bfs, triangles, or none for no job" in line
    assert not (tmp_path / "out").exists()
