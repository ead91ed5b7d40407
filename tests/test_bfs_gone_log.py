"""The host in-edge log's deferred deletions (InEdgeLog.gone: fold_edges appends a batch's deleted keys, rows_host
masks them, _settle_gone takes them out of the snapshot and the logs past GONE_KEYS) and its sorted ``fresh`` log,
under the host repair: exact BFS against networkx on generated edge streams whose deletions stay deferred across
many repairs (no reader that settles them in between), with re-insertions of deleted edges, settles inside the
stream, and the log's rows equal to the graph's in-edges after every batch; a fold that searches no snapshot row."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vinestream.algorithms.in_edge_log as iel
from tests.algo_support import ADD_EDGE, ADD_VERTEX, DELETE_EDGE, Harness, check_bfs
from vinestream.algorithms.bfs import BFS
from vinestream.algorithms.in_edge_log import InEdgeLog
from vinestream.structures.csr_types import csr_from_edges

N = 9
FORCE = {"fallback_fraction": 1e9}
edge_event = st.tuples(st.sampled_from([ADD_EDGE, ADD_EDGE, DELETE_EDGE, DELETE_EDGE, DELETE_EDGE]),
                       st.integers(0, N - 1), st.integers(0, N - 1), st.just(1.0))


def _graph_in_edges(h):
    """The graph's edges as sorted (src, dst) pairs."""
    csr = h.graph.adjacency()
    return sorted(zip(csr.row_ids().tolist(), csr.cols.tolist()))


def _log_in_edges(log, rows):
    """What rows_host reads (it settles nothing), as sorted (src, dst) pairs of the live entries."""
    owner, cols, live = log.rows_host(rows, rows.shape[0])
    live = np.ones(owner.shape[0], dtype=bool) if live is None else live
    return sorted(zip(cols[live].tolist(), rows[owner[live]].tolist()))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, N - 1), st.integers(0, N - 1)).filter(lambda e: e[0] != e[1]),
                min_size=8, max_size=30),
       st.lists(st.lists(edge_event, min_size=1, max_size=10), min_size=2, max_size=10),
       st.lists(st.integers(0, N - 1), min_size=1, max_size=2),
       st.sampled_from([(4096, 2048, 4096), (3, 2048, 4096), (0, 1, 4096), (5, 2, 4096), (4096, 2048, 0),
                        (4096, 3, 2)]))
def test_deferred_deletions_keep_the_repair_exact(first, batches, sources, limits):
    """Every batch after the first is edges only and takes the host repair; distances and parents equal
    networkx's after every batch (check_bfs), the log's rows (rows_host, which settles nothing) are the
    graph's in-edges, and its keys at the end too.  With GONE_KEYS 4096 a deletion stays in ``gone`` across
    repairs; with 0 or 3 the stream settles inside it (both asserted where the stream deletes enough); with
    GONE_SCAN 0 or 2 the reads take their rows' keys out of the snapshot (rows_host's long-read path)."""
    gone_keys, fresh_keys, gone_scan = limits
    mp = pytest.MonkeyPatch()
    mp.setattr(iel, "GONE_KEYS", gone_keys)
    mp.setattr(iel, "GONE_SCAN", gone_scan)       # reads past this many entries take their rows' keys out first
    mp.setattr(iel, "FRESH_KEYS", fresh_keys)
    settled = []
    real_settle = InEdgeLog._settle_gone

    def spy(self):
        if self.gone is not None and self.gone.shape[0]:
            settled.append(int(self.gone.shape[0]))
        return real_settle(self)
    mp.setattr(InEdgeLog, "_settle_gone", spy)
    try:
        h = Harness()
        h.apply([(ADD_VERTEX, v, None, None) for v in range(N)] + [(ADD_EDGE, a, b, 1.0) for a, b in first])
        job = BFS(np, sources=sources, **FORCE)
        job.run_static(h.graph, h.vmap)
        job._in_edge_index(h.graph)                    # the index from the start: every batch folds into it
        rows = np.arange(N)
        deferred = deleted = 0
        for events in batches:
            delta = h.apply(events)
            assert delta.vertices_added.shape[0] == 0 and delta.vertices_removed.shape[0] == 0
            job.update(h.graph, delta, h.vmap)
            assert job.work["mode"] == "incremental"
            check_bfs(job, h, sources)
            if job.in_edges is not None and job.in_edges.snapshot_edges:    # (else the eager fold: no ``gone``)
                gone = set(zip(delta.deleted_src.tolist(), delta.deleted_dst.tolist()))
                deleted += len(gone - set(zip(delta.inserted_src.tolist(), delta.inserted_dst.tolist())))
            if job.in_edges is not None:
                job._flush_backlog(N)                      # a batch that cut nothing left its changes queued
                deferred = max(deferred, int(job.in_edges.gone.shape[0]))
                assert _log_in_edges(job.in_edges, rows) == _graph_in_edges(h)
        if job.in_edges is not None:
            keys = job.in_edges.keys                       # (settles)
            assert sorted(zip((keys & 0xFFFFFFFF).tolist(), (keys >> 32).tolist())) == _graph_in_edges(h)
            assert job.in_edges.gone.shape[0] == 0
        if gone_keys == 4096 and gone_scan == 4096 and deleted:
            assert deferred > 0
        if gone_keys == 0 and deleted:
            assert settled
    finally:
        mp.undo()


