"""When a triangles update recounts from scratch: the explicit ``fallback_fraction`` rule, and the GPU's
small-graph rule (``recount_edges``, default ``GPU_RECOUNT_EDGES`` on CuPy) that never touches a batch of
at most 0.1% of the edges (issue 11: no pass over all edges for those)."""
import numpy as np
import pytest

from tests.algo_support import IdentityMap, work_graph_and_delta
from tests.backends import HAS_GPU, cupy
from vinestream.algorithms import create_job
from vinestream.algorithms.triangles import (
    FALLBACK_FRACTION,
    GPU_RECOUNT_EDGES,
    SMALL_BATCH_FRACTION,
    Triangles,
)
from vinestream.structures.delta import apply_delta


def test_defaults_on_the_cpu_and_with_an_explicit_fraction():
    job = Triangles(np)
    assert job.fallback_fraction == FALLBACK_FRACTION and job.recount_edges == 0
    assert Triangles(np, fallback_fraction=0.5).recount_edges == 0
    assert Triangles(np, recount_edges=77).recount_edges == 77


@pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")
def test_defaults_on_the_gpu():
    assert Triangles(cupy).recount_edges == GPU_RECOUNT_EDGES
    assert create_job("triangles", cupy).recount_edges == GPU_RECOUNT_EDGES
    # an explicit fraction is the whole rule (the tests that force the incremental path rely on it)
    assert Triangles(cupy, fallback_fraction=1e9).recount_edges == 0


@pytest.mark.parametrize("edges", [1, 999, 1000, 1001, 228_000, GPU_RECOUNT_EDGES, GPU_RECOUNT_EDGES + 1, 10**8])
def test_the_rule(edges):
    small = Triangles(np, recount_edges=GPU_RECOUNT_EDGES)
    for changed in (0, 1, 2, int(SMALL_BATCH_FRACTION * edges), int(SMALL_BATCH_FRACTION * edges) + 1,
                    int(FALLBACK_FRACTION * edges), int(FALLBACK_FRACTION * edges) + 1):
        over_small = changed > SMALL_BATCH_FRACTION * edges
        over_fallback = changed > FALLBACK_FRACTION * edges
        assert Triangles(np).recounts(changed, edges) == over_fallback
        assert small.recounts(changed, edges) == (over_fallback or (over_small and edges <= GPU_RECOUNT_EDGES))
        if not over_small:                        # issue 11: never a pass over all edges for these
            assert not small.recounts(changed, edges)


@pytest.mark.parametrize("fraction, mode", [(0.001, "incremental"), (0.004, "static")])
def test_small_graph_rule_in_an_update(fraction, mode):
    """On a graph under ``recount_edges``, a batch of 0.1% stays incremental and one of 0.4% recounts;
    both give the recount's (a fresh job's) counts."""
    g, delta = work_graph_and_delta(fraction=fraction, seed=3)
    vm = IdentityMap()
    job = Triangles(np, recount_edges=10**9)
    job.run_static(g, vm)
    assert delta.num_changed_edges <= FALLBACK_FRACTION * g.num_edges
    apply_delta(g, delta)
    job.update(g, delta, vm)
    assert job.work["mode"] == mode
    fresh = Triangles(np)
    fresh.run_static(g, vm)
    assert job.total == fresh.total > 0
    assert np.array_equal(job.output(vm).column("triangles").to_numpy(),
                          fresh.output(vm).column("triangles").to_numpy())
