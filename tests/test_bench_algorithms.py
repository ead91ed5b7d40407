"""The algorithm benchmark's result is JSON and carries every figure the report needs."""
import json

import numpy as np

from vinestream.stream.bench.algorithms import bench_algorithms, format_table, rmat_edges


def test_rmat_edges_are_simple():
    s, d = rmat_edges(np, 8, 4, seed=1)
    keys = (s << 32) | d
    assert (s != d).all() and np.unique(keys).shape[0] == keys.shape[0] and s.max() < 256


def test_result_shape_is_json():
    result = bench_algorithms(np, scales=[9], edge_factor=8, fractions=(1e-2, 1e-1))
    again = json.loads(json.dumps(result))
    assert again == result
    g = result["graphs"][0]
    assert g["edges"] > 1000
    assert set(g["pagerank"]) >= {"iteration_seconds", "spmv_seconds", "iterations"}
    assert g["bfs"]["same_result"] and g["bfs"]["compressed_bytes"] < g["bfs"]["plain_bytes"]
    assert g["triangles"]["static_edges_per_second"] > 0
    assert [row["fraction"] for row in g["batches"]] == [1e-2, 1e-1]
    for row in g["batches"]:
        assert row["bfs"]["agrees"] and row["triangles"]["agrees"]
        assert row["pagerank"]["l1_to_static"] < 1e-4
        for job in ("pagerank", "bfs", "triangles"):
            assert row[job]["incremental_seconds"] > 0 and row[job]["static_seconds"] > 0
    text = format_table(result)
    assert "rmat9-8" in text and "MTEPS" in text


def test_bench_bfs_plain_and_compressed_agree():
    from vinestream.stream.bench.algorithms import bench_bfs, format_bfs_table
    r = bench_bfs(np, scale=9, edge_factor=8, repeats=1)
    assert r["same_result"] and r["reached"] >= 1 and r["edges_traversed"] > 0
    assert r["compressed_bytes"] < r["plain_bytes"] and r["bits"] == 9
    assert "GTEPS" in format_bfs_table(r)


def test_peers_side_by_side_with_ratios():
    """With scipy (always in the test extra) and NetworKit when installed, every job has a peer time and a
    ratio, PageRank reports both iteration counts, and the batches compare against the peers' recomputes."""
    import pytest

    from vinestream.stream.bench import peers
    have = peers.available()
    if not have["scipy"]:
        pytest.skip("scipy is not installed")
    result = bench_algorithms(np, scales=[9], edge_factor=8, fractions=(1e-2,), batches=2)
    g = result["graphs"][0]
    p = g["peers"]
    assert p["pagerank"]["scipy_iterations"] > 0 and p["pagerank"]["ours_iterations"] > 0
    for job in ("pagerank", "bfs"):
        assert p[job]["best_peer"] is not None and p[job]["ratio"] > 0
    row = g["batches"][0]
    assert row["batches"] == 2
    assert row["pagerank"]["peers"]["scipy_warm"] > 0 and row["pagerank"]["peers"]["speedup_over_best_recompute"] > 0
    assert row["pagerank"]["peers"]["scipy_l1_to_ours"] < 1e-3
    assert p["triangles"]["scipy_total"] == g["triangles"]["triangles"] > 0     # a graph this small: scipy's SpGEMM
    if have["networkit"]:
        assert p["triangles"]["networkit_total"] == g["triangles"]["triangles"]
        assert row["bfs"]["peers"]["over_dynbfs"] > 0
    assert "vs best peer" in format_table(result)
    assert json.loads(json.dumps(result)) == result


def test_static_peer_rounds_interleave_and_report_medians():
    """The static comparison runs ours and each peer in alternating rounds and reports medians (minima kept):
    a peer that is fast only once does not make the row (the old best-of-3 against our median did)."""
    from vinestream.stream.bench.algorithms import _interleaved, _paired_summary
    order = []
    seq = {"ours": iter([5.0, 4.0, 6.0, 5.0, 5.0, 7.0]), "scipy": iter([9.0, 1.0, 6.0, 5.0, 4.0, 9.0]),
           "networkit": iter([8.0] * 6)}

    def run(name):
        def go():
            order.append(name)
            return next(seq[name])
        return go
    times = _interleaved({k: run(k) for k in seq}, pairs=5, warm_up=True)
    # the warm-up round, then forward and reversed rounds
    assert order[:3] == ["ours", "scipy", "networkit"]
    assert order[3:6] == ["ours", "scipy", "networkit"] and order[6:9] == ["networkit", "scipy", "ours"]
    assert times == {"ours": [4.0, 6.0, 5.0, 5.0, 7.0], "scipy": [1.0, 6.0, 5.0, 4.0, 9.0],
                     "networkit": [8.0] * 5}
    s = _paired_summary(times, ["scipy", "networkit"])
    assert s["scipy"] == 5.0 and s["scipy_min"] == 1.0 and s["ours_min"] == 4.0 and s["pairs"] == 5
    assert s["ratio_of_minima"] == 4.0 and s["pair_ratio_median"] == 1.0
    assert s["seconds"]["networkit"] == [8.0] * 5


