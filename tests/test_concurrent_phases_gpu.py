"""Concurrent delete/insert phases on two real CUDA streams leave the state of sequential phases.

For every structure that declares ``concurrent_phases``: one instance applies each batch with
``apply_edge_phases(..., streams=phase_streams(cupy))`` (the pipeline's call), a second with
``streams=None`` (the same kernels one after the other on the current stream) and a third with
``delete_edges`` then ``insert_edges``.  After every batch all three must return the same masks and
hold the same edges, weights, degrees and memory accounting.  Byte-equal device arrays are not
expected: a structure whose inserts claim slots by ``atomicCAS`` (slabhash) places a key wherever
its thread wins, which differs between any two runs, concurrent or not.  Run on a GPU box:
``python3 -m pytest -q -m gpu tests/test_concurrent_phases_gpu.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.backends import HAS_GPU, cupy
from tests.structure_contract import STRUCTURES
from tests.test_concurrent_phases import edge_map
from vinestream.stream.pipeline import Pipeline
from vinestream.structures import registry
from vinestream.structures.backend import to_numpy
from vinestream.structures.base import phase_streams
from vinestream.structures.csr_types import CSRBatch

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")]

CONCURRENT = [n for n in STRUCTURES if registry.get(n).concurrent_phases]


def assert_same_state(a, b):
    """The same graph and the same accounting: edges with weights, degrees, live counts, memory()."""
    assert edge_map(a) == edge_map(b)
    assert np.array_equal(to_numpy(a.degree()), to_numpy(b.degree()))
    assert (a.num_vertices, a.num_edges) == (b.num_vertices, b.num_edges)
    assert a.memory() == b.memory()


def batches(rng, live: list, nv: int, n: int):
    s = (rng.zipf(1.4, n) % nv).astype(np.int32)          # hubs: chains, rebuilds, flushes
    d = rng.integers(0, nv, n).astype(np.int32)
    w = rng.random(n).astype(np.float32)
    ins_keys = set(zip(s.tolist(), d.tolist()))
    pick = [live[i] for i in rng.choice(len(live), min(len(live), n), replace=False)] if live else []
    dels = [k for k in pick if k not in ins_keys]
    ds = np.asarray([x for x, _ in dels], dtype=np.int32)
    dd = np.asarray([y for _, y in dels], dtype=np.int32)
    return (CSRBatch.from_edges(cupy, cupy.asarray(s), cupy.asarray(d), cupy.asarray(w)),
            CSRBatch.from_edges(cupy, cupy.asarray(ds), cupy.asarray(dd)))


@pytest.mark.parametrize("name", CONCURRENT)
def test_two_streams_equal_sequential_phases(name):
    assert CONCURRENT, "slabhash declares concurrent phases"
    rng = np.random.default_rng(23)
    nv = 4000
    conc, seq, plain = (registry.create(name, cupy) for _ in range(3))
    streams = phase_streams(cupy)
    assert streams is not None and streams[0] is not streams[1]
    for g in (conc, seq, plain):
        g.insert_vertices(cupy.arange(nv, dtype=cupy.int32))
    removed = 0
    for _ in range(12):
        n = int(rng.choice([10, 1000, 50000]))
        ins, dels = batches(rng, list(edge_map(plain)), nv, n)
        mc = conc.apply_edge_phases(ins, dels, streams=streams)
        ms = seq.apply_edge_phases(ins, dels)
        md = plain.delete_edges(dels)
        mi = plain.insert_edges(ins)
        for got in (mc, ms):
            assert np.array_equal(to_numpy(got[0]), to_numpy(mi)) and np.array_equal(to_numpy(got[1]), to_numpy(md))
        assert_same_state(conc, seq)
        assert edge_map(conc) == edge_map(plain)
        assert conc.num_edges == plain.num_edges
        removed += int(to_numpy(md).sum())
    assert removed > 1000


@pytest.mark.parametrize("name", CONCURRENT)
def test_pipeline_on_two_streams_equals_cpu_pipeline(name):
    """The pipeline's concurrent path on the GPU (two streams) against the CPU pipeline, batch by batch."""
    from tests.strategies import to_table
    rng = np.random.default_rng(4)
    gpu, cpu = Pipeline(registry.create(name, cupy)), Pipeline(registry.create(name, np))
    for _ in range(10):
        n = 3000
        ops = rng.choice([1, 1, 1, 2, 2, 3, 4], n)
        src, dst = rng.integers(0, 500, n), rng.integers(0, 500, n)
        evs = [(int(o), int(s), None if o > 2 else int(d), 1.5 if o == 1 else None)
               for o, s, d in zip(ops, src, dst)]
        rg, rc = gpu.apply(to_table(evs)), cpu.apply(to_table(evs))
        assert "edges" in rg.seconds
        assert rg.counts == rc.counts
        eg, ec = gpu.edges_external(), cpu.edges_external()
        assert sorted(zip(eg[0].tolist(), eg[1].tolist())) == sorted(zip(ec[0].tolist(), ec[1].tolist()))