def test_a_fold_reads_no_snapshot_row():
    """Deleting one in-edge of a 3,000-edge row and inserting one new edge into it: fold_edges counts the two
    keys, ``gone`` and one search, not the row (the row-scan fold read all 3,000 entries); the snapshot's alive
    flags stay on until the settle, and the rows read mask the deleted edge meanwhile."""
    n = 3001
    src = np.arange(1, n, dtype=np.int64)
    dst = np.zeros(n - 1, dtype=np.int64)                  # in-edges of 0 from every other vertex
    log = InEdgeLog(np, csr_from_edges(np, dst, src, None, n))
    log.take_work()
    log.fold_edges(np.asarray([7], np.int32), np.asarray([0], np.int32), np.asarray([0], np.int32),
                   np.asarray([5], np.int32), bound=n)
    work = log.take_work()
    assert 2 <= work < 100
    assert log.alive.all() and log.gone.tolist() == [7]
    owner, cols, live = log.rows_host(np.asarray([0, 5]), n)
    got = sorted(zip(cols[live].tolist(), owner[live].tolist()))
    assert (7, 0) not in got and (0, 1) in got and len(got) == n - 2 + 1
    log._settle_gone()
    assert not log.alive[:-1].all() and log.gone.shape[0] == 0
    assert log.take_work() >= 1
    owner2, cols2, live2 = log.rows_host(np.asarray([0, 5]), n)
    live2 = np.ones(owner2.shape[0], dtype=bool) if live2 is None else live2
    assert sorted(zip(cols2[live2].tolist(), owner2[live2].tolist())) == got


@pytest.mark.parametrize("gone_scan", [4096, 0])      # 0: every read takes its rows' keys out first
def test_reinserting_an_edge_whose_snapshot_copy_died(monkeypatch, gone_scan):
    """Delete a snapshot edge, settle (its alive flag goes off), insert it again (it joins ``fresh``: the dead
    copy stays dead), delete it again (``gone``), settle: it leaves ``fresh``/``extra`` too, and every step's
    rows and keys are the set's; a read that takes its rows' keys out first leaves such a key in ``gone`` (its
    live copy is the ``fresh`` one)."""
    monkeypatch.setattr(iel, "GONE_SCAN", gone_scan)
    log = InEdgeLog(np, csr_from_edges(np, np.asarray([1, 1, 2]), np.asarray([0, 2, 0]), None, 3))
    live = {(0, 1), (2, 1), (0, 2)}

    def check():
        owner, cols, ok = log.rows_host(np.arange(3), 3)
        ok = np.ones(owner.shape[0], dtype=bool) if ok is None else ok
        assert sorted(zip(cols[ok].tolist(), owner[ok].tolist())) == sorted(live)

    def fold(dels=(), ins=()):
        a = lambda pairs, j: np.asarray([p[j] for p in pairs], dtype=np.int32)
        log.fold_edges(a(dels, 0), a(dels, 1), a(ins, 0), a(ins, 1), bound=3)
        live.difference_update(dels)
        live.update(ins)
        check()
    fold(dels=[(0, 1)])
    log._settle_gone()
    check()
    fold(ins=[(0, 1)])
    assert log.fresh.tolist() == [(1 << 32) | 0]
    fold(dels=[(0, 1)], ins=[(1, 0)])
    fold(ins=[(0, 1)])                                       # back from ``gone``: no new key
    assert log.gone.shape[0] == 0 and log.fresh.tolist() == [1, 1 << 32]
    fold(dels=[(0, 1)])
    log._settle_gone()
    check()
    keys = log.keys.tolist()
    assert sorted(keys) == sorted((d << 32) | s for s, d in live)


def test_a_long_read_takes_its_rows_deletions_out(monkeypatch):
    """A read of more than GONE_SCAN entries (a hub's in-row, bisected as _locate does past SCAN_BUDGET): the
    row's ``gone`` keys that are snapshot edges are taken out (alive off, out of ``gone``) and the read counts a
    few bisection steps for them, not one search of ``gone`` per entry (some 6,000 x 9 with 300 keys there); a
    ``gone`` key of ``fresh`` in the rows read stays masked; other rows' keys stay in ``gone``."""
    monkeypatch.setattr(iel, "SCAN_BUDGET", 0)
    n = 6001
    src = np.arange(1, n, dtype=np.int64)
    dst = np.zeros(n - 1, dtype=np.int64)                  # 6,000 in-edges of 0 ...
    far = np.arange(10, 310, dtype=np.int64)              # ... and 300 edges i -> i + 1 elsewhere
    log = InEdgeLog(np, csr_from_edges(np, np.concatenate((dst, far + 1)), np.concatenate((src, far)), None, n))
    i32 = lambda x: np.asarray(x, dtype=np.int32)
    log.fold_edges(i32([]), i32([]), i32([5000]), i32([3]), bound=n)          # a new edge 5000 -> 3 (fresh)
    log.fold_edges(i32([7, 9, 5000, *far]), i32([0, 0, 3, *(far + 1)]), i32([]), i32([]), bound=n)
    assert log.gone.shape[0] == 303
    log.take_work()
    owner, cols, live = log.rows_host(np.asarray([0, 3]), n)
    work = log.take_work()
    got = sorted(zip(cols[live].tolist(), owner[live].tolist()))
    assert len(got) == n - 1 - 2 and (7, 0) not in got and (9, 0) not in got and (5000, 1) not in got
    assert log.gone.shape[0] == 301 and (0 << 32 | 7) not in log.gone.tolist()      # 0's two keys are out
    assert not log.alive[6] and not log.alive[8] and log.alive[:6].all()
    assert 2 * (n - 1) < work < 2 * (n - 1) + 300          # the row read, a few searches and bisection steps
    keys = log.keys.tolist()                               # (settles the rest)
    assert (0 << 32 | 7) not in keys and (3 << 32 | 5000) not in keys and len(keys) == n - 1 - 2
