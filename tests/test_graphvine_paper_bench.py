"""The GraphVine paper comparison suite on a tiny configuration, and the paper's winners as data."""
from __future__ import annotations

import json

import numpy as np
import pytest

from vinestream.stream.bench import graphvine_paper as gp

pytest.importorskip("scipy")


def test_paper_winners_come_from_the_papers_tables():
    # Table 3: G1 100K insert, GraphVine 0.868 ms < faimGraph 1.224 < Hornet 13.083
    assert gp.winner(gp.paper_cell("insert", "G1", 100_000), gp.PAPER_STRUCTURES) == "graphvine"
    # Table 4: G1 100K delete, faimGraph fastest; among Hornet and GraphVine, Hornet
    cell = gp.paper_cell("delete", "G1", 100_000)
    assert gp.winner(cell, gp.PAPER_STRUCTURES) == "faimgraph"
    assert gp.winner(cell, ("hornet", "graphvine")) == "hornet"
    # NA cells are left out: faimGraph has no 10M batches, Hornet no bulk build on G6
    assert "faimgraph" not in gp.paper_cell("insert", "G5", 10_000_000)
    assert gp.paper_cell("memory", "G6", "bulk") == {"graphvine": 8908}
    assert gp.paper_cell("insert", None, 100_000) is None
    # Table 5: Hornet the smallest on the road graph at 100K
    assert gp.winner(gp.paper_cell("memory", "G6", 100_000), gp.PAPER_STRUCTURES) == "hornet"


def test_generated_graphs_are_symmetric_and_simple():
    for s, d in (gp.delaunay_graph(8), gp.rgg_graph(8)):
        keys = set(zip(s.tolist(), d.tolist()))
        assert len(keys) == len(s) and all((b, a) in keys for a, b in keys)
        assert (s != d).all() and s.max() < 256
    s, d = gp.delaunay_graph(8)
    assert 5.0 < len(s) / 256 < 6.0                      # a planar triangulation: average degree ~6


def test_suite_runs_on_a_tiny_configuration(tmp_path):
    res = gp.bench_graphvine_paper(np, scale=8, structures=("hornet", "faimgraph", "graphvine", "custinger"),
                                   graphs=("delaunay", "rgg", "rmat", "luxembourg_osm"),
                                   batch_sizes=(100, 1000, 10**9))
    json.loads(json.dumps(res))
    assert res["structures"]["graphvine"] == "ok" and res["structures"]["hornet"] == "ok"
    table = gp.format_table(res)
    if res["structures"]["faimgraph"] != "ok":
        assert "faimgraph: skipped" in table
    graphs = {g["name"]: g for g in res["graphs"]}
    dl = graphs["delaunay-s8"]
    assert dl["counterpart"] == "G5" and dl["skipped_batches"] == [10**9]
    assert [c["batch"] for c in dl["cells"] if c["metric"] == "insert"] == [100, 1000, "bulk"]
    for c in dl["cells"]:
        assert c["our_winner"] in c["ours"]
        if c["metric"] == "init":
            assert c["paper_winner"] == "graphvine"   # Table 2, among the structures run here
    bulk = dl["structures"]["hornet"]["batches"]["bulk"]
    assert bulk["edges"] == dl["edges"] and bulk["insert_ms"] > 0 and bulk["memory_mb"] > 0
    assert all(c["paper"] is None for c in graphs["rmat-s8"]["cells"])   # no R-MAT in the paper
    assert "== delaunay-s8" in table and "G5 delaunay_n24" in table


def test_cli_subcommand(tmp_path, capsys, monkeypatch):
    from vinestream.stream.app.cli import main
    monkeypatch.setenv("VINESTREAM_SHARED_DATA", str(tmp_path))     # no real graphs: keep it tiny
    out = tmp_path / "paper.json"
    rc = main(["bench", "paper-graphvine", "--backend", "cpu", "--paper-scale", "7", "--structures",
               "hornet,graphvine", "--batch-sizes", "200", "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())["graphvine_paper"]
    assert {g["name"] for g in data["graphs"]} >= {"delaunay-s7", "rgg-s7", "rmat-s7"}
    assert "GraphVine paper comparison" in capsys.readouterr().out
