"""The undirected delta of a directed batch (``triangles.undirected_delta``): the one-read array program
against its reference (boolean masks, ``undirected_delta_reference``) and a set computation, on NumPy and
(where there is one) the GPU; its reads counted."""
import numpy as np
import pytest
from hypothesis import given, settings

from tests.algo_support import ADD_EDGE, DELETE_EDGE, Harness, event_batches
from tests.backends import HAS_GPU, cupy
from vinestream.algorithms.triangles import _both_orientations, undirected_delta, undirected_delta_reference
from vinestream.structures.backend import count_transfers, to_numpy

XPS = [np] + ([cupy] if HAS_GPU else [])


def _undirected(edges):
    return {(min(a, b), max(a, b)) for a, b in edges if a != b}


def _keys(pairs):
    return sorted((a << 32) | b for a, b in pairs)


def check_delta(h, before, delta):
    """Both forms equal, and equal what the undirected edge sets say: removed = before - between, added =
    after - between, ``between`` the graph after the deletions (the directed edges in both; no vertex
    deletions here), as the job applies them (an edge deleted one way and added the other is in both)."""
    xp = h.xp
    got = undirected_delta(xp, h.graph, delta)
    ref = undirected_delta_reference(xp, h.graph, delta)
    ids = h.vmap.to_int
    before_dir = before[0]
    after = {(ids[a], ids[b]) for a, b in h.oracle.edges}
    between, before, after = _undirected(before_dir & after), _undirected(before_dir), _undirected(after)
    for g, r, want in zip(got, ref, (before - between, after - between)):
        g, r = to_numpy(g), to_numpy(r)
        assert g.dtype == np.int64 and np.array_equal(g, r)
        assert g.tolist() == _keys(want)


@pytest.mark.parametrize("xp", XPS)
@pytest.mark.parametrize("structure", ["csr", "coo", "graphvine"])
@settings(max_examples=30, deadline=None)
@given(batches=event_batches(max_id=7, max_events=20))
def test_matches_reference_and_sets(xp, structure, batches):
    h = Harness(xp, structure)
    for events in batches:
        ids = dict(h.vmap.to_int)
        before = ({(ids[a], ids[b]) for a, b in h.oracle.edges}, None)
        delta = h.apply(events)
        # slots are reused only across vertex deletions; ids of edges that survive keep their slot
        if to_numpy(delta.vertices_removed).shape[0]:
            continue
        check_delta(h, before, delta)


@pytest.mark.parametrize("xp", XPS)
def test_reverse_edges_duplicates_and_loops(xp):
    """u->v deleted while v->u stays: no change; both directions added at once: one key; a self-loop: none."""
    h = Harness(xp)
    h.apply([(ADD_EDGE, 1, 2, 1.0), (ADD_EDGE, 2, 1, 1.0), (ADD_EDGE, 2, 3, 1.0), (ADD_EDGE, 5, 6, 1.0)])
    steps = [[(DELETE_EDGE, 1, 2, None)],
             [(DELETE_EDGE, 2, 1, None), (ADD_EDGE, 4, 5, 1.0), (ADD_EDGE, 5, 4, 1.0), (ADD_EDGE, 4, 4, 1.0)],
             [(DELETE_EDGE, 5, 6, None), (ADD_EDGE, 6, 5, 1.0), (ADD_EDGE, 7, 1, 1.0), (ADD_EDGE, 1, 7, 1.0)],
             [(DELETE_EDGE, 2, 3, None), (DELETE_EDGE, 4, 5, None), (DELETE_EDGE, 5, 4, None)]]
    for events in steps:
        ids = dict(h.vmap.to_int)
        check_delta(h, ({(ids[a], ids[b]) for a, b in h.oracle.edges}, None), h.apply(events))


def test_one_read_besides_the_structures():
    """The sizes of both key sets in one read; the structure's ``contains`` reads what it reads."""
    rng = np.random.default_rng(4)
    with count_transfers() as c:
        h = Harness(np, "coo")
        h.apply([(ADD_EDGE, int(a), int(b), 1.0) for a, b in rng.integers(0, 60, (400, 2))])
        delta = h.apply([(DELETE_EDGE, a, b, None) for a, b in list(h.oracle.edges)[:40]]
                        + [(ADD_EDGE, int(a), int(b), 1.0) for a, b in rng.integers(0, 60, (60, 2))])
        contains, inside = h.graph.contains, [0]

        def counted(src, dst):
            mark = c.mark()
            out = contains(src, dst)
            inside[0] += c.since(mark)
            return out
        h.graph.contains = counted
        mark = c.mark()
        removed, added = undirected_delta(np, h.graph, delta)
        # one read, besides its three sorts (the inserted keys, then each side's keys), each a wait for the
        # device on CuPy, which the counter counts too
        assert c.since(mark) - inside[0] <= 1 + 3
        assert removed.shape[0] > 0 and added.shape[0] > 0
        mark, inside[0] = c.mark(), 0
        undirected_delta_reference(np, h.graph, delta)
        assert c.since(mark) - inside[0] >= 5                  # what the masks cost


@pytest.mark.parametrize("xp", XPS)
def test_both_orientations(xp):
    und = xp.asarray(np.array([(1 << 32) | 5, (2 << 32) | 3, (2 << 32) | 9], dtype=np.int64))
    got = to_numpy(_both_orientations(xp, und)).tolist()
    assert got == sorted([(1 << 32) | 5, (5 << 32) | 1, (2 << 32) | 3, (3 << 32) | 2, (2 << 32) | 9, (9 << 32) | 2])
    assert _both_orientations(xp, und[:0]).shape[0] == 0
