"""Every everyday mistake of issue 10, run as a subprocess: one stderr line, no traceback, a nonzero exit.

Each case is what a new user typed; the expected text is the part of the one line that names the
flag, variable or file and what would be valid.  Cases that must fail before any work starts run
against the bundled sample (which would otherwise replay in seconds) or an unreachable broker (which
would otherwise hang).
"""
from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from vinestream.stream.bench import slabhash_road
from vinestream.stream.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
NO_BROKER = "127.0.0.1:1"
SAMPLE = str(ROOT / "connectors" / "data" / "collegemsg.parquet")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("mistakes")
    with gzip.open(d / "email.txt.gz", "wt") as fh:
        fh.write("1 2 10\n2 3 20\n")
    (d / "empty.parquet").write_bytes(b"")
    (d / "text.parquet").write_text("op,src,dst\nadd,1,2\n")
    pq.write_table(pa.table({"a": [1], "b": [2]}), d / "wrong.parquet")
    pq.write_table(pa.table({"src": [1], "dst": [2]}), d / "edges.parquet")
    pq.write_table(pa.table({"OP": pa.array([1], pa.int8()), "SRC": [1], "dst": [2], "Weight": [0.5]}),
                   d / "upper.parquet")
    (d / "afile").write_text("x")
    pq.write_table(pa.table({"op": pa.array([1], pa.int8()), "src": [1], "dst": [2]}), d / "events.parquet")
    (d / "events.parquet.gz").write_bytes(gzip.compress((d / "events.parquet").read_bytes()))
    pq.write_table(pa.table({"op": ["add", "delete"], "src": [1, 1], "dst": [2, 2]}), d / "names.parquet")
    (d / "worker.toml").write_text('topics = ["t"]\ncheckpoint_every = 50\n')
    (d / "e.csv").write_text("1,2\n3,4,0.5\n")
    (d / "comments.txt").write_text("# a graph\n\n% nothing but comments\n")
    (d / "logs").mkdir()
    pq.write_table(pa.table({"op": pa.array([1], pa.int8()), "src": [1], "dst": [2]}), d / "logs" / "a.parquet")
    pq.write_table(pa.table({"op": pa.array([1, 1], pa.int8()), "src": [1, 2], "dst": [2, 3],
                             "weight": pa.nulls(2, pa.float32()), "ts": pa.nulls(2, pa.timestamp("ms"))}),
                   d / "untimed.parquet")
    return d


