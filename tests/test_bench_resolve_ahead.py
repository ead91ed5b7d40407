"""``vinestream bench resolve-ahead``: both pipelines take the same stream; on NumPy nothing is resolved ahead
(the launch ahead is a GPU path) and the JSON has a median per structure and batch size; the CLI runs it."""
from __future__ import annotations

import json

import numpy as np

from vinestream.stream.app.cli import main
from vinestream.stream.bench.resolve_ahead import bench_resolve_ahead, format_table


def test_bench_resolve_ahead_on_numpy():
    out = bench_resolve_ahead(np, scale=9, edge_factor=4, structures=("coo", "graphvine"), batch_sizes=(40, 200),
                              batches=4)
    assert out["backend"] == "cpu" and out["jobs"] == ["pagerank", "bfs", "triangles"]
    for name in ("coo", "graphvine"):
        for size in ("40", "200"):
            row = out["structures"][name][size]
            assert row["seconds_ahead"] > 0 and row["seconds_in_turn"] > 0
            assert row["speedup"] == row["seconds_in_turn"] / row["seconds_ahead"]
            assert row["resolved_ahead"] == 0                 # NumPy resolves in turn
    assert "resolve during the jobs" in format_table(out)


def test_cli_bench_resolve_ahead_writes_json(tmp_path, capsys):
    path = tmp_path / "ra.json"
    code = main(["bench", "resolve-ahead", "--backend", "cpu", "--scales", "8", "--batch-sizes", "30",
                 "--structures", "coo", "--json", str(path)])
    assert code == 0
    result = json.loads(path.read_text())
    assert result["resolve_ahead"][0]["structures"]["coo"]["30"]["resolved_ahead"] == 0
    assert "next batch's resolve" in capsys.readouterr().out
