"""The structure benchmark at tiny sizes on NumPy: JSON shape, ratios to csr, churn memory."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vinestream.connectors.shared_data import shared_data_file
from vinestream.stream.bench.structures import (
    CHURN_BATCHES,
    bench_structures,
    format_table,
    load_edge_file,
    load_edge_list,
    rmat_edges,
)

REAL = str(shared_data_file("static/facebook_combined.txt.gz") or "")


def test_bench_json_shape_and_table():
    res = bench_structures(np, structures=("graphvine", "coo", "csr"), batch_sizes=(10, 100),
                           graphs=[{"kind": "rmat", "scale": 8, "edge_factor": 8}], repeat=2)
    json.loads(json.dumps(res))                      # JSON-serialisable
    assert res["backend"] == "cpu" and res["batch_sizes"] == [10, 100]
    (gr,) = res["graphs"]
    assert gr["edges"] > 0 and gr["vertices"] == 256 and gr["held_out"] == 100
    gv, csr = gr["structures"]["graphvine"], gr["structures"]["csr"]
    assert gv["available"] and csr["available"]
    assert "coo" in gr["structures"]                  # available or an error, never missing
    for row in gv["batches"]:
        for op in ("insert", "delete", "query"):
            assert row[f"{op}_edges_per_s"] > 0
            assert row[f"{op}_vs_csr"] == pytest.approx(
                row[f"{op}_edges_per_s"] / next(r for r in csr["batches"]
                                                if r["batch_size"] == row["batch_size"])[f"{op}_edges_per_s"])
    # every repetition restores the state: the initial edges are still there afterwards
    assert gv["edges_after_batches"] == gv["initial_edges"] == gr["edges"] - 100
    churn = gv["churn"]
    assert churn["live_edges"] == gv["initial_edges"]
    assert churn["memory"]["blocks_in_use"] > 0
    assert churn["reserved_vs_csr"] >= churn["used_vs_csr"] > 0
    table = format_table(res)
    assert "graphvine" in table and "x csr" in table and gr["name"] in table


def test_churn_takes_a_bounded_number_of_batches():
    """A small largest batch size must not turn the churn into thousands of calls (hours on a real graph):
    it takes the largest size or CHURN_BATCHES batches each way, whichever is fewer calls."""
    res = bench_structures(np, structures=("csr",), batch_sizes=(4,),
                           graphs=[{"kind": "rmat", "scale": 9, "edge_factor": 8}], repeat=1)
    csr = res["graphs"][0]["structures"]["csr"]
    half = csr["initial_edges"] // 2
    step = csr["churn"]["batch_size"]
    assert half > 32 * 4                              # the largest batch alone would take more than 32 calls
    assert step >= 4 and -(-half // step) <= CHURN_BATCHES
    assert csr["churn"]["live_edges"] == csr["initial_edges"]
    big = bench_structures(np, structures=("csr",), batch_sizes=(4, 2_000),
                           graphs=[{"kind": "rmat", "scale": 9, "edge_factor": 8}], repeat=1)
    assert big["graphs"][0]["structures"]["csr"]["churn"]["batch_size"] == 2_000    # the largest size, fewer calls


def test_a_real_graph_in_any_format_convert_reads(tmp_path):
    """--real takes what `vinestream convert` reads: here a CSV with a header, ids not from 0, a self-loop and
    a duplicate (dropped), so 5 distinct edges between 4 vertices."""
    path = tmp_path / "g.csv"
    path.write_text("src,dst\n10,20\n20,30\n30,10\n10,40\n40,40\n20,30\n40,20\n")
    res = bench_structures(np, structures=("graphvine",), batch_sizes=(2,),
                           graphs=[{"kind": "file", "path": str(path)}], repeat=1)
    (gr,) = res["graphs"]
    assert gr["name"] == "g" and gr["vertices"] == 4 and gr["edges"] == 5
    assert gr["structures"]["graphvine"]["churn"]["live_edges"] == gr["edges"] - 2


def test_the_timed_rounds_follow_untimed_ones(monkeypatch):
    """One-time costs (kernels loaded, a CUDA graph captured) are paid in the untimed rounds: a structure whose
    first inserts after its build are slow (here 0.3 s each for the first WARMUP_ROUNDS) shows none of it."""
    import time

    import vinestream.stream.bench.structures as bs

    real_create = bs.create

    def create(name, xp, **kw):
        g = real_create(name, xp, **kw)
        calls = {"n": 0}
        insert = g.insert_edges

        def slow_first(batch):
            calls["n"] += 1
            if 2 <= calls["n"] <= 1 + bs.WARMUP_ROUNDS:       # call 1 is the build
                time.sleep(0.3)
            return insert(batch)
        g.insert_edges = slow_first
        return g
    monkeypatch.setattr(bs, "create", create)
    res = bench_structures(np, structures=("csr",), batch_sizes=(10,),
                           graphs=[{"kind": "rmat", "scale": 7, "edge_factor": 4}], repeat=3)
    assert res["warmup_rounds"] == bs.WARMUP_ROUNDS >= 1
    (row,) = res["graphs"][0]["structures"]["csr"]["batches"]
    assert row["insert_seconds"] < 0.15


def test_rmat_generator_shape():
    s, d = rmat_edges(np, 10, 4, seed=3)
    assert s.shape == d.shape and s.shape[0] <= 4 << 10
    assert len(set(zip(s.tolist(), d.tolist()))) == s.shape[0] and not (s == d).any()   # simple graph
    assert s.min() >= 0 and max(s.max(), d.max()) < 1024
    # skewed: the busiest source has far more than the average degree
    assert np.bincount(s).max() > 8 * 4


@pytest.mark.skipif(not os.path.exists(REAL), reason="real graph not present")
def test_real_graph_loader_and_bench():
    s, d = load_edge_file(REAL)
    assert s.shape[0] == 88234 and s.min() == 0 and max(s.max(), d.max()) == 4038
    res = bench_structures(np, structures=("graphvine",), batch_sizes=(100,),
                           graphs=[{"kind": "file", "path": REAL}], repeat=1)
    gr = res["graphs"][0]
    assert gr["name"] == "facebook_combined" and gr["edges"] == 88234
    assert set(gr["structures"]) == {"graphvine", "csr"}


def test_diffcsr_crossover_fits_its_batches_to_a_small_graph():
    """`bench sorted --scales 8`: the crossover's 20 batches of 10,000 edges would hold more than R-MAT 8's
    2,583; they are cut so that at most half the edges are held out, and every threshold's row is measured."""
    from vinestream.stream.bench.sorted_adjacency import diffcsr_crossover
    res = diffcsr_crossover(np, {"kind": "rmat", "scale": 8, "edge_factor": 16}, fractions=(0.0, 0.5), rounds=4)
    assert 1 <= res["batch"] and res["rounds"] * res["batch"] <= res["edges"] // 2
    assert [r["merge_fraction"] for r in res["rows"]] == [0.0, 0.5]
    assert all(r["update_s_per_batch"] > 0 for r in res["rows"])


