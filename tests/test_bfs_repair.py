"""The fused incremental BFS repair (algorithms/bfs_kernels.bfs_repair): run through the host emulation of its
kernels (threads in forward, reverse and shuffled order) it gives networkx's distances, valid parents and the
array program's distances after every batch, reads its counters once per batch when the walk and the relaxation
fit in the rounds it queues, and more often (still exact) when they do not; on a GPU, the same on CuPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import bfs_emulation as emu
from tests.algo_support import Harness, check_bfs, check_bfs_on_graph, event_batches, rmat_edges
from tests.backends import HAS_GPU, cupy
from vinestream.algorithms import bfs_kernels as bk
from vinestream.algorithms.bfs import BFS
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta
from vinestream.structures.delta import BatchDelta, apply_delta
from vinestream.structures.registry import build

needs_gpp = pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation")
FORCE = {"fallback_fraction": 1e9}


def fused_job(sources, order=0, **kw):
    return BFS(np, sources=sources, fused=True, library_bfs=False, launch=emu.HostLauncher(order, seed=7),
               **FORCE, **kw)


@needs_gpp
@pytest.mark.parametrize("order", [0, 1, 2])
@settings(max_examples=25, deadline=None)
@given(event_batches(), st.lists(st.integers(0, 9), min_size=1, max_size=2))
def test_fused_repair_matches_networkx(order, batches, sources):
    """Event streams (vertex events take the array program, edge-only batches the kernels): exact after
    every batch, parents valid, the reached count right (check_bfs)."""
    h = Harness()
    job = fused_job(sources, order)
    array = BFS(np, sources=sources, library_bfs=False, **FORCE)
    job.run_static(h.graph, h.vmap)
    array.run_static(h.graph, h.vmap)
    for events in batches:
        delta = h.apply(events)
        job.update(h.graph, delta, h.vmap)
        array.update(h.graph, delta, h.vmap)
        check_bfs(job, h, sources)
        n = min(job.dist.shape[0], array.dist.shape[0])
        assert (job.dist[:n] == array.dist[:n]).all()


@needs_gpp
@pytest.mark.parametrize("structure", ["csr", "coo"])
def test_fused_repair_takes_batches_that_add_vertices_on_any_structure(structure):
    """A batch that only adds vertices (new ones reached through inserted edges, others left unreached)
    takes the kernels, on a csr structure and, for a batch large against the graph, on a coo one
    (through its whole adjacency); a batch that removes a vertex takes the array program.  Exact
    against networkx after every batch."""
    from tests.algo_support import ADD_EDGE, ADD_VERTEX, DELETE_EDGE, DELETE_VERTEX
    h = Harness(structure=structure)
    job = fused_job([0])
    first = [(ADD_EDGE, a, b, 1.0) for a, b in [(0, 1), (1, 2), (2, 3), (0, 4), (4, 5), (5, 3), (6, 7)]]
    h.apply(first)
    job.run_static(h.graph, h.vmap)
    check_bfs(job, h, [0])
    adds = [
        [(ADD_EDGE, 3, 8, 1.0), (ADD_EDGE, 8, 9, 1.0), (ADD_VERTEX, 10, None, None)],     # reached, unreached
        [(ADD_EDGE, 0, 9, 1.0), (DELETE_EDGE, 0, 1, 1.0), (ADD_EDGE, 11, 2, 1.0)],          # a cut, a new in-edge
        [(ADD_EDGE, 10, 12, 1.0), (ADD_EDGE, 9, 10, 1.0), (ADD_EDGE, 12, 6, 1.0)],          # reaches old ones
    ]
    for events in adds:
        delta = h.apply(events)
        job.update(h.graph, delta, h.vmap)
        assert job.work.get("fused"), (structure, events)
        check_bfs(job, h, [0])
    delta = h.apply([(DELETE_VERTEX, 9, None, None), (ADD_EDGE, 2, 13, 1.0)])
    job.update(h.graph, delta, h.vmap)
    assert not job.work.get("fused")
    check_bfs(job, h, [0])


def test_fused_repair_reads_a_whole_adjacency_only_for_batches_large_against_the_graph():
    """On a structure that is not one CSR the kernels need its whole adjacency (a pass over all edges):
    taken for a batch with at most FUSED_ADJACENCY_PER_CHANGE edges per change, never for a small one."""
    from vinestream.algorithms import bfs as bfs_mod
    g = build("coo", np, *rmat_edges(np.random.default_rng(3), 10, 8), 1 << 10)
    vm = IdentityVertexMap(np)
    job = fused_job([0])
    job.run_static(g, vm)
    for k, fused in [(2, False), (g.num_edges // bfs_mod.FUSED_ADJACENCY_PER_CHANGE + 8, True)]:
        delta = random_delta(np, g, k, seed=k)
        apply_delta(g, delta)
        job.update(g, delta, vm)
        assert bool(job.work.get("fused")) == fused, k
        _check_against_networkx(job, g, 0)


def _rmat_graph(scale=10, ef=6, seed=1):
    s, d = rmat_edges(np.random.default_rng(seed), scale, ef)
    return build("csr", np, s, d, 1 << scale)


def _check_against_networkx(job, g, source):
    check_bfs_on_graph(job, g, [source])


@needs_gpp
@pytest.mark.parametrize("order", [0, 2])
def test_fused_repair_on_rmat_batches_cuts_rescues_and_relaxes(order):
    """R-MAT batches of 0.1-5% of the edges: the kernels cut, rescue and invalidate (asserted through the
    counters), and every batch is exact against networkx and equal to the array program."""
    g = _rmat_graph()
    source = int(np.argmax(np.diff(g.adjacency().offsets)))
    vm = IdentityVertexMap(np)
    job = fused_job([source], order)
    array = BFS(np, sources=[source], library_bfs=False, **FORCE)
    job.run_static(g, vm)
    array.run_static(g, vm)
    seen_invalid = seen_cut = 0
    for b, frac in enumerate([0.001, 0.01, 0.05, 0.01, 0.002, 0.05]):
        delta = random_delta(np, g, max(2, int(frac * g.num_edges)), seed=b + 10 * order)
        apply_delta(g, delta)
        job.update(g, delta, vm)
        array.update(g, delta, vm)
        assert job.work["fused"] and job.work["mode"] == "incremental"
        seen_invalid += job.work["invalidated"]
        seen_cut += job.work["vertices_touched"] > job.work["invalidated"]
        _check_against_networkx(job, g, source)
        assert (job.dist == array.dist[: job.dist.shape[0]]).all()
        # the scratch is back to rest: no flag set, no packed label left behind
        assert not job._repair.flag.any() and (job._repair.key == bk.NONE).all()
    assert seen_invalid > 0 and seen_cut > 0


def _apply(g, job, vm, ins, dele):
    """Apply the edge pairs ``ins`` / ``dele`` to ``g`` as one BatchDelta, update ``job``; its work."""
    e = np.zeros(0, np.int32)
    ins = np.asarray(ins, np.int32).reshape(-1, 2)
    dele = np.asarray(dele, np.int32).reshape(-1, 2)
    d = BatchDelta(1, e, e, ins[:, 0], ins[:, 1], np.ones(ins.shape[0], np.float32), dele[:, 0], dele[:, 1],
                   e, e, np.zeros(0, np.float32))
    apply_delta(g, d)
    job.update(g, d, vm)
    return job.work


@needs_gpp
def test_one_counter_read_per_batch_unless_the_walk_or_the_relaxation_is_long():
    """A path 0 -> 1 -> ... -> 39: deleting 0 -> 1 invalidates a 39-level subtree (the walk needs 10 rounds
    of 4), and the shortcut 0 -> 1 back relaxes 39 rounds: more reads, still exact.  A batch touching
    nothing long reads once."""
    n = 40
    s = np.arange(n - 1)
    g = build("csr", np, s, s + 1, n)
    vm = IdentityVertexMap(np)
    job = fused_job([0])
    job.run_static(g, vm)

    def batch(ins, dele):
        return _apply(g, job, vm, ins, dele)

    w = batch([], [(0, 1)])                                  # everything below 0 is cut off
    assert w["invalidated"] == n - 1 and w["syncs"] > 1 and (job.dist[1:] == -1).all()
    assert job.reached() == 1
    w = batch([(0, 1)], [])                                  # and comes back, one level per round
    assert w["syncs"] > 1 and (job.dist[:n] == np.arange(n)).all() and job.reached() == n
    w = batch([(0, 20)], [])                                 # a shortcut: 19 relax rounds
    assert w["syncs"] > 1 and w["iterations"] >= 19
    _check_against_networkx(job, g, 0)
    w = batch([(0, 37)], [(0, 20)])                          # cut 20..39 (the old tree), 37 re-seeded by 0
    assert w["syncs"] > 1 and w["invalidated"] == 20
    _check_against_networkx(job, g, 0)
    w = batch([(0, 38)], [])                                 # short: 38 and 39 drop by one, one read
    assert w["syncs"] == 1 and job.dist[39] == 2 and job.dist[38] == 1
    w = batch([], [(0, 38)])                                 # cut 38 and 39, re-derived from 37: one read
    assert w["syncs"] == 1 and w["invalidated"] == 2 and job.dist[39] == 3
    _check_against_networkx(job, g, 0)


@needs_gpp
def test_rescue_reads_the_in_edge_log():
    """A cut vertex is rescued by an in-neighbour that only the log's ``extra`` part knows (inserted in an
    earlier batch), and not by one whose snapshot in-edge the log marked dead."""
    # 0 -> 1 -> 3, 0 -> 2 -> 4; later 2 -> 3 inserted; then 1 -> 3 deleted: 3 is rescued by 2
    g = build("csr", np, np.array([0, 1, 0, 2, 0]), np.array([1, 3, 2, 4, 5]), 6)
    vm = IdentityVertexMap(np)
    job = fused_job([0])
    job.run_static(g, vm)

    def batch(ins, dele):
        return _apply(g, job, vm, ins, dele)

    job._in_edge_index(g)                                    # the snapshot is taken now
    batch([(2, 3), (5, 4)], [])
    w = batch([], [(1, 3)])
    assert w["invalidated"] == 0 and job.dist[3] == 2 and job.parent[3] == 2
    batch([], [(2, 4)])                                     # 4 keeps its level through 5 (in extra)
    assert job.dist[4] == 2 and job.parent[4] == 5
    w = batch([], [(5, 4)])                                  # 2 -> 4 is not alive: 4 is unreachable now
    assert job.dist[4] == -1 and w["invalidated"] == 1
    _check_against_networkx(job, g, 0)


@pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")
def test_fused_repair_on_the_gpu_matches_the_array_program():
    """On CuPy: R-MAT batches through the real kernels give the array program's distances and valid parents."""
    xp = cupy
    s, d = rmat_edges(np.random.default_rng(5), 14, 8)
    g = build("csr", xp, xp.asarray(s), xp.asarray(d), 1 << 14)
    gh = build("csr", np, s, d, 1 << 14)
    source = int(np.argmax(np.diff(gh.adjacency().offsets)))
    job = BFS(xp, sources=[source], **FORCE)
    ref = BFS(np, sources=[source], library_bfs=False, **FORCE)
    vm, vmh = IdentityVertexMap(xp), IdentityVertexMap(np)
    job.run_static(g, vm)
    ref.run_static(gh, vmh)
    for b, frac in enumerate([0.0001, 0.001, 0.01, 0.05]):
        delta = random_delta(np, gh, max(2, int(frac * gh.num_edges)), seed=b)
        apply_delta(gh, delta)
        ref.update(gh, delta, vmh)
        dd = delta.to(xp) if hasattr(delta, "to") else _delta_to(xp, delta)
        apply_delta(g, dd)
        job.update(g, dd, vm)
        assert job.work["fused"]
        dist = job.dist.get()
        assert (dist[: ref.dist.shape[0]] == ref.dist).all()
        far = np.nonzero(dist > 0)[0]
        par = job.parent.get()[far]
        assert (dist[par] == dist[far] - 1).all() and gh.contains(par, far.astype(np.int32)).all()
        assert job.reached() == int((ref.dist >= 0).sum())