def test_peer_row_is_the_median_of_the_pairs(monkeypatch):
    """The bench's static row: ours and scipy timed in the same rounds, ratio = median over median; a scipy
    time that is fast once (planted) moves the minima but not the ratio."""
    import pytest

    from vinestream.stream.bench import algorithms as ba
    from vinestream.stream.bench import peers
    if not peers.available()["scipy"]:
        pytest.skip("scipy is not installed")
    calls = {"n": 0}
    real = peers.scipy_bfs

    def planted(a, source):
        calls["n"] += 1
        secs, reached = real(a, source)
        return (secs * 1e-3 if calls["n"] == 3 else secs), reached
    monkeypatch.setattr(peers, "scipy_bfs", planted)
    result = ba.bench_algorithms(np, scales=[9], edge_factor=8, fractions=(1e-2,), pairs=3)
    b = result["graphs"][0]["peers"]["bfs"]
    assert b["pairs"] == 3 * ba.BFS_PAIRS_FACTOR and len(b["seconds"]["scipy"]) == b["pairs"]
    assert len(b["seconds"]["ours"]) == b["pairs"] and len(b["seconds"]["ours_traversal"]) == b["pairs"]
    import statistics
    assert b["scipy"] == statistics.median(b["seconds"]["scipy"]) and b["ours"] == statistics.median(
        b["seconds"]["ours"])
    assert b["scipy_min"] == min(b["seconds"]["scipy"]) < b["scipy"] / 10        # the planted fast run
    best = b["best_peer"]
    assert b["ratio"] == pytest.approx(b["ours"] / b[best])
    assert b["traversal_ratio"] == pytest.approx(b["ours_traversal"] / b[best])
    for job in ("pagerank", "triangles"):
        p = result["graphs"][0]["peers"][job]
        assert p["pairs"] == 3 and p["ratio"] == pytest.approx(p["ours"] / p["best_peer_seconds"])


def test_table_shows_cugraph_and_skips_missing_recomputes():
    """A GPU run's shape: no peer recomputes for the incremental rows (no section of dashes), and cuGraph's
    time on every row where it ran, also where another peer was faster."""
    import copy

    import pytest

    from vinestream.stream.bench import peers
    if not peers.available()["scipy"]:
        pytest.skip("scipy is not installed")
    result = bench_algorithms(np, scales=[9], edge_factor=8, fractions=(1e-2,), batches=1)
    assert "incremental vs the best peer recompute" in format_table(result)
    gpu = copy.deepcopy(result)
    g = gpu["graphs"][0]
    for row in g["batches"]:
        for job in ("pagerank", "bfs", "triangles"):
            row[job]["peers"] = {}
    g["peers"]["pagerank"]["pylibcugraph"] = 10 * g["peers"]["pagerank"]["ours"]
    table = format_table(gpu)
    assert "incremental vs the best peer recompute" not in table and "None" not in table.split("static vs")[1]
    assert "pylibcugraph" in table and "0.1x" in table


def test_plain_spmv_bfs_matches_networkx():
    """The plain program the GPU peer runs (one SpMV a level), here through scipy: networkx's distances, directed
    (``A^T x``) and undirected (``A x`` on a symmetric matrix)."""
    import networkx as nx
    import pytest
    pytest.importorskip("scipy")

    from vinestream.stream.bench.peers import spmv_bfs
    from vinestream.structures.csr_types import csr_from_edges
    s, d = rmat_edges(np, 7, 3, seed=5)
    n = 1 << 7
    for directed in (True, False):
        src, dst = (s, d) if directed else (np.concatenate([s, d]), np.concatenate([d, s]))
        csr = csr_from_edges(np, src.astype(np.int32), dst.astype(np.int32), None, n)
        got = spmv_bfs(np, csr.offsets, csr.cols, n, int(s[0]), directed=directed)
        g = nx.DiGraph(list(zip(src.tolist(), dst.tolist())))
        want = np.full(n, -1)
        for v, k in nx.single_source_shortest_path_length(g, int(s[0])).items():
            want[v] = k
        assert np.array_equal(got, want) and (got > 0).sum() > 3


