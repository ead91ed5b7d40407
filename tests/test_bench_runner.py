"""`vinestream bench` as a user runs it: its mistakes refused before any benchmark runs, its JSON self-describing."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def bench(*args, timeout=120):
    env = {k: v for k, v in os.environ.items() if k != "VINESTREAM_DEBUG"}
    return subprocess.run([sys.executable, "-m", "vinestream", "bench", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=timeout)


def one_line(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("vinestream: error: ") and "internal error" not in lines[0], lines[0]
    return lines[0]


def test_an_unknown_benchmark_is_refused_before_the_others_run():
    """`bench structures bogus` ran the structures bench (here about a minute) and only then named 'bogus'."""
    line = one_line(bench("structures", "bogus", "--scales", "19", "--backend", "cpu", timeout=20))
    assert "unknown benchmark 'bogus'" in line


def test_a_gpu_only_benchmark_is_refused_before_the_others_run():
    line = one_line(bench("structures", "bfs-incremental", "--scales", "19", "--backend", "cpu", timeout=20))
    assert "bench bfs-incremental times the fused GPU repair" in line


@pytest.mark.parametrize("argv, expected", [
    # the default scales were not checked: NumPy's allocation failed ("out of memory ... --batch-size")
    (["--edge-factor", "1000000000000"], "--edge-factor 1000000000000: an R-MAT graph of scale 16"),
    # no scale fitting was "max() arg is an empty sequence"
    (["--edge-factor", "1000000000000", "--scales", "8"], "--scales 8: an R-MAT graph of scale 8"),
    (["bfs", "--edge-factor", "2000000000", "--scales", "8"], "no scale fits at this edge factor"),
])
def test_a_graph_too_large_is_one_line_before_allocating(argv, expected):
    line = one_line(bench(*argv, "--backend", "cpu", timeout=30))
    assert expected in line and "needs about" in line


def test_the_json_names_the_machine_the_versions_and_the_parameters(tmp_path):
    """A published figure needs what it was measured on: the JSON had the backend, "x86_64" as the processor and
    the CPU count, but no CPU model, no library versions, no vinestream commit and none of the arguments."""
    import json

    import numpy as np
    out = tmp_path / "r.json"
    proc = bench("bfs", "sorted", "--scales", "8", "--edge-factor", "4", "--backend", "cpu", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert {"bfs", "sorted", "machine", "versions", "parameters"} <= set(result)
    machine = result["machine"]
    assert machine["cpu_model"] and machine["cpus"] >= 1 and "gpu" in machine
    v = result["versions"]
    assert v["numpy"] == np.__version__ and v["vinestream"] and "cupy" in v and "networkit" in v
    p = result["parameters"]
    assert p["what"] == ["bfs", "sorted"] and p["scales"] == [8] and p["edge_factor"] == 4 and p["backend"] == "cpu"
    assert p["defaults"]["bfs_scales"]


def test_ctrl_c_in_a_networkit_run_is_an_interrupt():
    """NetworKit's own SIGINT handler made Ctrl-C during a peer's run a RuntimeError, which bench reported as
    "internal error: RuntimeError: Received CTRL+C/SIGINT (a bug ...)"."""
    import signal
    import threading

    import numpy as np

    from vinestream.stream.bench import peers as pe
    from vinestream.stream.bench.algorithms import rmat_edges
    pytest.importorskip("networkit")
    s, d = rmat_edges(np, 14, 16)
    g = pe.nk_graph(s, d, 1 << 14)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in range(200):                     # ~0.2 s each, nearly all of it inside NetworKit
                pe.nk_pagerank(g, tol=1e-300)
    finally:
        timer.cancel()


def test_ctrl_c_in_the_middle_is_one_line_and_exit_130():
    import signal
    import time
    env = {k: v for k, v in os.environ.items() if k != "VINESTREAM_DEBUG"}
    # a graph that takes well over the 4 s on any machine (scale 12 finished within them on a 16-core host)
    proc = subprocess.Popen([sys.executable, "-m", "vinestream", "bench", "algorithms", "--scales", "17",
                             "--backend", "cpu"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    # -SIGINT: an interrupt inside a dataclass's creation (CPython 3.11's exec of a string) ends the process by SIGINT
    # after the command's one line and exit 130 (test_startup_signals): a shell's $? is 130 either way
    assert proc.returncode in (130, -signal.SIGINT), err
    assert err.strip().splitlines() == ["vinestream: interrupted"], err


def test_the_json_is_strict_json():
    """A figure of inf (a rate over a time below the clock's resolution) or NaN (a Kafka consume that got
    nothing) was written as Infinity / NaN, which no strict JSON reader accepts."""
    import json

    from vinestream.stream.bench.runner import json_safe
    result = {"structures": {"rows": [{"scan_edges_per_s": float("inf"), "seconds": 0.5}]},
              "kafka": {"formats": {"json": {"seconds": float("nan"), "events": 0}}}, "what": ("a", 1)}
    text = json.dumps(json_safe(result), allow_nan=False)
    assert json.loads(text) == {"structures": {"rows": [{"scan_edges_per_s": None, "seconds": 0.5}]},
                                "kafka": {"formats": {"json": {"seconds": None, "events": 0}}}, "what": ["a", 1]}


def test_a_bench_writes_strict_json(tmp_path):
    import json
    out = tmp_path / "r.json"
    tiny = tmp_path / "tiny.txt"                  # in place of the default real graph (cnr-2000: half a minute)
    tiny.write_text("".join(f"{i} {(i * 7 + 1) % 64}\n" for i in range(64)))
    proc = bench("structures", "--scales", "8", "--batch-sizes", "10,100", "--backend", "cpu", "--real", str(tiny),
                 "--json", str(out))
    assert proc.returncode == 0, proc.stderr

    def refuse(name):
        raise AssertionError(f"{name} in the JSON")
    assert json.loads(out.read_text(), parse_constant=refuse)["structures"]["graphs"]


def test_a_real_graph_of_self_loops_is_refused_before_the_rmat_graphs_run(tmp_path):
    """The self-loop check was in the graph's loading, after the R-MAT graphs before it had been benchmarked."""
    loops = tmp_path / "loops.txt"
    loops.write_text("1 1\n2 2\n3 3\n")
    line = one_line(bench("algorithms", "--scales", "19", "--backend", "cpu", "--real", str(loops), timeout=20))
    assert f"--real {loops}: every edge is a self-loop" in line