def test_a_real_graph_without_edges_or_of_loops_only_is_refused(tmp_path):
    """Both benches drop self-loops: a file of nothing but comments, or of loops only, is one clear error."""
    from vinestream.stream.bench.structures import load_edge_list
    from vinestream.stream.errors import InputError
    (tmp_path / "loops.txt").write_text("1 1\n2 2\n")
    (tmp_path / "none.txt").write_text("# a graph\n")
    with pytest.raises(InputError, match="every edge is a self-loop"):
        load_edge_list(np, str(tmp_path / "loops.txt"))
    with pytest.raises(InputError, match="no edges in it"):
        load_edge_list(np, str(tmp_path / "none.txt"))


def test_a_graph_too_small_to_measure_gives_a_result_without_undefined_ratios():
    """`bench structures --scales 1 --batch-sizes 1 --structures csr`: the csr baseline's scan of R-MAT 1 reads
    no edge (a rate of 0), and every ratio against it was a ZeroDivisionError.  A ratio is None where csr's
    rate is 0 (or not finite); the table shows '-' there, the others are real ratios."""
    from vinestream.stream.bench.structures import _ratio
    res = bench_structures(np, structures=("csr", "graphvine"), batch_sizes=(1,),
                           graphs=[{"kind": "rmat", "scale": 1, "edge_factor": 16}], repeat=1)
    json.loads(json.dumps(res))
    (gr,) = res["graphs"]
    (csr_row,) = gr["structures"]["csr"]["batches"]
    assert csr_row["scan_edges_per_s"] == 0 and csr_row["scan_vs_csr"] is None
    for name in ("csr", "graphvine"):
        (row,) = gr["structures"][name]["batches"]
        assert row["scan_vs_csr"] is None
        assert row["insert_vs_csr"] == pytest.approx(row["insert_edges_per_s"] / csr_row["insert_edges_per_s"])
    table = format_table(res)
    assert table.count("       0       -") == 2
    assert _ratio(1.0, 0.0) is None and _ratio(1.0, float("inf")) is None and _ratio(float("inf"), 2.0) is None
    assert _ratio(3.0, 2.0) == 1.5


