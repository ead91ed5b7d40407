"""Concurrent delete/insert phases: every structure's declaration, ``apply_edge_phases`` against the two
sequential phases, and the pipeline's use of it (its ``edges`` phase).

On NumPy ``apply_edge_phases`` runs without streams; ``tests/test_concurrent_phases_gpu.py`` runs the
structures that declare ``concurrent_phases`` on two real CUDA streams.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.strategies import to_table
from tests.structure_contract import STRUCTURES
from vinestream.stream.pipeline import Pipeline
from vinestream.structures import registry
from vinestream.structures.backend import to_numpy
from vinestream.structures.base import DynamicGraph, phase_streams
from vinestream.structures.csr_types import CSRBatch

#: structures whose phases may overlap (each one's docstring says why); every other one says False
CONCURRENT = {"slabhash"}


def edge_map(g) -> dict:
    csr = g.adjacency()
    rows, cols = to_numpy(csr.row_ids()).tolist(), to_numpy(csr.cols).tolist()
    w = to_numpy(csr.weights).tolist() if csr.weights is not None else [1.0] * len(cols)
    out = dict(zip(zip(rows, cols), w))
    assert len(out) == len(cols), "an edge is stored twice"
    return out


def disjoint_batches(rng, g, nv: int, n: int):
    """(inserts, deletes): random inserts (new and existing keys) and deletes of other keys, half of
    them live edges, none shared with the inserts (the batcher's guarantee)."""
    s, d = rng.integers(0, nv, n), rng.integers(0, nv, n)
    w = rng.random(n).astype(np.float32)
    live = list(edge_map(g))
    ins_keys = set(zip(s.tolist(), d.tolist()))
    pick = [live[i] for i in rng.choice(len(live), min(len(live), n // 2), replace=False)] if live else []
    cand = pick + list(zip(rng.integers(0, nv, n // 2).tolist(), rng.integers(0, nv, n // 2).tolist()))
    dels = [k for k in dict.fromkeys(cand) if k not in ins_keys]
    ds = np.asarray([a for a, _ in dels], dtype=np.int32)
    dd = np.asarray([b for _, b in dels], dtype=np.int32)
    return CSRBatch.from_edges(np, s, d, w), CSRBatch.from_edges(np, ds, dd)


def test_every_structure_declares_its_phase_concurrency():
    assert DynamicGraph.concurrent_phases is False
    for name in STRUCTURES:
        cls = registry.get(name)
        assert isinstance(cls.concurrent_phases, bool)
        assert cls.concurrent_phases == (name in CONCURRENT), name
        if cls.concurrent_phases:       # a structure that may overlap must say how
            assert cls.apply_edge_phases is not DynamicGraph.apply_edge_phases
    assert phase_streams(np) is None


@pytest.mark.parametrize("name", STRUCTURES)
def test_apply_edge_phases_equals_sequential_phases(name):
    """Masks, edges, weights, degrees and memory equal ``delete_edges`` then ``insert_edges``."""
    rng = np.random.default_rng(sum(map(ord, name)))
    nv = 70
    a, b = registry.create(name, np), registry.create(name, np)
    for g in (a, b):
        g.insert_vertices(np.arange(nv, dtype=np.int32))
    removed = 0
    for step in range(8):
        n = int(rng.choice([1, 20, 400]))
        ins, dels = disjoint_batches(rng, b, nv, n)
        mi, md = a.apply_edge_phases(ins, dels)
        sd = b.delete_edges(dels)
        si = b.insert_edges(ins)
        assert np.array_equal(to_numpy(mi), to_numpy(si)), step
        assert np.array_equal(to_numpy(md), to_numpy(sd)), step
        assert edge_map(a) == edge_map(b)
        assert a.num_edges == b.num_edges == len(edge_map(b))
        assert np.array_equal(to_numpy(a.degree()), to_numpy(b.degree()))
        removed += int(to_numpy(md).sum())
    assert removed >= 20          # deletes of live edges were exercised
    if name not in CONCURRENT:
        assert a.memory() == b.memory()


@pytest.mark.parametrize("name", ["slabhash", "graphvine"])
def test_pipeline_times_the_phases_as_it_runs_them(name):
    """A concurrent structure's batch has one ``edges`` time; a sequential one ``delete`` and ``insert``."""
    p = Pipeline(registry.create(name, np))
    evs = [(1, i, (i + 1) % 13, 1.0) for i in range(13)]
    p.apply(to_table(evs))
    r = p.apply(to_table([(2, 0, 1, None), (1, 3, 9, 2.0), (1, 5, 1, 0.5)]))
    concurrent = registry.get(name).concurrent_phases
    assert ("edges" in r.seconds) == concurrent
    assert ("insert" in r.seconds and "delete" in r.seconds) == (not concurrent)
    assert r.counts["inserted"] == 2 and r.counts["deleted"] == 1
    src, dst, _ = p.edges_external()
    edges = set(zip(src.tolist(), dst.tolist()))
    assert (0, 1) not in edges and {(3, 9), (5, 1)} <= edges and len(edges) == 14


def test_bench_measures_the_concurrent_phases():
    """``vinestream bench structures``: sequential vs concurrent rows for concurrent structures only."""
    from vinestream.stream.bench.structures import bench_structures, format_table
    r = bench_structures(np, structures=("slabhash", "graphvine"), batch_sizes=(10, 200),
                         graphs=[{"kind": "rmat", "scale": 9, "edge_factor": 8}], repeat=1)
    entry = r["graphs"][0]["structures"]
    rows = entry["slabhash"]["phases"]
    assert [row["batch_size"] for row in rows] == [10, 200]
    for row in rows:
        assert row["sequential_seconds"] > 0 and row["concurrent_seconds"] > 0 and row["streams"] is False
        assert row["speedup"] == pytest.approx(row["sequential_seconds"] / row["concurrent_seconds"])
    assert "phases" not in entry["graphvine"] and "phases" not in entry["csr"]
    assert r["device"]["backend"] == "cpu"
    # the timed phases restored the state: the churn still starts from every edge but the held-out ones
    assert entry["slabhash"]["edges_after_batches"] == entry["csr"]["edges_after_batches"]
    assert "concurrent phases" in format_table(r)