def test_bench_pipeline_runs_every_batch_size_and_says_which(tmp_path):
    """`bench pipeline --batch-sizes 10,100` ran batches of 10 only, and its table did not name the size."""
    import json
    out = tmp_path / "r.json"
    proc = bench("pipeline", "--scales", "8", "--batch-sizes", "10,100", "--structures", "coo", "--backend", "cpu",
                 "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert [r["batch"] for r in json.loads(out.read_text())["pipeline"]] == [10, 100]
    assert "batch of 10 events" in proc.stdout and "batch of 100 events" in proc.stdout


def test_a_bench_named_twice_runs_once(tmp_path):
    """`bench bfs bfs` printed two tables, of which the JSON kept only the second's figures."""
    proc = bench("bfs", "bfs", "--scales", "8", "--backend", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("BFS (cpu) on rmat8") == 1, proc.stdout


def test_bench_kafka_says_when_not_every_event_arrived(kafka_bootstrap, tmp_path):
    """consume() stopped at its deadline without a word: the table gave the rates of the events that came as the
    throughput of all of them ("1,000,000 events per format")."""
    import pyarrow.parquet as pq

    from vinestream.connectors.kafka import produce
    from vinestream.stream.bench.kafka import consume, synthetic_log
    from vinestream.stream.bench.runner import _kafka_table
    log = tmp_path / "log.parquet"
    pq.write_table(synthetic_log(500), log)
    produce([str(log)], "bench-short", kafka_bootstrap, fmt="json")
    got = consume(kafka_bootstrap, "bench-short", "json", 800, timeout_s=8)
    assert got["events"] == 500 and got["expected"] == 800 and got["complete"] is False
    got["produce_events_per_second"] = 1.0
    table = _kafka_table({"events": 800, "crc32c": True, "formats": {"json": got}})
    assert "json: 500 of 800 events decoded, 0 dead letters, the rest not received in time: INCOMPLETE" in table


@pytest.mark.parametrize("argv, expected", [
    (["algorithms", "--structures", "coo"], "--structures: bench algorithms does not use it (it is for benches "
                                            "structures, pipeline, resolve-ahead, kafka or paper-graphvine)"),
    (["slabhash-road", "--batch-sizes", "10"], "--batch-sizes: bench slabhash-road does not use it (it is for "
                                               "benches structures, pipeline, resolve-ahead or paper-graphvine)"),
    (["bfs", "sorted", "--paper-scale", "3"], "--paper-scale: benches bfs and sorted do not use it (it is for bench "
                                              "paper-graphvine)"),
    (["kafka", "--edge-factor", "4"], "--edge-factor: bench kafka does not use it"),
    (["decode", "--real", "g.txt"], "--real: bench decode does not use it (it is for benches structures, "
                                    "algorithms or sorted)"),
    # benches that take one value of a flag left the others out as silently
    (["kafka", "--structures", "coo,graphvine"], "--structures coo,graphvine: bench kafka takes one (the first, coo; "
                                                 "the rest would be left out): give one"),
    (["structures", "sorted", "--real", "a.txt,b.txt"], "--real a.txt,b.txt: benches structures and sorted take one"),
])
def test_a_flag_the_chosen_benches_do_not_use_is_refused(argv, expected, capsys):
    """`bench algorithms --structures coo` and `bench slabhash-road --batch-sizes 10` ran their benches and took the
    flag without a word: the user believed the figures were for what they had asked."""
    from vinestream.stream.app.cli import main
    assert main(["bench", *argv, "--backend", "cpu"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"vinestream: error: {expected}"), err


def test_a_flag_one_chosen_bench_uses_is_taken(tmp_path):
    """Benches share the flags: one of them reading it is enough (here --structures, for pipeline, not bfs)."""
    proc = bench("bfs", "pipeline", "--scales", "6", "--batch-sizes", "10", "--structures", "coo", "--backend", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert "pipeline batch of 10 events" in proc.stdout and "BFS (cpu) on rmat6" in proc.stdout


def test_bench_flags_are_the_flags_each_bench_reads(monkeypatch):
    """BENCH_FLAGS, which the refusal above reads, says what run_bench's branches read: each bench is run with every
    flag given (the benches themselves stubbed) and the flags it read are compared with its entry."""
    import argparse
    import importlib

    from vinestream.stream.bench import runner
    modules = [runner.bs, runner.ba, runner.resolve_ahead, runner.bfs_fused, runner.bfs_incremental,
               runner.slabhash_road, runner.graphvine_paper, runner.sorted_adjacency,
               importlib.import_module("vinestream.stream.bench.decode"),
               importlib.import_module("vinestream.stream.bench.kafka")]
    row = {"structures": {}, "batch": 1, "backend": "cpu", "graph": "g"}
    for module in modules:
        for name in dir(module):
            if name.startswith(("bench_", "format_")) or name in ("default_graphs", "diffcsr_crossover"):
                monkeypatch.setattr(module, name, (lambda *a, **k: "") if name.startswith("format_")
                                    else (lambda *a, **k: [dict(row)]) if name == "default_graphs"
                                    else (lambda *a, **k: dict(row)))
    monkeypatch.setattr(runner, "check_bench", lambda args, *a, **k: None)
    monkeypatch.setattr(runner, "versions", lambda: {})
    monkeypatch.setattr(runner, "_kafka_table", lambda result: "")

    class Tracked(argparse.Namespace):
        def __getattribute__(self, name):
            if not name.startswith("_"):
                object.__getattribute__(self, "__dict__").setdefault("_read", set()).add(name)
            return object.__getattribute__(self, name)

    flags = {f for spec in runner.BENCH_FLAGS.values() for f in spec}
    for what in runner.BENCHES:
        args = Tracked(what=[what], backend="cpu", json=None, structures=["coo"], batch_sizes=[10], scales=[4],
                       edge_factor=2, real="g.txt", paper_scale=3, bootstrap_servers="127.0.0.1:1")
        runner.run_bench(args)
        read = {f for f in flags if f[2:].replace("-", "_") in vars(args)["_read"]}
        assert read == set(runner.BENCH_FLAGS[what]), what


def test_bench_reads_each_real_graph_once(tmp_path, monkeypatch, capsys):
    """`bench --real` read each graph in its up-front check, again in run_bench's own check, and again in each bench
    that took it (sorted twice): seconds per read on cnr-2000.  The check's host arrays are what the benches use."""
    from vinestream.connectors import files
    from vinestream.stream.app.cli import main
    graph = tmp_path / "g.txt"
    graph.write_text("".join(f"{i} {(i * 7 + 1) % 64}\n" for i in range(64)))
    reads = []
    convert = files.convert

    def counted(path, *args, **kwargs):
        reads.append(str(path))
        return convert(path, *args, **kwargs)
    monkeypatch.setattr(files, "convert", counted)
    out = tmp_path / "r.json"
    assert main(["bench", "sorted", "structures", "algorithms", "--scales", "4", "--batch-sizes", "10",
                 "--backend", "cpu", "--real", str(graph), "--json", str(out)]) == 0, capsys.readouterr().err
    assert reads == [str(graph)]
    import json
    result = json.loads(out.read_text())
    # each bench benchmarked the real graph (and the JSON holds its spec, not the arrays read)
    assert [g["name"] for g in result["sorted"]["graphs"]][-1] == "g"
    assert [g["spec"] for g in result["structures"]["graphs"]][-1] == {"kind": "file", "path": str(graph)}
    assert [g["graph"] for g in result["algorithms"]["graphs"]][-1] == "g"
