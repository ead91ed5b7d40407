"""The jobs inside the real pipeline, on every registered structure, against networkx after every batch.

The algorithm tests drive the jobs through a test double; this runs them the
way `vinestream replay --jobs ...` does: real VertexMap (FIFO id reuse), real
structures, BatchDeltas from the resolver, incremental updates every batch.
"""
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.algo_support import check_bfs, check_triangles, pagerank_l1
from tests.backends import BACKENDS
from tests.oracle import ADD_EDGE, DELETE_EDGE, Oracle
from tests.strategies import batches, events, to_table
from tests.structure_contract import STRUCTURES
from vinestream.algorithms import create_job
from vinestream.stream.pipeline import Pipeline
from vinestream.structures import registry

SOURCES = [0, 3]


def run_with_jobs(name, xp, stream, jobs_every=1):
    # fallback_fraction=inf: never fall back to a recompute, so the incremental paths are what is tested
    never = float("inf")
    jobs = [create_job("pagerank", xp, tol=1e-10, fallback_fraction=never),
            create_job("bfs", xp, sources=SOURCES, fallback_fraction=never),
            create_job("triangles", xp, fallback_fraction=never)]
    pipeline = Pipeline(registry.create(name, xp), jobs=jobs, jobs_every=jobs_every)
    oracle = Oracle()
    view = SimpleNamespace(networkx=oracle.to_networkx, vmap=pipeline.vertex_map)
    for i, evs in enumerate(stream, 1):
        oracle.apply_all(evs)
        pipeline.apply(to_table(evs))
        if i % jobs_every == 0:
            check_bfs(jobs[1], view, SOURCES)
            check_triangles(jobs[2], view)
            assert pagerank_l1(jobs[0], view) < 1e-4
    return pipeline


@pytest.mark.parametrize("xp", BACKENDS)
@pytest.mark.parametrize("name", STRUCTURES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=events(max_id=25, max_size=150), stream=batches(max_batches=6, max_id=25, max_size=8),
       jobs_every=st.sampled_from([1, 1, 2]))
def test_jobs_match_networkx_in_pipeline(name, xp, first, stream, jobs_every):
    """A first batch builds a graph, then small batches change it incrementally."""
    run_with_jobs(name, xp, [first, *stream], jobs_every)


@pytest.mark.parametrize("xp", BACKENDS)
@pytest.mark.parametrize("name", ["coo", "graphvine", "csr"])
def test_the_jobs_of_an_epoch_share_one_whole_adjacency(name, xp, monkeypatch):
    """Three jobs read the graph after each batch; the structure builds its whole adjacency once for them."""
    graph = registry.create(name, xp)
    builds = []
    cls_adjacency = type(graph).adjacency

    def counted(self, vertices=None):
        builds.append(vertices is None)
        return cls_adjacency(self, vertices)

    monkeypatch.setattr(type(graph), "adjacency", counted)
    jobs = [create_job("pagerank", xp), create_job("bfs", xp, sources=SOURCES), create_job("triangles", xp)]
    pipeline = Pipeline(graph, jobs=jobs)
    oracle = Oracle()
    view = SimpleNamespace(networkx=oracle.to_networkx, vmap=pipeline.vertex_map)
    add = [(ADD_EDGE, s, d, 1.0) for s, d in [(0, 1), (1, 2), (2, 0), (3, 0), (0, 3), (2, 4), (4, 0), (4, 3)]]
    stream = [add[:6], [add[6], (DELETE_EDGE, 1, 2, 1.0)], [add[1], add[7]]]
    for evs in stream:
        oracle.apply_all(evs)
        builds.clear()
        pipeline.apply(to_table(evs))
        assert builds.count(True) == 1
        check_bfs(jobs[1], view, SOURCES)
        check_triangles(jobs[2], view)
        assert pagerank_l1(jobs[0], view) < 1e-4
