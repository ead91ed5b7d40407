"""Every structure behind the full pipeline (resolve -> vertex map -> CSR batches -> structure),
checked against the one-event-at-a-time oracle after every batch, BatchDelta included.

A structure joins by one line in ``tests/structure_contract.py`` (``STRUCTURES``).
"""
import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.backends import BACKENDS
from tests.oracle import Oracle
from tests.strategies import batches, f32, to_table
from tests.structure_contract import STRUCTURES
from vinestream.connectors.parquet import ParquetResultsSink
from vinestream.stream.pipeline import Pipeline
from vinestream.structures import registry


def graph_state(pipeline):
    """(vertices, {(u, v): weight}) of the pipeline's graph, in external ids."""
    src, dst, w = pipeline.edges_external()
    edges = dict(zip(zip(src.tolist(), dst.tolist()), w.tolist()))
    assert len(edges) == len(src), "an edge is stored twice"
    return set(pipeline.vertices_external().tolist()), edges


def check_delta(pipeline, delta, before_edges, after_edges, before_vertices, after_vertices, removed):
    """The reported delta is exactly the difference between the two oracle states.

    ``removed``: vertices that existed before and were deleted in the batch.  A
    vertex deleted and re-created in one batch is a new vertex: all its old edges
    are reported deleted and the edges it has afterwards inserted.
    """
    ext = pipeline.vertex_map.external
    to_keys = lambda s, d: set(zip(ext(s).tolist(), ext(d).tolist()))
    touches_removed = lambda keys: {k for k in keys if k[0] in removed or k[1] in removed}
    before, after = set(before_edges), set(after_edges)
    ins = to_keys(delta.inserted_src, delta.inserted_dst)
    upd = to_keys(delta.updated_src, delta.updated_dst)
    assert ins == (after - before) | touches_removed(after)
    assert upd <= (after & before) - touches_removed(after)
    # deleted edges refer to old slots for removed vertices: count them instead of mapping
    assert delta.num_deleted == len(before - after) + len(touches_removed(before & after))
    assert int(delta.vertices_removed.shape[0]) == len(removed)
    added = set(ext(delta.vertices_added).tolist())
    assert added == (after_vertices - before_vertices) | (removed & after_vertices)


def run_stream(name, xp, stream, undirected=False):
    oracle = Oracle(undirected=undirected)
    pipeline = Pipeline(registry.create(name, xp), undirected=undirected)
    for evs in stream:
        before_v, before_e = oracle.vertices, oracle.edges
        oracle.apply_all(evs)
        result = pipeline.apply(to_table(evs))
        vertices, edges = graph_state(pipeline)
        expect = {k: f32(w) for k, w in oracle.edges.items()}
        assert vertices == oracle.vertices
        assert edges == expect
        assert result.counts["vertices"] == len(oracle.vertices)
        assert result.counts["edges"] == len(expect)
        removed = {e[1] for e in evs if e[0] == 4} & before_v
        before_e = {k: f32(w) for k, w in before_e.items()}
        check_delta(pipeline, result.delta, before_e, expect, before_v, oracle.vertices, removed)
        # degrees and batched queries through internal ids
        if oracle.vertices:
            ext = np.array(sorted(oracle.vertices), dtype=np.int64)
            internal = pipeline.vertex_map.lookup(xp.asarray(ext))
            degrees = np.asarray(pipeline.structure.degree(internal).tolist())
            assert degrees.tolist() == [oracle.degree(v) for v in ext.tolist()]
            pairs = list(expect)[:20] + [(u, v) for u in ext[:5].tolist() for v in ext[-5:].tolist()]
            s = pipeline.vertex_map.lookup(xp.asarray([p[0] for p in pairs], dtype=np.int64))
            d = pipeline.vertex_map.lookup(xp.asarray([p[1] for p in pairs], dtype=np.int64))
            got = pipeline.structure.contains(s, d).tolist()
            assert got == [p in expect for p in pairs]
    return pipeline, oracle