def test_gpu_peers_cover_every_job():
    """On a GPU with cupyx: BFS against the plain SpMV program (its distances equal ours) and, on a graph
    this small, triangles against cupyx's SpGEMM (its total equals ours), besides PageRank."""
    from tests.backends import cupy_or_skip
    cp = cupy_or_skip()
    result = bench_algorithms(cp, scales=[9], edge_factor=8, fractions=(1e-2,))
    g = result["graphs"][0]
    p = g["peers"]
    assert p["bfs"]["cupyx"] > 0 and p["bfs"]["cupyx_agrees"] is True
    assert p["triangles"]["cupyx"] > 0 and p["triangles"]["cupyx_total"] == g["triangles"]["triangles"] > 0
    for job in ("pagerank", "bfs", "triangles"):
        assert p[job]["best_peer"] is not None and p[job]["ratio"] > 0
    assert json.loads(json.dumps(result)) == result


def test_the_cpu_peers_results_are_checked_against_ours():
    """On the CPU only the totals were kept (never compared) and scipy's and NetworKit's ranks and BFS distances not
    at all: a peer computing something else would have been timed as if it were the same job."""
    import pytest

    from vinestream.stream.bench import peers
    have = peers.available()
    if not (have["scipy"] and have["networkit"]):
        pytest.skip("scipy and networkit (the peers extra) are not installed")
    result = bench_algorithms(np, scales=[8], edge_factor=8, fractions=(1e-2,), pairs=1)
    p = result["graphs"][0]["peers"]
    assert p["bfs"]["scipy_agrees"] is True and p["bfs"]["networkit_agrees"] is True
    assert p["triangles"]["scipy_agrees"] is True and p["triangles"]["networkit_agrees"] is True
    assert p["triangles"]["ours_total"] == result["graphs"][0]["triangles"]["triangles"]
    assert 0 <= p["pagerank"]["scipy_l1_to_ours"] < 1e-4 and 0 <= p["pagerank"]["networkit_l1_to_ours"] < 1e-4
    assert p["disagreements"] == []
    assert "the peers agree with ours" in format_table(result)


def test_without_a_peer_nothing_is_said_to_agree(monkeypatch):
    """With no peer installed the table still said "the peers agree with ours" (QA): it agreed with nothing.  The
    line now names the checks that ran, and says there were none when no peer ran."""
    from vinestream.stream.bench import peers
    from vinestream.stream.bench.algorithms import peer_checks
    nothing = dict.fromkeys(peers.available(), False)
    monkeypatch.setattr(peers, "available", lambda: nothing)
    result = bench_algorithms(np, scales=[6], edge_factor=8, fractions=(1e-2,), pairs=1)
    p = result["graphs"][0]["peers"]
    assert p["checked"] == [] and p["disagreements"] == []
    table = format_table(result)
    assert "the peers agree" not in table and "no peer result to check ours against" in table
    assert peer_checks({"pagerank": {"scipy_l1_to_ours": 1e-7, "networkit_l1_to_ours": None},
                        "bfs": {"scipy_agrees": True}, "triangles": {"networkit_agrees": False}}) == [
        "pagerank: scipy", "bfs: scipy", "triangles: networkit"]


def test_a_peer_that_disagrees_is_flagged():
    from vinestream.stream.bench.algorithms import peer_disagreements
    peers = {"pagerank": {"networkit_l1_to_ours": 0.3, "scipy_l1_to_ours": 1e-6},
             "bfs": {"scipy_agrees": True, "networkit_agrees": False},
             "triangles": {"networkit_total": 7, "ours_total": 9, "networkit_agrees": False}}
    found = peer_disagreements(peers, 1e-6)
    assert found == ["pagerank: networkit's ranks are 0.3 from ours in L1 (tolerance 1e-06)",
                     "bfs: networkit's distances differ from ours",
                     "triangles: networkit's total differs from ours (7 vs ours 9)"]


def test_a_printed_ratio_follows_from_the_times_printed_beside_it():
    """A 0.0224 ms peer was printed as "0.0 ms" beside "ratio 7.59": the table's ratio could not be checked."""
    import re

    import pytest

    from vinestream.stream.bench import peers
    if not peers.available()["scipy"]:
        pytest.skip("scipy is not installed")
    result = bench_algorithms(np, scales=[8], edge_factor=8, fractions=(1e-2,), pairs=1)
    p = result["graphs"][0]["peers"]["bfs"]
    p.update(ours=1.7e-4, best_peer_seconds=2.24e-5, ratio=1.7e-4 / 2.24e-5)
    line = next(x for x in format_table(result).splitlines() if x.strip().startswith("bfs ") and "best" in x)
    ours, best, ratio = (float(v) for v in re.search(
        r"ours\s+([\d.e+-]+) ms\s+best \S+\s+([\d.e+-]+) ms\s+ratio ([\d.e+-]+)", line).groups())
    assert ours / best == pytest.approx(ratio, rel=0.01), line
