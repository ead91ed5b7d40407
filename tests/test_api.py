"""The public Python API: ``import vinestream`` builds pipelines, applies Arrow batches, reads results back."""
from __future__ import annotations

import datetime as dt
import doctest
import importlib
import json
import re
from pathlib import Path

import networkx as nx
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import vinestream
from tests.oracle import Oracle

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.mark.parametrize("module", ["vinestream", "vinestream.stream.pipeline.pipeline",
                                    "vinestream.stream.events.validate", "vinestream.stream.app.replay"])
def test_docstring_examples_run(module):
    failed, tried = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failed == 0


def test_readme_python_example_runs(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README.md has no Python example"
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_public_names_are_documented():
    for name in vinestream.__all__:
        obj = getattr(vinestream, name)
        if callable(obj) and not isinstance(obj, type(vinestream.Op.ADD_EDGE)):
            assert (obj.__doc__ or "").strip(), f"vinestream.{name} has no docstring"


@pytest.mark.parametrize("structure", ["csr", "coo", "graphvine"])
def test_pipeline_reads_back_what_the_oracle_has(structure):
    rng = np.random.default_rng(7)
    pipeline = vinestream.build_pipeline(structure=structure, backend="cpu", jobs=["pagerank", "triangles"])
    oracle = Oracle()
    for _ in range(5):
        n = 300
        op = rng.choice(["add", "add", "add", "delete", "delete_vertex"], size=n)
        src = rng.integers(0, 60, n)
        dst = [None if o == "delete_vertex" else int(d) for o, d in zip(op, rng.integers(0, 60, n))]
        batch = vinestream.events(op=list(op), src=src.tolist(), dst=dst)
        pipeline.apply(batch)
        oracle.apply_all([(int(o), int(s), None if d is None else int(d), None)
                          for o, s, d in zip(batch.column("op").to_pylist(), src, dst)])
    edges = pipeline.edges()
    assert edges.schema.names == ["src", "dst", "weight"] and edges.schema.field("src").type == pa.int64()
    assert set(zip(edges.column("src").to_pylist(), edges.column("dst").to_pylist())) == set(oracle.edges)
    assert set(pipeline.vertices().column("vertex").to_pylist()) == oracle.vertices
    results = pipeline.results()
    g = nx.Graph(list(set(oracle.edges)))
    g.add_nodes_from(oracle.vertices)
    got = dict(zip(results["triangles"].column("vertex").to_pylist(),
                   results["triangles"].column("triangles").to_pylist()))
    assert got == nx.triangles(g)
    assert abs(sum(results["pagerank"].column("rank").to_pylist()) - 1.0) < 1e-6


def test_events_rejects_a_bad_row_with_its_reason():
    with pytest.raises(ValueError, match="row 1"):
        vinestream.events(op=["add", "frobnicate"], src=[1, 2], dst=[2, 3])


@pytest.mark.parametrize("batch, match", [
    ({"op": ["add"], "src": [1], "dst": [2]}, "pyarrow.Table, not dict"),
    (pa.table({}), "op .missing."),
    (pa.table({"op": ["add"], "src": ["1"], "dst": ["2"]}), r"op \(string, expected int8\), src \(string"),
    # the right types, rows that validation never leaves
    (pa.Table.from_pylist([{"op": 1, "src": 1, "dst": 2}, {"op": 1, "src": 5, "dst": None}],
                          schema=vinestream.EVENT_SCHEMA), "row 1 has an edge op with a null dst"),
    (pa.Table.from_pylist([{"op": 1, "src": 1, "dst": 2, "weight": float("nan")}], schema=vinestream.EVENT_SCHEMA),
     "row 0 has an edge weight that is not finite"),
    (pa.Table.from_pylist([{"op": 9, "src": 1, "dst": 2}], schema=vinestream.EVENT_SCHEMA),
     r"row 0 has an op that is no event op \(1-4\)"),
])
def test_apply_refuses_what_is_no_event_batch_before_the_epoch(batch, match):
    pipeline = vinestream.build_pipeline(structure="coo", backend="cpu", jobs=["pagerank"])
    with pytest.raises(vinestream.UsageError, match=match) as caught:
        pipeline.apply(batch)
    assert "vinestream.validate" in str(caught.value)
    assert pipeline.epoch == 0                                   # nothing counted
    # the same rows through vinestream.validate apply
    events, dead = vinestream.validate(pa.table({"op": ["add"], "src": ["1"], "dst": ["2"]}), source="t")
    assert dead.num_rows == 0 and pipeline.apply(events).counts["inserted"] == 1 and pipeline.epoch == 1


def test_build_pipeline_takes_the_command_line_forms_of_jobs_and_sources():
    pipeline = vinestream.build_pipeline(backend="cpu", jobs="pagerank, bfs,pagerank", bfs_sources=1)
    assert [job.name for job in pipeline.jobs] == ["pagerank", "bfs"]
    pipeline.apply(vinestream.events(op=["add", "add"], src=[1, 2], dst=[2, 3]))
    assert dict(zip(*pipeline.results()["bfs"].select(["vertex", "distance"]).to_pydict().values())) == {
        1: 0, 2: 1, 3: 2}


@pytest.mark.parametrize("arguments, match", [
    ({"jobs": ["pagerank"], "job_options": {"pagerank": {"damping": 2}}}, r"pagerank.damping=2: expected a number "
                                                                         "strictly between 0 and 1"),
    ({"jobs": ["pagerank"], "job_options": {"pagerank": {"dampng": 0.5}}}, "pagerank.dampng=0.5: expected one of "
                                                                           "pagerank.damping"),
    ({"jobs": ["pagerank"], "job_options": {"pagerank": {"weighted": True}}}, "unweighted PageRank"),
    ({"jobs": ["pagerank"], "job_options": {"pagerank": {"max_iter": 2.5}}}, "max_iter=2.5: expected an integer"),
    ({"jobs": ["pagerank"], "job_options": {"pagerank": {"tol": "small"}}}, "tol='small': expected a number > 0"),
    ({"jobs": ["pagerank"], "job_options": {"triangles": {}}}, "the triangles job is not in jobs"),
    ({"jobs": ["pagerank"], "jobs_every": 0}, "jobs_every=0: expected an integer >= 1"),
    ({"jobs": ["pagerank"], "jobs_every": -1}, "jobs_every=-1"),
    ({"jobs": ["pagerank"], "jobs_every": 2.5}, "jobs_every=2.5"),
    ({"jobs": ["bfs"], "bfs_sources": "12"}, "bfs_sources='12': expected a list of vertex ids"),
    ({"jobs": ["bfs"], "bfs_sources": [1.7]}, "bfs_sources: 1.7 is no vertex id"),
    ({"jobs": ["bfs"], "bfs_sources": [2 ** 70]}, f"bfs_sources: {2 ** 70} is no vertex id"),
    ({"jobs": ["bfs"], "bfs_sources": [True]}, "bfs_sources: True is no vertex id"),
    ({"undirected": "yes"}, "undirected='yes': expected True or False"),
    ({"edge_ttl": 0}, "edge_ttl=0: expected a number of seconds > 0"),
])
def test_build_pipeline_refuses_what_the_command_line_refuses(arguments, match):
    """build_pipeline (and replay, before its input opens) checks its arguments as the command line checks its
    flags: a damping of 2 ran to ranks of -1, a mistyped option, a weighted run it cannot do, jobs_every 0, a
    string of sources read digit by digit and a fractional source cut to an int were all taken in silence."""
    with pytest.raises(vinestream.UsageError, match=match):
        vinestream.build_pipeline(backend="cpu", **arguments)
    with pytest.raises(vinestream.UsageError, match=match):
        vinestream.replay(backend="cpu", **arguments)


def test_build_pipeline_refuses_the_small_batch_kernels_without_a_gpu():
    """small_batch_kernels=True on the CPU built a pipeline whose first apply ended in a RuntimeError from the
    kernel launcher: they are CUDA kernels, so the build refuses them in one error (None, the default, and False
    build)."""
    with pytest.raises(vinestream.UsageError, match=r"small_batch_kernels=True needs the GPU backend"):
        vinestream.build_pipeline(backend="cpu", small_batch_kernels=True)
    with pytest.raises(vinestream.UsageError, match=r"small_batch_kernels='yes': expected True, False or None"):
        vinestream.build_pipeline(backend="cpu", small_batch_kernels="yes")
    for value in (None, False):
        pipeline = vinestream.build_pipeline(backend="cpu", small_batch_kernels=value)
        pipeline.apply(vinestream.events(op=["add"], src=[1], dst=[2]))
        assert pipeline.edges().num_rows == 1


def test_replay_api_takes_one_log_as_a_string(tmp_path):
    """One log may be given as a string or a path (it was read as a list of its characters: "no such file l")."""
    log = tmp_path / "log.parquet"
    pq.write_table(vinestream.events(op=["add", "add"], src=[1, 2], dst=[2, 3]), log)
    for given in (str(log), log):
        report, pipeline = vinestream.replay(given, backend="cpu")
        assert report.events == 2 and pipeline.edges().num_rows == 2


def test_replay_api_refuses_what_the_command_line_refuses(tmp_path):
    text = tmp_path / "edges.txt"
    text.write_text("1 2\n")
    with pytest.raises(vinestream.UsageError, match="not a Parquet file, so not an event log"):
        vinestream.replay([str(text)], backend="cpu")
    untimed = tmp_path / "untimed.parquet"
    pq.write_table(vinestream.events(op=["add"], src=[1], dst=[2]), untimed)
    with pytest.raises(vinestream.UsageError, match="window works on event time"):
        vinestream.replay([str(untimed)], backend="cpu", window=60)


def test_replay_api_takes_a_window_in_seconds():
    by_seconds, _ = vinestream.replay(backend="cpu", window=30 * 86400)
    by_delta, _ = vinestream.replay(backend="cpu", window=dt.timedelta(days=30))
    assert by_seconds.batches == by_delta.batches > 1 and by_seconds.events == by_delta.events


@pytest.mark.parametrize("epoch", ["first", "3", 2.0, True])
def test_read_results_refuses_an_epoch_it_cannot_select(tmp_path, epoch):
    """read_results' epoch is a number, "last" or None: another value ended in pyarrow's ArrowNotImplementedError."""
    vinestream.replay(None, out=str(tmp_path / "o"), backend="cpu", jobs=["triangles"], batch_size=30_000)
    with pytest.raises(ValueError, match=f"epoch={epoch!r}: expected an epoch number"):
        vinestream.read_results(str(tmp_path / "o"), epoch=epoch)
    second = vinestream.read_results(str(tmp_path / "o"), epoch=2)["triangles"]
    assert second.column("epoch").unique().to_pylist() == [2]


def test_replay_api_starts_bfs_at_the_logs_first_vertex(tmp_path):
    """Without bfs_sources, `vinestream.replay` starts BFS where `vinestream replay` does (the source of the first
    event that puts a vertex in the graph); it refused with "the bfs job needs source vertices (--bfs-source ...)"."""
    log = tmp_path / "log.parquet"
    pq.write_table(vinestream.events(op=["delete", "add", "add"], src=[9, 1, 2], dst=[8, 2, 3]), log)
    _, pipeline = vinestream.replay(str(log), backend="cpu", jobs=["bfs"], out=str(tmp_path / "out"))
    distances = pipeline.results()["bfs"].select(["vertex", "distance"]).to_pydict()
    assert dict(zip(distances["vertex"], distances["distance"])) == {1: 0, 2: 1, 3: 2}
    assert json.loads((tmp_path / "out" / "_run.json").read_text())["bfs_sources"] == [1]
    empty = tmp_path / "empty.parquet"
    pq.write_table(vinestream.EVENT_SCHEMA.empty_table(), empty)
    with pytest.raises(vinestream.UsageError, match="the bfs job needs a source vertex and no event of the log"):
        vinestream.replay(str(empty), backend="cpu", jobs=["bfs"])


@pytest.mark.parametrize("argument", ["out", "checkpoint_dir"])
def test_replay_api_refuses_an_empty_directory(tmp_path, monkeypatch, argument):
    """out="" was taken as no results directory, and _run.json was written into the working directory."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(vinestream.UsageError, match=f"{argument}='': an empty path; give a directory, or None"):
        vinestream.replay(backend="cpu", **{argument: ""})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argument", [{"keep_epochs": 3}, {"output_every": 5}])
def test_replay_api_refuses_output_bounds_without_out(argument):
    """keep_epochs / output_every bound the job outputs under out: without it they were taken and did nothing
    (the command line refuses --keep-epochs and --output-every without --out)."""
    with pytest.raises(vinestream.UsageError, match=f"{next(iter(argument))} needs out"):
        vinestream.replay(backend="cpu", **argument)