def _delta_to(xp, delta):
    import dataclasses
    return dataclasses.replace(delta, **{f.name: xp.asarray(getattr(delta, f.name))
                                         for f in dataclasses.fields(delta)
                                         if isinstance(getattr(delta, f.name), np.ndarray)})


class _FirstWriteWins(np.ndarray):
    """A scatter with repeated indices keeps the first write (a GPU keeps any one; NumPy the last)."""

    def __setitem__(self, idx, val):
        if isinstance(idx, np.ndarray) and idx.ndim == 1 and idx.dtype.kind in "iu":
            val = np.asarray(val)
            idx, val = idx[::-1], (val[::-1] if val.ndim else val)
        super().__setitem__(idx, val)


def test_array_relax_rounds_take_the_smallest_offer_whatever_write_wins():
    """The array program's label-correcting round on the device path: offers 2 and 6 reach vertex 3 in
    one round; whichever write a scatter keeps, 3 ends at 2 (the old sort-then-scatter kept 6 here)."""
    import types

    from vinestream.algorithms.bfs import NO_PARENT, relax_rounds
    from vinestream.algorithms.edge_index import expand_rows
    from vinestream.structures.csr_types import csr_from_edges
    fake = types.ModuleType("device_like")                  # `xp is np` is false: the GPU branches
    for name in dir(np):
        setattr(fake, name, getattr(np, name))
    csr = csr_from_edges(np, np.array([0, 0, 1, 2, 3]), np.array([1, 2, 3, 3, 4]), None, 5)
    dist = np.array([0, 1, 5, 9, 10], dtype=np.int32).view(_FirstWriteWins)
    parent = np.array([-1, 0, 0, 2, 3], dtype=np.int32).view(_FirstWriteWins)
    scratch = np.zeros(6, dtype=np.int64).view(_FirstWriteWins)
    best = np.full(5, NO_PARENT, dtype=np.uint64).view(_FirstWriteWins)
    relax_rounds(fake, dist, parent, np.array([2, 1]), lambda f: expand_rows(np, csr, f), scratch, best)
    assert dist.tolist() == [0, 1, 5, 2, 3] and parent[3] == 1 and parent[4] == 3
    assert (np.asarray(best) == NO_PARENT).all()