def test_a_real_graph_as_a_parquet_edge_table_or_event_log(tmp_path):
    """--real reads Parquet as `vinestream convert` does (the docs said any format convert reads, but a Parquet
    file was refused): an edge table (columns named as convert takes them), and an event log, whose graph is the
    one its events leave."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"source": [10, 20, 30, 10, 40, 20, 40], "target": [20, 30, 10, 40, 40, 30, 20]}),
                   tmp_path / "table.parquet")
    res = bench_structures(np, structures=("graphvine",), batch_sizes=(2,),
                           graphs=[{"kind": "file", "path": str(tmp_path / "table.parquet")}], repeat=1)
    (gr,) = res["graphs"]
    assert gr["name"] == "table" and gr["vertices"] == 4 and gr["edges"] == 5    # a loop and a duplicate dropped
    # a log: 2->3 deleted, 3->1 gone with vertex 3, which 3->4 brings back; 9 is added alone (no edge)
    op = pa.array([1, 1, 1, 2, 4, 1, 1, 3], pa.int8())
    pq.write_table(pa.table({"op": op, "src": [1, 2, 3, 2, 3, 3, 5, 9],
                             "dst": pa.array([2, 3, 1, 3, None, 4, 6, None], pa.int64())}), tmp_path / "log.parquet")
    s, d, n = load_edge_list(np, str(tmp_path / "log.parquet"))
    assert n == 6 and sorted(zip(s.tolist(), d.tolist())) == [(0, 1), (2, 3), (4, 5)]   # 1->2, 3->4, 5->6


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([1, 1, 2, 3, 4]), st.integers(0, 5), st.integers(0, 5)), max_size=40))
def test_an_event_logs_graph_is_the_oracles(events):
    """The graph a log leaves, computed by sorts (no loop over events), against applying them one at a time."""
    from tests.oracle import Oracle
    from vinestream.stream.bench.structures import _graph_of_events
    oracle = Oracle(keep_self_loops=True)
    for op, u, v in events:
        oracle.apply(op, u, None if op >= 3 else v)
    op = np.array([e[0] for e in events], np.int8)
    src = np.array([e[1] for e in events], np.int64)
    dst = np.array([-1 if e[0] >= 3 else e[2] for e in events], np.int64)
    s, d = _graph_of_events(op, src, dst)
    assert sorted(zip(s.tolist(), d.tolist())) == sorted(oracle.edges)


def test_a_directory_given_as_real_is_one_line(tmp_path):
    """`--real <a directory>` said "no such file"; it names what it is and what to give."""
    from vinestream.stream.bench.structures import check_real_graph
    from vinestream.stream.errors import InputError
    (tmp_path / "graphs").mkdir()
    with pytest.raises(InputError, match=r"^--real \S+graphs: a directory: give a file \(an edge list or event log"):
        bench_structures(np, structures=("csr",), batch_sizes=(2,),
                         graphs=[{"kind": "file", "path": str(tmp_path / "graphs")}], repeat=1)
    with pytest.raises(InputError, match=r"--real \S+nope\.txt: no such file$"):
        check_real_graph(str(tmp_path / "nope.txt"))
    (tmp_path / "g.parquet").write_bytes(b"PAR1")
    check_real_graph(str(tmp_path / "g.parquet"))          # Parquet is read (by convert), not refused


def test_a_binary_or_headless_graph_file_is_refused_before_any_benchmark_runs(tmp_path):
    """`bench --real good.txt,cnr-2000.graph` (WebGraph's compressed binary, no METIS file) benchmarked the first
    graph for a minute, then failed on the second's "METIS header ..." : every --real file's first bytes are now
    checked before the run (the CLI checks them all first), naming the flag."""
    from vinestream.stream.bench.structures import check_real_graph
    from vinestream.stream.errors import InputError
    good = tmp_path / "good.txt"
    good.write_text("1 2\n2 3\n")
    check_real_graph(str(good))
    binary = tmp_path / "web.graph"
    binary.write_bytes(bytes([0x9c, 0x00, 0x1f, 0x00, 0xe3]) * 40)
    with pytest.raises(InputError, match=r"^--real \S+web\.graph: binary data, not a text edge list"):
        check_real_graph(str(binary))
    headless = tmp_path / "bad.graph"
    headless.write_text("3 x\n2\n1 3\n2\n")
    with pytest.raises(InputError, match=r"^--real \S+bad\.graph \(its first line\): METIS header '3 x' is not"):
        check_real_graph(str(headless))
    metis = tmp_path / "ok.graph"
    metis.write_text("% a comment\n3 2\n2\n1 3\n2\n")
    check_real_graph(str(metis))                        # a METIS file with its header passes
