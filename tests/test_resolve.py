"""The net-effect resolver against the one-event-at-a-time oracle."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.backends import BACKENDS
from tests.oracle import Oracle
from tests.strategies import batches, f32, to_table
from vinestream.stream.batching.resolve import EventArrays, net_effect


def apply_net_effect(state: Oracle, net) -> Oracle:
    """Apply a NetEffect to a copy of ``state`` in the pipeline's phase order, with plain dict ops."""
    g = state.copy()
    for v in net.deleted_vertices.tolist():
        g._delete_vertex(v)
    for v in net.created_vertices.tolist():
        g._add_vertex(v)
    for u, v in zip(net.delete_src.tolist(), net.delete_dst.tolist()):
        g._delete_edge(u, v)
    for u, v, w in zip(net.insert_src.tolist(), net.insert_dst.tolist(), net.insert_weight.tolist()):
        assert u in g.out and v in g.out, "insert names a vertex that does not exist"
        g._add_edge(u, v, w)
    return g


def check_stream(stream, undirected, keep_self_loops, xp=np):
    oracle = Oracle(undirected=undirected, keep_self_loops=keep_self_loops)
    state = oracle.copy()
    for evs in stream:
        before = oracle.copy()
        oracle.apply_all(evs)
        arrays = EventArrays.from_table(xp, to_table(evs))
        known = xp.asarray(sorted(before.vertices), dtype=np.int64)
        net = net_effect(xp, arrays, lambda ids, known=known: xp.isin(ids, known),
                         undirected=undirected, keep_self_loops=keep_self_loops)
        # insert and delete sets are disjoint and free of repeated keys
        ins = set(zip(net.insert_src.tolist(), net.insert_dst.tolist()))
        dels = set(zip(net.delete_src.tolist(), net.delete_dst.tolist()))
        assert len(ins) == net.insert_src.shape[0] and len(dels) == net.delete_src.shape[0]
        assert not ins & dels
        assert set(net.deleted_vertices.tolist()) <= before.vertices
        assert net.self_loops == (oracle.self_loops_dropped - before.self_loops_dropped)
        state = apply_net_effect(state, net)
        assert state.vertices == oracle.vertices
        assert state.edges == {k: f32(w) for k, w in oracle.edges.items()}


@pytest.mark.parametrize("xp", BACKENDS)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stream=batches(), undirected=st.booleans(), keep_self_loops=st.booleans())
def test_net_effect_equals_one_at_a_time(xp, stream, undirected, keep_self_loops):
    check_stream(stream, undirected, keep_self_loops, xp)


@pytest.mark.parametrize("stream", [
    # delete a vertex then reuse its id in the same batch
    [[(1, 1, 2, 1.0)], [(4, 1, None, None), (1, 1, 3, 2.0), (1, 2, 1, 5.0)]],
    # insert, delete, insert one key: the last insert wins with its weight
    [[(1, 1, 2, 1.0), (2, 1, 2, None), (1, 1, 2, 7.0)]],
    # an insert cancelled by deleting one endpoint still created the other
    [[(1, 5, 6, 1.0), (4, 6, None, None)]],
    # a dropped self-loop creates nothing
    [[(1, 9, 9, 1.0)]],
    # deleting an absent edge and an absent vertex do nothing
    [[(2, 1, 2, None), (4, 7, None, None)]],
])
def test_named_cases(stream):
    for undirected in (False, True):
        check_stream(stream, undirected, keep_self_loops=False)