def run(args, env_extra=None, cwd=ROOT):
    env = {**os.environ, **(env_extra or {})}
    env.pop("VINESTREAM_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "vinestream", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


CASES = [
    # (id, argv with {d} for the files dir, env, text the one line must contain)
    ("replay-log-twice", ["replay", "{d}/logs", "{d}/logs/a.parquet"], None,
     "replay log {d}/logs/a.parquet is given twice, itself or through its folder"),
    ("replay-gz", ["replay", "{d}/email.txt.gz"], None, "vinestream convert {d}/email.txt.gz"),
    # it was "gzip-compressed text" with a convert to try
    ("replay-parquet-gz", ["replay", "{d}/events.parquet.gz"], None,
     "replay log {d}/events.parquet.gz is a gzip-compressed Parquet file, which replay cannot read as it is: gunzip it "
     "first (`gunzip -k {d}/events.parquet.gz`) and give {d}/events.parquet"),
    ("replay-empty", ["replay", "{d}/empty.parquet"], None, "is empty (0 bytes)"),
    ("replay-not-parquet", ["replay", "{d}/text.parquet"], None,
     "is not a Parquet file, so not an event log: convert it first"),
    ("replay-wrong-columns", ["replay", "{d}/wrong.parquet"], None, "has columns a, b; an event log has op, src"),
    ("replay-edge-table", ["replay", "{d}/edges.parquet"], None, "is an edge table (columns src, dst)"),
    ("replay-upper-case-columns", ["replay", "{d}/upper.parquet"], None,
     "columns OP, SRC, Weight: an event log's columns are op, src, dst, weight, ts, in lower case"),
    ("replay-bfs-source-past-int64", ["replay", "--bfs-source", "99999999999999999999999"], None,
     "argument --bfs-source: expected int64 vertex ids (not 99999999999999999999999)"),
    ("run-bfs-source-past-int64", ["run", "--topic", "t", "--jobs", "bfs", "--bfs-source", str(2 ** 63), "--check"],
     None, f"--bfs-source: [{2 ** 63}] is not valid; expected int64 vertex ids"),
    ("replay-missing", ["replay", "{d}/nope.parquet"], None, "replay log {d}/nope.parquet: no such file"),
    ("batch-size-0", ["replay", "--batch-size", "0"], None, "argument --batch-size: expected an integer >= 1, got 0"),
    ("batch-size-neg", ["replay", "--batch-size", "-5"], None, "argument --batch-size: expected an integer >= 1"),
    ("speed-0", ["replay", "--speed", "0"], None, "argument --speed: expected a number > 0, got 0"),
    ("window-neg", ["replay", "--window", "-1"], None, "argument --window: expected a number > 0, got -1"),
    ("out-is-file", ["replay", "--out", "{d}/afile"], None, "--out {d}/afile: is a file, not a directory"),
    ("out-under-file", ["replay", "--out", "{d}/afile/sub"], None, "--out {d}/afile/sub: {d}/afile is a file"),
    ("metrics-port-neg", ["replay", "--metrics-port", "-1"], None, "argument --metrics-port: expected a TCP port"),
    ("metrics-port-big", ["replay", "--metrics-port", "99999"], None, "expected a TCP port 1..65535"),
    # the metrics endpoint's address is checked with its port (any free port included) before the run
    ("metrics-addr-not-here", ["replay", "--metrics-port", "0", "--metrics-addr", "10.255.255.1"], None,
     "--metrics-addr 10.255.255.1: cannot listen there"),
    ("metrics-addr-unknown", ["run", "--topic", "t", "--check", "--metrics-addr", "no-such-host.invalid"], None,
     "--metrics-addr no-such-host.invalid: not an address of this machine"),
    # flags on event time over a log without one did nothing (batches by size, no pacing, no edge expiring)
    ("window-without-times", ["replay", "{d}/untimed.parquet", "--window", "60"], None,
     "--window works on event time, and no event of the log(s) has a ts"),
    ("speed-ttl-without-times", ["replay", "{d}/untimed.parquet", "--speed", "2", "--edge-ttl", "60"], None,
     "--speed and --edge-ttl work on event time"),
    ("run-no-topic", ["run", "--bootstrap-servers", NO_BROKER], None, "no topic to consume: give --topic T"),
    # a topic Kafka cannot name, or a pattern that is no regex: refused before any connection (they were retried)
    ("run-topic-pattern-bad-regex", ["run", "--topic-pattern", "(", "--bootstrap-servers", NO_BROKER], None,
     "--topic-pattern: '(' is not valid; expected a regular expression"),
    ("produce-empty-topic", ["produce", SAMPLE, "--topic", "", "--bootstrap-servers", NO_BROKER], None,
     "--topic: '' is not valid; expected Kafka topic names"),
    ("run-results-topic-slash", ["run", "--topic", "t", "--results-topic", "x/y", "--bootstrap-servers", NO_BROKER],
     None, "--results-topic: 'x/y' is not valid; expected Kafka topic names"),
    ("run-format-xml", ["run", "--topic", "t", "--format", "xml"], None,
     "--format: unknown format 'xml'; choose one of json, csv, arrow"),
    ("env-backend", ["replay", "--jobs", "none"], {"VINESTREAM_BACKEND": "tpu"},
     "unknown backend 'tpu' (from $VINESTREAM_BACKEND): choose one of auto, cpu, gpu"),
    ("env-batch-size", ["run", "--topic", "t"], {"VINESTREAM_BATCH_SIZE": "abc"},
     "environment variable VINESTREAM_BATCH_SIZE='abc': expected an integer"),
    ("pushgateway", ["replay", "--pushgateway", "http://127.0.0.1:1"], None,
     "--pushgateway http://127.0.0.1:1: cannot connect"),
    ("bench-batch-0", ["bench", "--batch-sizes", "0"], None, "argument --batch-sizes: expected comma-separated"),
    ("bench-scale-40", ["bench", "--scales", "40"], None, "--scales 40: an R-MAT graph of scale 40"),
    ("bench-real-directory", ["bench", "--real", "{d}/logs"], None, "--real {d}/logs: a directory: give a file"),
    ("bench-real-missing", ["bench", "--real", "{d}/nope.txt"], None, "--real {d}/nope.txt: no such file"),
    # a SNAP temporal log needs convert's --columns, which bench has not: the message told the user to pass it
    ("bench-real-needs-columns", ["bench", "structures", "--backend", "cpu", "--real", "{d}/email.txt.gz"], None,
     "--real {d}/email.txt.gz: 3 fields per line and no header"),
    ("bench-real-needs-columns-how", ["bench", "structures", "--backend", "cpu", "--real", "{d}/email.txt.gz"], None,
     "bench takes no --columns: convert the file first (vinestream convert {d}/email.txt.gz OUT.parquet --columns"),
    ("bench-real-empty", ["bench", "algorithms", "--real", "{d}/comments.txt"], None,
     "--real {d}/comments.txt: no edges in it"),
    ("bench-bfs-incremental-cpu", ["bench", "bfs-incremental", "--backend", "cpu"], None,
     "bench bfs-incremental times the fused GPU repair"),
    ("bench-decode-cpu", ["bench", "decode", "--backend", "cpu"], None,
     "bench decode compares cuDF's decoder with pyarrow's and needs cuDF on a GPU"),
    # replay validates row by row; produce casts the log as it is, and failed inside the cast
    ("produce-op-names", ["produce", "{d}/names.parquet", "--topic", "t", "--bootstrap-servers", NO_BROKER], None,
     "produce log {d}/names.parquet: column op is string, not integer op codes: produce publishes typed event logs "
     "(replay reads this one); type it with `vinestream convert {d}/names.parquet {d}/names.events.parquet`"),
    ("produce-wrong-schema", ["produce", "{d}/wrong.parquet", "--topic", "t", "--bootstrap-servers", NO_BROKER],
     None, "produce log {d}/wrong.parquet has columns a, b"),
    ("convert-format-xml", ["convert", "{d}/e.csv", "{d}/o.parquet", "--format", "xml"], None,
     "argument --format: invalid choice: 'xml'"),
    ("convert-text-output", ["convert", "{d}/e.csv", "{d}/o.csv"], None,
     "output {d}/o.csv: convert writes an event Parquet log, not csv: name it {d}/o.parquet"),
    ("convert-empty-output", ["convert", "{d}/e.csv", ""], None, "the output is empty"),
    ("convert-third-column", ["convert", "{d}/email.txt.gz", "{d}/o.parquet"], None,
     "3 fields per line and no header: say what they are with --columns"),
    ("jobs-every-0", ["replay", "--jobs-every", "0"], None, "argument --jobs-every: expected an integer >= 1"),
    ("block-size-neg", ["replay", "--block-size", "-3"], None, "argument --block-size: expected an integer >= 1"),
    ("block-size-csr", ["replay", "--block-size", "4", "--structure", "csr"], None,
     "--block-size applies to --structure graphvine, not csr"),
    # past graphvine's max_block_size: an OverflowError (internal error) or, on a 2-event log, an OutOfMemory
    # advising a smaller --batch-size
    ("block-size-huge", ["replay", "--structure", "graphvine", "--block-size", "99999999999999999999"], None,
     "argument --block-size: expected an integer from 1 to 4096 (graphvine's max_block_size), "
     "got 99999999999999999999"),
    ("block-size-over", ["replay", "{d}/untimed.parquet", "--structure", "graphvine", "--block-size", "100000000"],
     None, "argument --block-size: expected an integer from 1 to 4096"),
    ("bfs-source-no-bfs", ["replay", "--jobs", "pagerank", "--bfs-source", "1"], None,
     "--bfs-source is given but bfs is not in --jobs"),
    ("bfs-source-absent", ["replay", "--jobs", "bfs", "--bfs-source", "999999999"], None,
     "--bfs-source 999999999: no such vertex in the log(s)"),
    ("run-batch-size-neg", ["run", "--topic", "t", "--bootstrap-servers", NO_BROKER, "--batch-size", "-1"], None,
     "--batch-size: -1 is not valid"),
    ("unknown-job-option", ["replay", "--jobs", "pagerank", "--job-option", "pagerank.bogus=1"], None,
     "--job-option pagerank.bogus=1: the pagerank job has no option 'bogus'; valid: pagerank.damping"),
    ("bad-job-option", ["replay", "--jobs", "pagerank", "--job-option", "pagerank.damping=0.5,pagerank.tol=-1"], None,
     "--job-option pagerank.tol=-1: the pagerank job's tol takes a number > 0 (L1 tolerance, default 1e-6), not '-1'"),
    ("job-option-part", ["replay", "--jobs", "pagerank", "--job-option", "pagerank.damping=0.5,nope"], None,
     "--job-option 'nope': expected JOB.OPTION=VALUE (e.g. pagerank.damping=0.9)"),
    ("unknown-job", ["replay", "--jobs", "pagerank,walks"], None, "unknown job 'walks'"),
    ("config-unknown-key", ["run", "--config", "{d}/worker.toml", "--check"], None,
     "unknown key(s) checkpoint_every (did you mean checkpoint_every_batches?)"),
    # extra consumer options: checked against kafka-python's own list and types, and never vinestream's own
    ("run-kafka-option-unknown", ["run", "--topic", "t", "--kafka-option", "fetch_max_wait=100", "--check"], None,
     "--kafka-option fetch_max_wait: not a kafka-python consumer option (did you mean fetch_max_wait_ms?)"),
    ("run-kafka-option-type", ["run", "--topic", "t", "--kafka-option", "request_timeout_ms=abc", "--check"], None,
     "--kafka-option request_timeout_ms='abc': expected an integer"),
    ("run-kafka-option-owned", ["run", "--topic", "t", "--kafka-option", "enable_auto_commit=true"], None,
     "--kafka-option enable_auto_commit: vinestream sets it"),
    ("run-log-level", ["run", "--topic", "t", "--log-level", "LOUD", "--check"], None,
     "--log-level: 'LOUD' is not valid"),
    ("config-missing", ["run", "--config", "{d}/missing.toml"], None, "--config {d}/missing.toml: No such file"),
    ("edge-ttl-0", ["replay", "--edge-ttl", "0"], None, "argument --edge-ttl: expected a number > 0"),
    # an empty path ("$OUT" unset) was no --out: the run wrote no results (but a _run.json into the working
    # directory), and report "" drew the working directory
    ("replay-out-empty", ["replay", "--out", ""], None, "argument --out: expected a path, got an empty one"),
    ("replay-checkpoint-dir-empty", ["replay", "--checkpoint-dir", ""], None,
     "argument --checkpoint-dir: expected a path, got an empty one"),
    ("report-empty", ["report", ""], None, "argument OUT: expected a path, got an empty one"),
    ("run-out-empty", ["run", "--topic", "t", "--out", "", "--check"], None,
     "--out: '' is not valid; expected a directory path (it is empty)"),
    ("run-checkpoint-dir-empty", ["run", "--topic", "t", "--checkpoint-dir", "", "--check"], None,
     "--checkpoint-dir: '' is not valid; expected a directory path"),
    # they bound the job outputs under --out: without it they were taken and did nothing
    ("replay-keep-epochs-no-out", ["replay", "--keep-epochs", "3"], None, "--keep-epochs needs --out DIR"),
    ("replay-output-every-no-out", ["replay", "--output-every", "5"], None, "--output-every needs --out DIR"),
    ("run-keep-epochs-no-out", ["run", "--topic", "t", "--keep-epochs", "3", "--check"], None,
     "--keep-epochs needs --out DIR"),
    ("run-output-every-no-out", ["run", "--topic", "t", "--check"], {"VINESTREAM_OUTPUT_EVERY": "4"},
     "VINESTREAM_OUTPUT_EVERY needs --out DIR"),
    ("report-not-dir", ["report", "{d}/afile"], None, "is not a directory"),
    # --json is written when the run ends: a path that cannot be written fails before the run, not after it
    ("bench-json-under-file", ["bench", "--json", "{d}/afile/sub/r.json"], None,
     "--json {d}/afile/sub/r.json: {d}/afile is a file, not a directory"),
    ("bench-json-dir", ["bench", "structures", "--json", "{d}"], None, "--json {d}: is a directory"),
    # the permission bits allow it (as root, or on /proc): the write failed after the bench had run
    ("bench-json-proc", ["bench", "structures", "--json", "/proc/vinestream-x.json"], None,
     "--json /proc/vinestream-x.json: not writable ("),
    ("replay-json-under-file", ["replay", "--json", "{d}/afile/r.json"], None,
     "--json {d}/afile/r.json: {d}/afile is a file, not a directory"),
]


@pytest.mark.parametrize("argv, env, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_mistake_is_one_line_and_a_nonzero_exit(files, argv, env, expected):
    proc = run([a.format(d=files) for a in argv], env)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    assert lines[0].startswith("vinestream: error: ")
    assert expected.format(d=files) in lines[0]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_out_fails_before_the_run(files):
    ro = files / "ro"
    ro.mkdir(exist_ok=True)
    ro.chmod(0o555)
    proc = run(["replay", "--out", str(ro / "out")])
    assert proc.returncode == 2 and "is not writable" in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_a_write_that_fails_mid_run_is_one_line(tmp_path):
    """The results directory breaks after the run started (here a file where a job's folder goes, as a disk
    that goes read-only or a directory deleted under the run would): one line, not a logged line before it."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "triangles").write_text("not a folder")
    proc = run(["replay", SAMPLE, "--out", str(out), "--jobs", "triangles", "--no-progress"])
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("vinestream: error: "), proc.stderr
    assert "triangles/epoch=1" in lines[0]


def test_a_reader_that_goes_away_is_not_a_traceback():
    """`vinestream replay | head`: the pipe closes before the summary table is printed."""
    proc = subprocess.Popen([sys.executable, "-m", "vinestream", "replay", "--jobs", "none", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    proc.stdout.close()                                    # like `head` exiting early
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert code == 141



@pytest.fixture(scope="module")
def without_kafka(tmp_path_factory):
    """An environment where kafka-python's import fails, as in a broken install: a shadowing package."""
    d = tmp_path_factory.mktemp("no-kafka")
    (d / "kafka").mkdir()
    (d / "kafka" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'kafka'\", name='kafka')\n")
    return {"PYTHONPATH": os.pathsep.join([str(d), os.environ.get("PYTHONPATH", "")])}


def test_a_missing_dependency_is_one_line_naming_the_package(without_kafka):
    proc = run(["run", "--topic", "t", "--bootstrap-servers", NO_BROKER], without_kafka)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "kafka-python" in lines[0] and "internal error" not in lines[0]


def test_the_benches_that_need_no_kafka_run_without_it(without_kafka):
    """Only `bench kafka` and `bench decode` need kafka-python: the runner imports them when asked."""
    env = {**os.environ, **without_kafka}
    code = "import vinestream.stream.bench.runner; import vinestream.stream.app.replay"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("extra", [[], ["--partitions", "2"]], ids=["existing-topic", "create-topic"])
def test_produce_to_brokers_that_never_answer_ends_in_one_line(extra):
    """A one-shot command: `produce` gives up on unreachable brokers after --delivery-timeout-s (it retried for
    ever), where the worker waits for them."""
    proc = run(["produce", SAMPLE, "--topic", "t", "--bootstrap-servers", NO_BROKER, "--delivery-timeout-s", "2",
                *extra])
    lines = [ln for ln in proc.stderr.strip().splitlines() if "retrying" not in ln]
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"vinestream: error: cannot produce to {NO_BROKER}: KafkaTimeoutError: Unable to ")


@pytest.fixture(scope="module")
def without_peers(tmp_path_factory):
    """An install without the `peers` extra: scipy and networkit fail to import (shadowing packages)."""
    d = tmp_path_factory.mktemp("no-peers")
    for name in ("scipy", "networkit"):
        (d / name).mkdir()
        (d / name / "__init__.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{name}'\", name='{name}')\n")
    return {"PYTHONPATH": os.pathsep.join([str(d), os.environ.get("PYTHONPATH", "")])}


def test_bench_algorithms_runs_without_the_peers(without_peers):
    """The peers are an optional extra: without SciPy the library SpMV reference is left out (it ended in
    "internal error: ModuleNotFoundError: No module named 'scipy'") and each job says that no peer is installed."""
    proc = run(["bench", "algorithms", "--scales", "8", "--backend", "cpu"], without_peers)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "no library SpMV: SciPy is not installed" in proc.stdout
    assert proc.stdout.count("no peer installed (pip install 'vinestream[peers]'") == 3


@pytest.mark.parametrize("bench, scale, expected", [
    ("bfs-fused", "--scales", "on the CPU this bench compares with SciPy's sparse matrices; SciPy is not installed: "
                              "pip install"),
    # its graphs' size is --paper-scale (--scales, which it does not read, is refused)
    ("paper-graphvine", "--paper-scale", "bench paper-graphvine builds the paper's Delaunay graphs with SciPy; SciPy "
                                         "is not installed"),
])
def test_benches_that_need_scipy_say_so_without_it(without_peers, bench, scale, expected):
    """They ended in "internal error: ModuleNotFoundError" on an install without the peers extra."""
    proc = run(["bench", bench, scale, "8", "--backend", "cpu"], without_peers)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and expected in lines[0], proc.stderr


def test_bench_slabhash_road_without_the_shared_data(monkeypatch):
    """The road graph comes from the shared data folder; where it is missing the bench says so in one UsageError
    (it ended in "no such file or directory: None")."""
    monkeypatch.setattr(slabhash_road, "shared_data_file", lambda relative: None)
    with pytest.raises(UsageError, match=r"bench slabhash-road reads static/luxembourg_osm\.mtx\.gz from the shared"):
        slabhash_road.bench_slabhash_road(np)


def test_block_size_at_its_bound_replays_and_help_says_what_graphvine_does(files):
    """--block-size takes graphvine's whole range (up to its max_block_size), and --help names that range and what
    happens without the flag: graphvine's size classes (block_sizing='degree'), not "the paper's rule"."""
    from vinestream.structures.registry import create, get
    proc = run(["replay", f"{files}/untimed.parquet", "--structure", "graphvine", "--block-size", "4096",
                "--jobs", "pagerank", "--no-progress"])
    assert proc.returncode == 0, proc.stderr
    spec = get("graphvine").options_spec
    top, sizing = spec["max_block_size"].default, spec["block_sizing"].default
    help_text = " ".join(run(["replay", "--help"]).stdout.split())
    assert f"one fixed edge block size for every vertex, 1 to {top} (graphvine's max_block_size)" in help_text
    assert f"powers of two from 2 to {top}" in help_text and f"block_sizing='{sizing}'" in help_text
    assert "paper" not in help_text
    g = create("graphvine")                         # what the help describes is what the default builds
    assert g.sizing == sizing and g.class_sizes == [2 ** k for k in range(1, top.bit_length())]
    assert g.target_blocks == 4                     # "about a quarter of its degree"
