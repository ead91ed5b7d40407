"""GraphVine's two edge phases behind one read (``edge_phases_counted`` on the CUDA graph path), driven by the
pipeline: host-sync budget and the graph against the oracle, its kernels emulated on the host.

What a GPU runs is the same code with real CUDA graphs; ``tests/test_graphvine_fused_gpu.py`` compares it
with the array program on a device, ``tests/test_graphvine_kernels_compile.py`` block for block here."""
from __future__ import annotations

import numpy as np
import pytest

from tests import graphvine_emulation as emu
from tests.backends import HAS_GPU
from tests.oracle import Oracle
from tests.test_sync_budget import _events, _rows, assert_graph_matches, phase_counts
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures import graphvine_kernels as gk
from vinestream.structures.backend import count_transfers

# device -> host reads of a batch of edge events: resolve's header and ONE for both edge phases (the phases
# one after the other read once each: test_sync_budget's 3 / 7); a batch with vertex deletions adds the vertex
# phase's four (the trees' sizes, the in-edge scan's, the in-edges' delete).  Plus the sorts of the array programs
# around it (test_sync_budget's module docstring): resolve's two and the CSR batches' two, and the vertex
# deletion's own four
BUDGET = {"edges": 2 + 4, "with_vertex_deletes": 6 + 8}


@pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation of the graphvine kernels")
@pytest.mark.skipif(HAS_GPU, reason="a GPU is present: the real kernels are tested instead")
@pytest.mark.parametrize("undirected", [False, True])
def test_pipeline_edge_phases_in_one_read(undirected, monkeypatch):
    """1,000-event batches through the pipeline with graphvine's combined edge phases: at most BUDGET reads a
    batch (the edge phases timed as one ``edges`` phase, one read), the graph equal to the oracle's after
    every batch, and the combined path really taken."""
    monkeypatch.setattr(gk, "launcher", emu.HostLauncher(2, 9))
    rng = np.random.default_rng(4)
    with count_transfers(trace=True) as c:
        p = build_pipeline(structure="graphvine", backend="cpu", undirected=undirected)
        p.structure.fused, p.structure.graphs = True, "emulate"
        assert p.structure.combined_edge_phases
        oracle = Oracle(undirected=undirected)
        for first in (_events(rng, 20_000), _events(rng, 1000)):   # the bulk load; a batch sizes the workspace
            p.apply(first)
            oracle.apply_all(_rows(first))
        for step in range(6):
            kind = "with_vertex_deletes" if step == 3 else "edges"
            batch = _events(rng, 1000, vertex_deletes=0.02 if step == 3 else 0.0)
            c.sites.clear()
            with phase_counts(p, c) as counts:
                result = p.apply(batch)
            oracle.apply_all(_rows(batch))
            assert "edges" in result.seconds and "delete" not in result.seconds
            total = sum(counts.get(ph, 0) for ph in ("resolve", "vertices", "csr", "edges", "delta"))
            assert total <= BUDGET[kind], (counts, c.sites)
            assert counts.get("edges", 0) <= 1, (counts, c.sites)
            assert_graph_matches(p, oracle)
    assert p.structure.combined_phases["one_read"] >= 6, p.structure.combined_phases


@pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation of the graphvine kernels")
@pytest.mark.skipif(HAS_GPU, reason="a GPU is present: the real kernels are tested instead")
def test_whole_adjacency_reads_nothing(monkeypatch):
    """The whole graph's CSR on the fused path takes its sizes from the host's counters (live edges, blocks in
    use), which equal the device's per-vertex sums after inserts, deletes and vertex deletions; the rows equal
    the array program's."""
    from vinestream.structures.backend import to_numpy
    monkeypatch.setattr(gk, "launcher", emu.HostLauncher(1, 5))
    rng = np.random.default_rng(8)
    p = build_pipeline(structure="graphvine", backend="cpu")
    g = p.structure
    g.fused, g.graphs = True, "emulate"
    for step in range(5):
        p.apply(_events(rng, 3000 if step else 20_000, vertex_deletes=0.02 if step == 3 else 0.0))
        assert int(to_numpy(g.edge_count).sum()) == g.num_edges
        assert int(to_numpy(g.num_blocks).sum()) == g.blocks_in_use
        with count_transfers() as c:
            csr = g.adjacency()
            assert c.count == 0, c.kinds
        g.fused = False
        ref = g.adjacency()
        g.fused = True
        offsets = to_numpy(csr.offsets)
        assert offsets.tolist() == to_numpy(ref.offsets).tolist()
        for row in rng.choice(offsets.shape[0] - 1, 50, replace=False):
            a, b = offsets[row], offsets[row + 1]
            assert sorted(to_numpy(csr.cols)[a:b].tolist()) == sorted(to_numpy(ref.cols)[a:b].tolist())
