"""The host repair (algorithms/bfs.repair_host: NumPy, a CSR structure, a batch with no vertex events) and the
in-edge log's row-scan fold (InEdgeLog.fold_edges / rows_host) it reads: exact against networkx on generated
edge streams (cuts, rescues, lost subtrees, unreachable vertices, several sources), equal to the array program's
distances, work counted; the fold against a Python set of edges, long rows bisected as well as scanned."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vinestream.algorithms.bfs as bfs_mod
import vinestream.algorithms.in_edge_log as iel
from tests.algo_support import ADD_EDGE, ADD_VERTEX, DELETE_EDGE, Harness, check_bfs, check_bfs_on_graph, rmat_edges
from vinestream.algorithms.bfs import BFS
from vinestream.algorithms.in_edge_log import InEdgeLog
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta
from vinestream.structures.csr_types import csr_from_edges
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build

FORCE = {"fallback_fraction": 1e9}
N = 10


def _spy(monkeypatch):
    calls = []
    real = bfs_mod.repair_host

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(bfs_mod, "repair_host", spy)
    return calls


edge_event = st.tuples(st.sampled_from([ADD_EDGE, ADD_EDGE, DELETE_EDGE, DELETE_EDGE]), st.integers(0, N - 1),
                       st.integers(0, N - 1), st.just(1.0))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, N - 1), st.integers(0, N - 1)), max_size=30),
       st.lists(st.lists(edge_event, min_size=1, max_size=12), min_size=1, max_size=8),
       st.lists(st.integers(0, N - 1), min_size=1, max_size=3))
def test_host_repair_matches_networkx_and_the_array_program(first, batches, sources):
    """All vertices exist from the first batch on, so every later batch is edges only and takes the host
    repair (asserted); distances equal networkx's and the array program's after every batch, parents are
    in-neighbours one level closer, the reached count is right (check_bfs)."""
    h = Harness()
    h.apply([(ADD_VERTEX, v, None, None) for v in range(N)] + [(ADD_EDGE, a, b, 1.0) for a, b in first])
    job = BFS(np, sources=sources, **FORCE)
    array = BFS(np, sources=sources, host_repair=False, **FORCE)
    job.run_static(h.graph, h.vmap)
    array.run_static(h.graph, h.vmap)
    repairs = 0
    for events in batches:
        delta = h.apply(events)
        assert delta.vertices_added.shape[0] == 0 and delta.vertices_removed.shape[0] == 0
        before = job.work
        job.update(h.graph, delta, h.vmap)
        array.update(h.graph, delta, h.vmap)
        repairs += job.work is not before and job.work["mode"] == "incremental"
        check_bfs(job, h, sources)
        assert (job.dist == array.dist[: job.dist.shape[0]]).all()
        if job.in_edges is not None:          # the log follows the graph
            csr = h.graph.adjacency()
            want = sorted(((csr.cols.astype(np.int64) << 32) | csr.row_ids()).tolist())
            assert sorted(job._in_edge_index(h.graph).keys.tolist()) == want
    assert repairs == len(batches)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_host_repair_on_rmat_batches(monkeypatch, seed):
    """R-MAT batches of 0.1-3% (deletions of live edges, insertions of new ones) from one and from two
    sources (a part of the graph unreachable): every batch takes the host repair, cuts and invalidates
    (asserted through the counters), equals networkx and the array program; the work counts the index."""
    calls = _spy(monkeypatch)
    s, d = rmat_edges(np.random.default_rng(seed), 10, 4)
    g = build("csr", np, s, d, 1 << 10)
    vm = IdentityVertexMap(np)
    deg = np.diff(g.adjacency().offsets)
    sources = [int(np.argmax(deg))] if seed != 2 else [int(np.argmax(deg)), int(np.argsort(deg)[-7])]
    job = BFS(np, sources=sources, **FORCE)
    array = BFS(np, sources=sources, host_repair=False, **FORCE)
    job.run_static(g, vm)
    array.run_static(g, vm)
    invalidated = seeds = index = 0
    for b, frac in enumerate([0.001, 0.01, 0.03, 0.01, 0.002, 0.02, 0.005, 0.01]):
        delta = random_delta(np, g, max(2, int(frac * g.num_edges)), seed * 100 + b)
        apply_delta(g, delta)
        job.update(g, delta, vm)
        array.update(g, delta, vm)
        w = job.work
        assert w["mode"] == "incremental" and w["edges_touched"] >= w["index_edges"]
        index += w["index_edges"]              # a batch that cuts no tree edge leaves its changes queued
        invalidated += w["invalidated"]
        seeds += w["seeds"]
        assert (job.dist == array.dist).all()
        check_bfs_on_graph(job, g, sources)
    assert len(calls) == 8 and invalidated > 0 and seeds > 0 and index > g.num_edges   # the build, then folds


def _keys(pairs):
    return sorted((d << 32) | s for s, d in pairs)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("budget", [16384, 0])       # rows scanned, or every row past a few entries bisected
@pytest.mark.parametrize("gone", [4096, 0, 7])       # deletions settled at the next read, at once, every few
def test_fold_edges_follows_a_set_of_edges(monkeypatch, seed, budget, gone):
    """Batches of deletions of live edges and insertions of absent ones (often edges deleted before, and
    edges of long rows), folded by fold_edges (deletions deferred in ``gone`` up to GONE_KEYS keys); the rows
    read by rows_host (with ``gone`` not yet settled) and neighbours, and the keys, equal the set's after
    every batch; a batch queued several at a time through fold() as well."""
    monkeypatch.setattr(iel, "SCAN_BUDGET", budget)
    monkeypatch.setattr(iel, "GONE_KEYS", gone)
    monkeypatch.setattr(iel, "SCAN_ROW", 2)
    rng = np.random.default_rng(seed)
    n = 40
    live = {(int(a), int(b)) for a, b in rng.integers(0, n, size=(300, 2)) if a != b}
    live |= {(int(a), 0) for a in range(1, n)}                   # a long row (in-edges of 0)
    s, d = np.asarray(sorted(live)).T
    log = InEdgeLog(np, csr_from_edges(np, d, s, None, n))
    log.take_work()
    pool = sorted(live)
    for step in range(25):
        dels = sorted({e for e in live if rng.random() < 0.08})
        ins = {(int(a), int(b)) for a, b in rng.integers(0, n, size=(12, 2)) if a != b}
        ins |= {e for e in pool if rng.random() < 0.03}             # some deleted edges come back
        ins = sorted(ins - live)
        live = (live - set(dels)) | set(ins)

        def arr(pairs, j):
            return np.asarray([p[j] for p in pairs], dtype=np.int32)
        if step % 5 == 4:                   # the eager path (several batches' keys at once: here two)
            none = np.zeros(0, dtype=np.int64)
            log.fold([np.asarray(_keys(dels), dtype=np.int64), none], [none, np.asarray(_keys(ins), dtype=np.int64)])
        else:
            log.fold_edges(arr(dels, 0), arr(dels, 1), arr(ins, 0), arr(ins, 1), bound=n)
        assert log.take_work() >= len(dels) + len(ins)
        rows = np.arange(n)
        owner, cols, ok = log.rows_host(rows)
        ok = np.ones(owner.shape[0], dtype=bool) if ok is None else ok
        assert sorted((int(c), int(rows[o])) for o, c in zip(owner[ok], cols[ok])) == sorted(live)
        owner, cols = log.neighbours(rows)
        assert sorted((int(c), int(rows[o])) for o, c in zip(owner, cols)) == sorted(live)
        assert log.keys.tolist() == _keys(live)
        assert log.recent_dead.shape[0] == 0 and not log.mixed


@settings(max_examples=120, deadline=None)
@given(st.integers(2, 24).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=4 * n),
    st.dictionaries(st.integers(0, n - 1), st.integers(0, 12), min_size=1, max_size=6))))
def test_relax_buckets_and_rounds_match_dijkstra_from_seeds_at_any_level(case):
    """relax_buckets_host (level order) and relax_rounds_csr (label-correcting rounds) from seeds at
    arbitrary labels (all other vertices unreached) give each vertex the smallest ``label(seed) + hops``
    (networkx Dijkstra from a root tied to each seed by its label), a parent one level closer along an
    edge for every vertex they lowered, the count of vertices reached anew; the level order lowers and
    expands each vertex once; with a budget below the edges it needs, each stops with a projection past
    the edges it read."""
    import networkx as nx
    n, pairs, seeds = case
    pairs = sorted({(a, b) for a, b in pairs if a != b})
    s = np.asarray([a for a, _ in pairs], dtype=np.int32)
    d = np.asarray([b for _, b in pairs], dtype=np.int32)
    csr = csr_from_edges(np, s, d, None, n)
    G = nx.DiGraph()
    G.add_nodes_from(range(n + 1))
    G.add_edges_from(pairs, weight=1)
    G.add_edges_from(((n, v) for v in seeds), weight=0)
    for v, label in seeds.items():
        G[n][v]["weight"] = label
    want = nx.single_source_dijkstra_path_length(G, n)
    dist = np.full(n, -1, dtype=np.int32)
    parent = np.full(n, -1, dtype=np.int32)
    v = np.asarray(sorted(seeds), dtype=np.intp)
    dist[v] = [seeds[x] for x in v.tolist()]
    scratch = np.empty(n + 1, dtype=np.int64)
    for name in ("buckets", "rounds"):
        def relax(d_, p_, budget=None, name=name):
            if name == "buckets":
                return bfs_mod.relax_buckets_host(d_, p_, v, csr.offsets, csr.offsets[1:], csr.cols, True, budget)
            return bfs_mod.relax_rounds_csr(d_, p_, v, csr.offsets, csr.offsets[1:], csr.cols, scratch, True, budget)
        out_d, out_p = dist.copy(), parent.copy()
        _levels, edges, touched, newly, projected = relax(out_d, out_p)
        assert {x: int(out_d[x]) for x in range(n) if out_d[x] >= 0} == {x: w for x, w in want.items() if x < n}
        lowered = np.flatnonzero(out_p >= 0)
        assert all((int(out_p[x]), int(x)) in set(pairs) and out_d[out_p[x]] == out_d[x] - 1 for x in lowered)
        assert set(np.flatnonzero(out_d != dist).tolist()) == set(lowered.tolist())   # only the lowered have parents
        assert newly == int(np.count_nonzero((dist < 0) & (out_d >= 0)))
        assert projected == edges                                   # done: no budget
        if name == "buckets":                                       # each vertex lowered and expanded once
            assert touched == lowered.shape[0] and edges <= csr.cols.shape[0]
        if edges > 1:                         # stopped past half its edges: projected beyond what it read
            budget = edges // 2
            _, read, _, _, cut = relax(dist.copy(), parent.copy(), budget)
            assert budget < read <= edges and cut > read


def _budgeted(job, edges):
    """Fix the job's measured costs so that its repair budget is ``edges`` traversal edges."""
    job._static_seconds = [1.0]
    job._edge_seconds = [1.0 / edges]