@pytest.mark.parametrize("xp", BACKENDS)
@pytest.mark.parametrize("name", STRUCTURES)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stream=batches(max_batches=5, max_id=10, max_size=40), undirected=st.booleans())
def test_pipeline_matches_oracle(name, xp, stream, undirected):
    run_stream(name, xp, stream, undirected)


@pytest.mark.parametrize("xp", BACKENDS)
@pytest.mark.parametrize("name", STRUCTURES)
def test_large_random_stream(name, xp):
    """Thousands of events per batch over sparse int64 ids, vertex deletions and id reuse included."""
    rng = np.random.default_rng(7)
    ids = rng.choice(np.arange(-(2**40), 2**40, 2**28), size=400, replace=False)
    stream = []
    for _ in range(6):
        n = 4000
        op = rng.choice([1, 1, 1, 2, 3, 4], size=n, p=[0.3, 0.3, 0.2, 0.15, 0.03, 0.02])
        src = rng.choice(ids, size=n)
        dst = rng.choice(ids, size=n)
        w = rng.integers(1, 9, size=n).astype(float)
        stream.append([(int(o), int(s), None if o > 2 else int(d), float(x) if o == 1 else None)
                       for o, s, d, x in zip(op, src, dst, w)])
    run_stream(name, xp, stream)


def test_a_batch_too_big_for_memory_is_split(monkeypatch):
    """Out of memory before the structure changes: the batch is halved until it fits; same end state."""
    import vinestream.stream.pipeline.pipeline as pipeline_module
    real = pipeline_module.net_effect

    def small_memory(xp, events, *args, **kwargs):
        if events.size > 300:
            raise MemoryError("simulated: batch too big for the device")
        return real(xp, events, *args, **kwargs)

    monkeypatch.setattr(pipeline_module, "net_effect", small_memory)
    rng = np.random.default_rng(3)
    evs = [(int(o), int(s), None if o > 2 else int(d), None)
           for o, s, d in zip(rng.choice([1, 1, 1, 2, 4], 2000), rng.integers(0, 60, 2000),
                              rng.integers(0, 60, 2000))]
    oracle = Oracle()
    oracle.apply_all(evs)
    pipeline = Pipeline(registry.create("coo", np))
    result = pipeline.apply(to_table(evs))
    assert result.epoch == 1 and result.counts["events"] == 2000 and result.counts["parts"] >= 7
    assert pipeline.max_batch_events <= 300
    assert graph_state(pipeline) == (oracle.vertices, {k: f32(w) for k, w in oracle.edges.items()})


def test_out_of_memory_after_the_structure_changed_is_raised():
    pipeline = Pipeline(registry.create("coo", np))

    def no_memory(batch):
        raise MemoryError("simulated")

    pipeline.structure.insert_edges = no_memory
    pipeline.structure.insert_edges_counted = no_memory       # what the pipeline calls
    with pytest.raises(MemoryError):
        pipeline.apply(to_table([(1, 1, 2, None)]))


@pytest.mark.parametrize("xp", BACKENDS)
@pytest.mark.parametrize("name", STRUCTURES)
def test_the_summary_counts_every_re_added_edge_as_updated_whatever_its_weight(name, xp, tmp_path):
    """DESIGN.md: adding an edge that exists updates its weight, so every such add is one outcome: the summary's
    ``updated`` counts it, its weight set to the event's, a new one or the same (README says so), on every
    structure; new edges are ``inserted``."""
    pipeline = Pipeline(registry.create(name, xp))
    first = pipeline.apply(to_table([(1, 1, 2, 0.5), (1, 3, 4, 0.5)]))
    again = pipeline.apply(to_table([(1, 1, 2, 0.5), (1, 3, 4, 0.25), (1, 5, 6, 1.0)]))
    assert (first.counts["inserted"], first.counts["updated"]) == (2, 0)
    assert (again.counts["inserted"], again.counts["updated"]) == (1, 2)
    sink = ParquetResultsSink(tmp_path, summary_interval_s=0)
    for result in (first, again):
        sink.write(result, invalid=0)
    sink.close()
    summary = pq.read_table(tmp_path / "summary.parquet")
    assert summary.column("updated").to_pylist() == [0, 2]
