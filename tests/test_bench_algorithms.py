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