def test_a_repair_past_its_budget_recomputes_and_counts_what_it_read():
    """A repair that reads more than its budget (one static run's time in edges, here fixed) stops and
    recomputes: exact, mode static, the aborted repair's edges and the index work counted on top of the
    traversal; the next batches of a similar size skip the repair while the projection is hopeless, for
    RETRY_AFTER batches, then twice as many after a hopeless retry; a batch that fits the budget repairs."""
    s, d = rmat_edges(np.random.default_rng(5), 11, 8)
    keep = s != d
    g = build("csr", np, s[keep], d[keep], 1 << 11)
    vm = IdentityVertexMap(np)
    source = int(np.argmax(np.diff(g.adjacency().offsets)))
    job = BFS(np, sources=[source])
    job.run_static(g, vm)
    k = max(2, g.num_edges // 100)
    wait = bfs_mod.RETRY_AFTER
    want = ["aborted"] + ["skipped"] * wait + ["aborted"] + ["skipped"] * (2 * wait) + ["aborted"]
    modes = []
    for b in range(len(want)):
        delta = random_delta(np, g, k, 700 + b)
        apply_delta(g, delta)
        _budgeted(job, 1)                         # nothing fits: a try stops at once
        tries = [list(t) for t in job._tries]
        job.update(g, delta, vm)
        w = job.work
        tried = len(job._tries) > len(tries) or [t[:2] for t in job._tries] != [t[:2] for t in tries]
        modes.append(("aborted" if "aborted_repair_edges" in w else w["mode"]) if tried else "skipped")
        if "aborted_repair_edges" in w:
            assert w["mode"] == "static" and w["aborted_repair_edges"] > 1
            assert w["edges_touched"] == w["traversal_edges"] + w["aborted_repair_edges"] + w["index_edges"]
        check_bfs_on_graph(job, g, [source])
    assert modes == want
    delta = random_delta(np, g, k, 800)
    apply_delta(g, delta)
    _budgeted(job, 10 * g.num_edges)
    job._tries = []
    job.update(g, delta, vm)
    assert job.work["mode"] == "incremental"
    check_bfs_on_graph(job, g, [source])
