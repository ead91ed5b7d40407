"""GraphVine on CuPy: the fused kernels (fused=True) against the array program (fused=False).

Both run on the device from the same batches; after every batch the whole state
(dictionary, sentinels, pool, links, queue contents and counters) must be equal,
as must masks, queries, adjacency, memory counters and the tree invariants.
Run on a GPU box: ``VINESTREAM_BACKEND=gpu python3 -m pytest tests/test_graphvine_fused_gpu.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.backends import HAS_GPU, cupy
from tests.test_graphvine import assert_same_state, check_device_queue, check_invariants, phase_batches
from vinestream.structures import backend
from vinestream.structures import graphvine_kernels as gk
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

H = backend.to_numpy


def _cupy_or_skip():
    if not HAS_GPU:
        pytest.skip("needs CuPy and a CUDA device")
    return cupy


def _pair(cp, **opts):
    fused = create("graphvine", cp, **opts)
    ref = create("graphvine", cp, fused=False, **opts)
    assert fused.fused and not ref.fused
    return fused, ref


@pytest.mark.gpu
@pytest.mark.parametrize("opts", [{}, {"block_size": 1},
                                  {"block_size": 4, "min_pool_blocks": 1, "grow_min_entries": 0, "headroom": 1.0},
                                  {"block_size": 33}, {"block_sizing": "paper"},
                                  {"min_block_size": 1, "max_block_size": 64, "target_blocks": 2,
                                   "min_pool_blocks": 1, "grow_min_entries": 0}])
@pytest.mark.parametrize("keyside", [False, True], ids=["rows", "keys"])
def test_fused_matches_array_program_on_random_batches(opts, keyside):
    cp = _cupy_or_skip()
    rng = np.random.default_rng(11)
    fused, ref = _pair(cp, keyside=keyside, keyside_small=keyside, graphs=keyside, **opts)
    nv = 3000
    deepest = 0
    for step in range(14):
        n = int(rng.choice([1, 7, 500, 20000]))
        # skewed sources (deep trees for hubs), repeated keys, unsorted raw order in some batches
        s = (rng.zipf(1.5, n) % nv).astype(np.int32)
        d = rng.integers(0, nv, n).astype(np.int32)
        w = rng.random(n).astype(np.float32)
        op = ["ins", "ins", "del", "ins", "delv", "ins", "del"][step % 7]
        if op == "delv":
            ids = cp.asarray(rng.integers(0, nv, 40).astype(np.int32))
            (fs, fd), (rs, rd) = fused.delete_vertices(ids), ref.delete_vertices(ids)
            assert sorted(zip(H(fs).tolist(), H(fd).tolist())) == sorted(zip(H(rs).tolist(), H(rd).tolist()))
        else:
            if op == "del" and ref.num_edges:
                csr = ref.adjacency()
                rows, cols = H(csr.row_ids()), H(csr.cols)
                pick = rng.choice(len(cols), min(len(cols), n), replace=False)
                s = np.concatenate([s[: n // 2], rows[pick]]).astype(np.int32)
                d = np.concatenate([d[: n // 2], cols[pick]]).astype(np.int32)
            b = CSRBatch.from_edges(cp, cp.asarray(s), cp.asarray(d), cp.asarray(w[: len(s)]) if op == "ins" else None)
            fn = "insert_edges" if op == "ins" else "delete_edges"
            mf, mr = getattr(fused, fn)(b), getattr(ref, fn)(b)
            assert cp.array_equal(mf, mr)
        assert_same_state(fused, ref)
        check_device_queue(fused)
        assert fused.memory() == ref.memory()
        deepest = max(deepest, int(H(fused.num_blocks).max()) if fused.capacity else 0)
    check_invariants(fused)
    assert fused.one_sync["batches"] >= 4, fused.one_sync       # small batches took the one-sync path
    if opts.get("block_size", 99) <= 4:
        assert deepest > 100, "hub trees several levels deep were exercised"
    if "max_block_size" in opts:
        assert fused.stats["rehomed"] > 0 and len(fused.chunk_first) > len(fused.class_sizes)
    qs = cp.asarray(rng.integers(-2, nv + 5, 30000))
    qd = cp.asarray(rng.integers(-2, nv + 5, 30000))
    assert cp.array_equal(fused.contains(qs, qd), ref.contains(qs, qd))
    assert np.array_equal(H(fused.edge_weights(qs, qd)), H(ref.edge_weights(qs, qd)), equal_nan=True)
    rows = cp.asarray(rng.integers(-1, nv + 3, 500))
    for r in (rows, None):
        a, b = fused.adjacency(r), ref.adjacency(r)
        assert cp.array_equal(a.offsets, b.offsets) and cp.array_equal(a.cols, b.cols)
        assert cp.array_equal(a.weights, b.weights)
    assert cp.array_equal(fused.degree(rows), ref.degree(rows))
    assert cp.array_equal(fused.contains(qs.astype(cp.int32), qd.astype(cp.int32)), ref.contains(qs, qd))
    ks = cp.asarray(rng.integers(0, 5, 400))
    vs = cp.asarray(rng.integers(0, nv, 400))
    has = H(fused.num_blocks)[H(vs)] > H(ks)
    lf, lr = H(fused.locate_blocks(vs, ks)), H(ref.locate_blocks(vs, ks))
    assert np.array_equal(lf[has], lr[has])


@pytest.mark.gpu
def test_fused_insert_rejects_negative_ids_and_handles_raw_batches():
    cp = _cupy_or_skip()
    fused, ref = _pair(cp, block_size=2)
    for g in (fused, ref):
        g.insert_edges(CSRBatch.from_edges(cp, cp.asarray([0, 1]), cp.asarray([1, 2])))
    bad = CSRBatch(rows=cp.asarray([0], dtype=cp.int32), offsets=cp.asarray([0, 1]),
                   cols=cp.asarray([-3], dtype=cp.int32), weights=None)
    for g in (fused, ref):
        with pytest.raises(ValueError):
            g.insert_edges(bad)
    # unsorted columns and a repeated key within a row: last weight wins, first occurrence is new
    raw = CSRBatch(rows=cp.asarray([0, 5], dtype=cp.int32), offsets=cp.asarray([0, 4, 6]),
                   cols=cp.asarray([9, 1, 9, 3, 0, 0], dtype=cp.int32),
                   weights=cp.asarray([1, 2, 3, 4, 5, 6], dtype=cp.float32))
    mf, mr = fused.insert_edges(raw), ref.insert_edges(raw)
    assert H(mf).tolist() == H(mr).tolist() == [True, False, False, True, True, False]
    assert_same_state(fused, ref)
    for g in (fused, ref):
        g.delete_edges(raw)
    assert_same_state(fused, ref)
    check_invariants(fused)


@pytest.mark.gpu
@pytest.mark.parametrize("keyside, shift, tile", [(False, "tiles", None), (True, "staged", None), (True, "tiles", None),
                                                  (True, "tiles", 32)],
                         ids=["rows", "keys-staged", "keys-one-pass", "keys-one-pass-tiles-of-32"])
def test_fused_large_batch_on_rmat(keyside, shift, tile, monkeypatch):
    """Scale 16 R-MAT: a bulk load then 1e4-edge insert/delete rounds, fused vs array program; the large
    batches search from the rows' live entries or (``keyside``) from the keys, and move the rows' changed
    suffixes staged or in one pass over tiles taken in dependency order (tiles of 32 entries: thousands of
    tiles in flight, hub rows' moves crossing many of them, so that a tile writing before the tiles it
    overwrites have read would show as a different state)."""
    cp = _cupy_or_skip()
    from vinestream.stream.bench.structures import rmat_edges
    if tile:
        monkeypatch.setattr(gk, "SHIFT_TILE", tile)
    src, dst = rmat_edges(cp, 16, 16, seed=3)
    keep = src != dst
    src, dst = src[keep].astype(cp.int32), dst[keep].astype(cp.int32)
    fused, ref = _pair(cp, keyside=keyside, shift=shift)
    launched, launch = [], gk.launcher
    monkeypatch.setattr(gk, "launcher", lambda xp, name, n, args: (launched.append(name), launch(xp, name, n, args)))
    m = int(src.shape[0])
    init = m - 40000
    for g in (fused, ref):
        g.insert_edges(CSRBatch.from_edges(cp, src[:init], dst[:init]))
    for lo in range(init, m, 10000):
        b = CSRBatch.from_edges(cp, src[lo:lo + 10000], dst[lo:lo + 10000])
        assert cp.array_equal(fused.insert_edges(b), ref.insert_edges(b))
        # 12,000 edges (some deleted by the round before): past the one-sync path's keys, so the large path
        half = CSRBatch.from_edges(cp, src[lo - 22000:lo - 10000], dst[lo - 22000:lo - 10000])
        assert cp.array_equal(fused.delete_edges(half), ref.delete_edges(half))
        assert_same_state(fused, ref)
    one_pass = {"gv_insert_shift", "gv_delete_shift"}
    assert (one_pass <= set(launched)) == (keyside and shift == "tiles")
    assert ("gv_stage" in launched) == (keyside and shift == "staged")
    assert fused.memory() == ref.memory()
    # queries (gv_query, a binary search of the sorted rows) against the array program's scan:
    # live edges, deleted ones, random pairs, both index widths
    qs = cp.concatenate([src[init - 30000:], cp.asarray(np.random.default_rng(4).integers(0, 1 << 16, 20000),
                                                        dtype=cp.int32)])
    qd = cp.concatenate([dst[init - 30000:], cp.asarray(np.random.default_rng(5).integers(0, 1 << 16, 20000),
                                                        dtype=cp.int32)])
    exp, exp_w = ref.contains(qs, qd), ref.edge_weights(qs, qd)
    assert int(exp.sum()) > 20000 and int((~exp).sum()) > 10000
    for a, b in ((qs, qd), (qs.astype(cp.int64), qd.astype(cp.int64))):
        assert cp.array_equal(fused.contains(a, b), exp)
        assert np.array_equal(H(fused.edge_weights(a, b)), H(exp_w), equal_nan=True)


@pytest.mark.gpu
@pytest.mark.parametrize("opts", [{}, {"block_size": 4, "min_pool_blocks": 1, "grow_min_entries": 0, "headroom": 1.0}])
@pytest.mark.parametrize("keyside_small", [False, True], ids=["rows", "keys"])
def test_graph_path_matches_array_program(opts, keyside_small):
    """Small batches through the one-sync path as captured CUDA graphs (fixed buffers, the batch's size
    and arrays as device parameters) against the same path launched kernel by kernel and the array
    program: masks and the whole state after every batch; the graphs were captured and replayed."""
    cp = _cupy_or_skip()
    rng = np.random.default_rng(5)
    graph = create("graphvine", cp, graphs=True, keyside_small=keyside_small, **opts)
    plain = create("graphvine", cp, graphs=False, keyside_small=keyside_small, **opts)
    ref = create("graphvine", cp, fused=False, **opts)
    nv = 5000
    s = (rng.zipf(1.5, 64000) % nv).astype(np.int32)
    d = rng.integers(0, nv, 64000).astype(np.int32)
    for g in (graph, plain, ref):
        g.insert_edges(CSRBatch.from_edges(cp, cp.asarray(s[:40000]), cp.asarray(d[:40000])))
    for step in range(24):
        n = int(rng.choice([1, 30, 900, 4000, 7000, gk.BLOCK_KEYS]))      # up to the one-block plans' bound
        lo = 40000 + (step * 811) % 15000
        if step % 3 == 2:                        # deletes: present edges and absent ones
            csr = ref.adjacency()
            rows, cols = H(csr.row_ids()), H(csr.cols)
            pick = rng.choice(len(cols), min(len(cols), n), replace=False)
            bs = np.concatenate([rows[pick], s[lo:lo + n // 4]]).astype(np.int32)
            bd = np.concatenate([cols[pick], d[lo:lo + n // 4]]).astype(np.int32)
            b = CSRBatch.from_edges(cp, cp.asarray(bs), cp.asarray(bd))
            masks = [g.delete_edges(b) for g in (graph, plain, ref)]
        else:
            w = cp.asarray(rng.random(n).astype(np.float32))
            b = CSRBatch.from_edges(cp, cp.asarray(s[lo:lo + n]), cp.asarray(d[lo:lo + n]), w)
            masks = [g.insert_edges(b) for g in (graph, plain, ref)]
        assert cp.array_equal(masks[0], masks[2]) and cp.array_equal(masks[1], masks[2])
        assert_same_state(graph, ref)
        assert_same_state(plain, ref)
        check_device_queue(graph)
    check_invariants(graph)
    assert graph.one_sync["graphs_captured"] >= 2 and "graph_failed" not in graph.one_sync, graph.one_sync
    assert graph.one_sync["batches"] >= 20 and plain.one_sync["graphs_captured"] == 0


@pytest.mark.gpu
@pytest.mark.parametrize("opts", [{}, {"block_size": 4, "min_pool_blocks": 1, "grow_min_entries": 0, "headroom": 1.0},
                                  {"min_block_size": 1, "max_block_size": 64, "target_blocks": 2, "headroom": 3.0}],
                         ids=["classes", "one-size-growing-pool", "small-classes-rehoming"])
@pytest.mark.parametrize("keyside_small", [False, True], ids=["rows", "keys"])
def test_combined_edge_phases_match_array_program(opts, keyside_small):
    """Both edge phases of a batch behind one read (``edge_phases_counted``: the delete's CUDA graph and the
    insert's queued back to back, one read of both io buffers) against the array program's delete then
    insert on the same batches: masks, counts and the whole state after every batch.  Hub rows dropped
    (the delete re-homes, the insert stops on the device and runs after), a workspace too small (the delete
    stops and runs again), batches of 30 to 3,000 edges; the one-read path taken and its graphs replayed."""
    cp = _cupy_or_skip()
    rng = np.random.default_rng(9)
    graph = create("graphvine", cp, graphs=True, keyside_small=keyside_small, **opts)
    ref = create("graphvine", cp, fused=False, **opts)
    assert graph.combined_edge_phases and not ref.combined_edge_phases
    nv = 5000
    s = (rng.zipf(1.5, 40000) % nv).astype(np.int32)
    d = rng.integers(0, nv, 40000).astype(np.int32)
    for g in (graph, ref):
        g.insert_edges(CSRBatch.from_edges(cp, cp.asarray(s), cp.asarray(d)))
    for step in range(22):
        n = [30, 900, 3000][step % 3]
        ins, dele = phase_batches(cp, rng, ref, nv, n, max(n // 9, 1), hub_drop=step % 5 == 3)
        if step == 12:                              # rows past the workspace: the delete stops, runs again
            graph._ws, graph._ws_want = None, (1, 2)
        imask, n_new, dmask, n_gone = graph.edge_phases_counted(ins, dele)
        dref = ref.delete_edges(dele)
        iref = ref.insert_edges(ins)
        assert cp.array_equal(dmask, dref) and cp.array_equal(imask, iref), step
        assert n_gone == int(dref.sum()) and n_new == int(iref.sum()), step
        assert_same_state(graph, ref)
        check_device_queue(graph)
    check_invariants(graph)
    assert graph.combined_phases["one_read"] >= 18, graph.combined_phases     # the first batch loads the kernels
    assert "graph_failed" not in graph.one_sync and graph.one_sync["graphs_captured"] >= 2, graph.one_sync
    assert graph.one_sync["workspace_grown"] >= 1, graph.one_sync
    if "headroom" in opts and "block_size" not in opts:
        assert graph.combined_phases["insert_after"] >= 1 and graph.stats["rehomed"] >= 1


@pytest.mark.gpu
@pytest.mark.parametrize("undirected", [False, True])
def test_pipeline_with_combined_edge_phases_matches_array_program(undirected):
    """The pipeline on graphvine's fused path (resolve's kernels, the vertex kernel on int32 ids, both edge
    phases in one read) against the pipeline on its array program: the same deltas batch after batch (events
    with churn, vertex deletions and re-creations) and the same graph."""
    cp = _cupy_or_skip()
    from tests.test_resolve_kernels_gpu import _batch, _same
    from vinestream.stream.pipeline import Pipeline
    rng = np.random.default_rng(6)
    ids = rng.choice(np.arange(0, 2**36, 2**12), 3000, replace=False)
    fused = Pipeline(create("graphvine", cp), undirected=undirected)
    plain = Pipeline(create("graphvine", cp, fused=False), undirected=undirected, small_batch_kernels=False)
    assert fused.structure.combined_edge_phases and not plain.structure.combined_edge_phases
    first = _batch(rng, 20_000, ids, vertex_ops=0.0)
    fused.apply(first)
    plain.apply(first)
    for step in range(30):
        table = _batch(rng, int(rng.choice([10, 200, 1000, 4000])), ids)
        a, b = fused.apply(table), plain.apply(table)
        _same(b.delta, a.delta, f"delta, batch {step}")
        assert a.counts == b.counts, step
        assert "edges" in a.seconds and "delete" not in a.seconds
    assert fused.edges().equals(plain.edges()) and fused.vertices().equals(plain.vertices())
    assert fused.structure.combined_phases["one_read"] >= 15, fused.structure.combined_phases


@pytest.mark.gpu
@pytest.mark.parametrize("tile", [4096, 64, 7])
def test_device_scans_are_cumsum(tile, monkeypatch):
    """scan_rows / scan_columns (gv_scan's single pass: tiles taken in order, each looking back at the tiles before
    it) on the device, with every block of the grid running at once: rows of flags and of signed 64-bit values, up to
    a few thousand tiles a row, in place and not, and strided columns, against NumPy's cumsum; the totals too."""
    cp = _cupy_or_skip()
    monkeypatch.setattr(gk, "SCAN_TILE", tile)
    rng = np.random.default_rng(tile)
    cases = ((3_000_000, 2, np.int64), (1_000_003, 1, np.int8), (tile * 5 + 1, 3, np.int64), (1, 1, np.int8))
    for n, rows, dtype in cases:
        hi = 2 if dtype is np.int8 else 2**40
        values = rng.integers(-hi if dtype is np.int64 else 0, hi, (rows, n)).astype(dtype)
        want = np.cumsum(values, axis=1, dtype=np.int64)
        d = cp.asarray(values if rows > 1 else values[0])
        for in_place in ((False, True) if dtype is np.int64 else (False,)):
            src = d.copy()
            out = src if in_place else cp.full(src.shape, -7, dtype=cp.int64)
            total = cp.full(rows + 1, -7, dtype=cp.int64)
            gk.scan_rows(cp, src, out, total)
            assert np.array_equal(H(out).reshape(rows, n), want)
            assert np.array_equal(H(total)[:rows], want[:, -1]) and int(total[rows]) == -7
    cols = rng.integers(0, 1000, (250_000, 17)).astype(np.int64)
    d = cp.asarray(cols)
    total = cp.full(17, -7, dtype=cp.int64)
    gk.scan_columns(cp, d, total)
    assert np.array_equal(H(d), np.cumsum(cols, axis=0))
    assert np.array_equal(H(total), cols.sum(axis=0))
