"""The host-sync budget: device -> host transfers and library sorts per batch and per job round, counted on NumPy.

``structures.backend.count_transfers`` counts the call sites that copy to the host
on a GPU (``int()``/``float()``/``bool()`` of a device scalar, ``.item()``, ``.tolist()``,
``to_numpy``, a boolean-mask index, ``nonzero``), and the sorts (``sort``, ``argsort``, ``lexsort``),
which wait for the device without a copy (CuPy's are thrust's, whose policy waits for the stream after
each sort), so these budgets hold in CI.  The array programs measured here sort: resolve twice (the names,
then the edge keys), the CSR batches once each, the vertex map once when it assigns new ids; a GPU's
batches of up to ``resolve_kernels.CAPACITY`` events sort in their kernels' blocks instead
(``tests/test_resolve_kernels.py``).
"""
from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import test_pipeline_contract as contract
from tests.strategies import batches
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures import registry
from vinestream.structures.backend import CountedArray, count_transfers, to_numpy
from vinestream.structures.csr_types import CSR

# transfers per batch of the pipeline's own phases: resolve (one read of every size), the vertex map's
# share of the vertex phase (none: resolve counted the tombstones it revives), the CSR batches (none:
# resolve counted their rows), the BatchDelta (none where the structure reports its masks' sizes); and
# their sorts (the module docstring)
OWN_BUDGET = {"resolve": 1 + 2, "vertex_map": 1, "csr": 2}        # reads + sorts (module docstring)
# resolve + vertices + csr + delete + insert + delta, per structure: (a batch of edge events, a batch with
# vertex deletions).  coo: one read per edge phase, one for the vertex scan; graphvine (its fused GPU path,
# run here through the host emulation of its kernels): one per edge phase (a small batch queues every
# kernel before it), four for vertex deletions (the sizes of the trees, of the in-edge scan, and the
# in-edges' delete).  csr (not tuned here) as it stands.  Each includes the pipeline's sorts (resolve 2, the CSR
# batches 2, the vertex map's 1 where it assigns ids) and the structure's own (graphvine's vertex deletion 4, csr's 2).
STRUCTURE_BUDGET = {"coo": (3 + 5, 4 + 4), "graphvine": (3 + 5, 7 + 8), "csr": (9 + 7, 14 + 6),
                    # coo's fused path (what CuPy runs; kernels emulated): both edge phases in one read
                    "coo-fused": (2 + 5, 3 + 4)}
# the pipeline's share alone (structure phases excluded): what any structure pays (reads + sorts)
PIPELINE_BUDGET = (1 + 5, 1 + 4)
# a job's transfers per batch outside its levels / rounds, and per level / round
JOB_FIXED = {"pagerank": 10 + 2, "bfs": 16}          # PageRank's array program sorts the sources and inserted keys
# (the frontier expansions take the edge total from the host: ``CSR.row_ids`` reads nothing back)
JOB_ROUND = {"pagerank": 2, "bfs": 2}


def _events(rng, n, ids=3000, deletes=0.2, vertex_deletes=0.0):
    import pyarrow as pa

    from vinestream.stream.events.schema import EVENT_SCHEMA
    op = np.where(rng.random(n) < deletes, 2, 1).astype(np.int8)
    op[rng.random(n) < vertex_deletes] = 4
    src = rng.integers(0, ids, n)
    dst = np.where(op == 4, 0, rng.integers(0, ids, n))
    return pa.table({"op": pa.array(op, pa.int8()), "src": pa.array(src, pa.int64()),
                     "dst": pa.array(dst, pa.int64(), mask=op == 4),
                     "weight": pa.array(np.ones(n, np.float32), pa.float32()),
                     "ts": pa.array([None] * n, pa.timestamp("ms"))}, schema=EVENT_SCHEMA)


_RUNNING = {"phase": None}     # the phase phase_counts saw start last


@contextmanager
def phase_counts(pipeline, counter):
    """Transfers per pipeline phase (``_timed``'s phases, plus ``delta``), into a dict."""
    counts: dict = {}
    timed, delta = pipeline._timed, pipeline._delta
    vmap = pipeline.vertex_map
    saved = {name: getattr(vmap, name) for name in ("lookup", "assign", "release")}

    def wrap(fn):
        def counted_call(*args, **kwargs):
            mark = counter.mark()
            out = fn(*args, **kwargs)
            counts["vertex_map"] = counts.get("vertex_map", 0) + counter.since(mark)
            return out
        return counted_call
    for name, fn in saved.items():
        setattr(vmap, name, wrap(fn))

    @contextmanager
    def counted(seconds, phase, chain=False):
        mark = counter.mark()
        _RUNNING["phase"] = phase
        with timed(seconds, phase, chain):
            yield
        counts[phase] = counts.get(phase, 0) + counter.since(mark)

    def counted_delta(*args):
        mark = counter.mark()
        out = delta(*args)
        counts["delta"] = counts.get("delta", 0) + counter.since(mark)
        return out
    pipeline._timed, pipeline._delta = counted, counted_delta
    try:
        yield counts
    finally:
        pipeline._timed, pipeline._delta = timed, delta
        for name in saved:
            delattr(vmap, name)


def test_counting_backend_counts_each_transfer_site():
    with count_transfers() as c:
        a = np.arange(10)
        assert isinstance(a, CountedArray)
        b = a * 2 + 1                                   # device work: nothing
        s = b.sum()
        assert c.count == 0
        int(a[3])
        float(s)
        bool((a > 3).any())
        a[a > 3]
        a.tolist()
        to_numpy(b)
        np.nonzero(a)
        s.item()
        np.repeat(a, 2)                                 # a scalar repeat: the size is known
        np.repeat(a, a)                                 # an array of repeats: their sum is read back
        assert c.count == 9
        assert c.kinds == {"int": 1, "float": 1, "bool": 1, "mask": 1, "tolist": 1, "to_numpy": 1,
                           "nonzero": 1, "item": 1, "repeat": 1}
        np.unique(np.array([3, 1, 3]))                  # NumPy's internals are one call, not many
        assert c.count == 10
        np.sort(a)                                      # a library sort waits for the device (thrust on CuPy)
        a.argsort()
        np.lexsort((a, a))
        assert c.count == 13 and c.kinds["sort"] == 3
    assert not isinstance(np.arange(3), CountedArray)   # the patch is gone after the block


@contextmanager
def _fused_emulation(structure):
    """graphvine's or coo's fused GPU path (what CuPy runs) on NumPy, its kernels emulated on the host."""
    if structure == "coo-fused":
        from tests import coo_emulation
        if not coo_emulation.available():
            pytest.skip("needs g++ for the host emulation of the COO kernels")
        with coo_emulation.emulated(0, 1) as launcher:
            yield launcher
        return
    if structure != "graphvine":
        yield None
        return
    from tests import graphvine_emulation as emu
    from vinestream.structures import graphvine_kernels as gk
    if not emu.available():
        pytest.skip("needs g++ for the host emulation of the graphvine kernels")
    saved, gk.launcher = gk.launcher, emu.HostLauncher()
    try:
        yield gk.launcher
    finally:
        gk.launcher = saved


STRUCTURE_PHASES = ("resolve", "vertices", "csr", "delete", "insert", "edges", "delta")


@pytest.mark.parametrize("structure", sorted(STRUCTURE_BUDGET))
def test_structure_update_sync_budget(structure):
    """Every transfer of a batch's resolve + vertex + structure update, against the budget; the graph
    matches the oracle after every batch (a saved transfer must not cost a wrong answer)."""
    from tests.oracle import Oracle
    rng = np.random.default_rng(1)
    with _fused_emulation(structure) as launcher, count_transfers(trace=True) as c:
        p = build_pipeline(structure=structure.removesuffix("-fused"), backend="cpu")
        if launcher is not None:
            p.structure.fused = True
        oracle = Oracle()
        first = _events(rng, 20_000)
        p.apply(first)
        oracle.apply_all(_rows(first))
        for batch, kind in [(_events(rng, 1000), 0), (_events(rng, 1000, vertex_deletes=0.02), 1),
                            (_events(rng, 1000), 0)]:
            c.sites.clear()
            with phase_counts(p, c) as counts:
                p.apply(batch)
            oracle.apply_all(_rows(batch))
            for phase, budget in OWN_BUDGET.items():
                assert counts.get(phase, 0) <= budget, (phase, counts, c.sites)
            update = sum(counts.get(ph, 0) for ph in STRUCTURE_PHASES)
            assert update <= STRUCTURE_BUDGET[structure][kind], (counts, c.sites)
            own = counts.get("resolve", 0) + counts.get("csr", 0) + counts.get("delta", 0) + counts.get("vertex_map", 0)
            if structure != "csr":
                assert own <= PIPELINE_BUDGET[kind], (counts, c.sites)
            assert_graph_matches(p, oracle)
    if structure == "coo-fused":
        assert p.structure.combined_phases["one_read"] >= 2     # both edge phases in one read, really
    elif launcher is not None:
        assert launcher.inserts_written() >= 4          # the fused path really ran


def _rows(table):
    """An event table as the oracle's (op, src, dst, weight) tuples."""
    cols = [table.column(c).to_pylist() for c in ("op", "src", "dst", "weight")]
    return list(zip(*cols))


def assert_graph_matches(pipeline, oracle):
    src, dst, w = (np.asarray(a).view(np.ndarray) for a in pipeline.edges_external())
    got = {(int(s), int(d)): float(x) for s, d, x in zip(src, dst, w)}
    assert len(got) == len(src) and got == {k: float(v) for k, v in oracle.edges.items()}
    assert set(np.asarray(pipeline.vertices_external()).view(np.ndarray).tolist()) == set(oracle.vertices)


@settings(max_examples=60, deadline=None)
@given(stream=batches(max_batches=5, max_id=10, max_size=40), undirected=st.booleans())
def test_fused_graphvine_pipeline_matches_oracle(stream, undirected):
    """The pipeline's vouched-for calls (insert_new_vertices, delete_live_vertices, the counted edge
    phases) on graphvine's fused path, kernels emulated: graph and BatchDelta against the oracle."""
    real = registry.create

    def fused_graphvine(name, xp, **options):
        g = real(name, xp, **options)
        g.fused = True
        return g
    with _fused_emulation("graphvine") as launcher:
        registry.create = fused_graphvine
        try:
            contract.run_stream("graphvine", np, stream, undirected)
        finally:
            registry.create = real
    edges, new_edge = set(), False    # did some batch end with an edge that was not there before it?
    for batch in stream:
        after = set(edges)
        for op, a, b, *_ in batch:
            keys = {(a, b), (b, a)} if undirected else {(a, b)}
            if op == 1 and a != b:
                after |= keys
            elif op == 2:
                after -= keys
            elif op == 4:
                after = {k for k in after if a not in k}
        new_edge |= bool(after - edges)
        edges = after
    if new_edge:
        assert launcher.inserts_written() >= 1        # the fused path ran


def test_counts_reported_by_structures_match_their_masks():
    """insert_edges_counted / delete_edges_counted: a count, where given, is the mask's True entries."""
    from vinestream.structures.csr_types import CSRBatch
    from vinestream.structures.registry import create
    rng = np.random.default_rng(7)
    for name in ("coo", "graphvine"):
        g = create(name, np)
        g.insert_new_vertices(np.arange(300), 300)
        for step in range(6):
            s, d = rng.integers(0, 300, 800), rng.integers(0, 300, 800)
            b = CSRBatch.from_edges(np, s, d, rng.random(800).astype(np.float32))
            mask, n = (g.insert_edges_counted if step % 2 == 0 else g.delete_edges_counted)(b)
            assert n is None or n == int(np.count_nonzero(mask)), (name, step)
            if name == "coo":
                assert n is not None


def test_phase_timing_costs_no_transfer():
    rng = np.random.default_rng(2)
    with count_transfers() as c:
        p = build_pipeline(structure="coo", backend="cpu")
        p.apply(_events(rng, 2000))
        with phase_counts(p, c) as counts:
            result = p.apply(_events(rng, 200))
        mark = c.mark()
        seconds = dict(result.seconds)
        assert c.since(mark) == 0 and set(seconds) >= {"resolve", "vertices", "csr", "delete", "insert"}
        assert sum(counts.values()) >= 0


def _spy_jobs(pipeline, method: str) -> list:
    """Replace each job's ``method`` (called with the vertex map) by one that first notes the job's name in the
    list returned."""
    calls = []

    def spy(job):
        original = getattr(job, method)

        def noted(vertex_map):
            calls.append(job.name)
            return original(vertex_map)
        return noted
    for job in pipeline.jobs:
        setattr(job, method, spy(job))
    return calls


def test_job_outputs_only_when_a_sink_reads_them():
    rng = np.random.default_rng(3)
    p = build_pipeline(structure="coo", backend="cpu", jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1])
    p.apply(_events(rng, 2000))
    calls = _spy_jobs(p, "output")
    result = p.apply(_events(rng, 100))
    assert calls == [] and set(result.job_outputs) == {"pagerank", "bfs", "triangles"}
    assert calls == []                                           # listing names computes nothing
    table = result.job_outputs["triangles"]
    # the first read makes the epoch's every table (one wait for the device; each job's own output here)
    assert sorted(calls) == ["bfs", "pagerank", "triangles"] and table.num_rows == p.structure.num_vertices
    assert result.job_outputs["bfs"] is result.job_outputs["bfs"] and len(calls) == 3
    unread = p.apply(_events(rng, 100))
    p.apply(_events(rng, 100))
    with pytest.raises(RuntimeError, match="gone"):
        unread.job_outputs["bfs"]                                # stale: the jobs ran again before any read


def test_an_epochs_job_outputs_are_copied_together_at_the_first_read():
    """The first read computes every job's columns (once each) and copies all of them to the host in one
    transfer (one a job before); the tables equal each job's own ``output``."""
    rng = np.random.default_rng(5)
    with count_transfers() as c:
        p = build_pipeline(structure="coo", backend="cpu", jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1])
        p.apply(_events(rng, 2000))
        calls = _spy_jobs(p, "columns")
        result = p.apply(_events(rng, 100))
        assert calls == []
        before = dict(c.kinds)
        bfs = result.job_outputs["bfs"]
        assert sorted(calls) == ["bfs", "pagerank", "triangles"]
        assert c.kinds.get("to_numpy", 0) - before.get("to_numpy", 0) == 1
        tables = {name: result.job_outputs[name] for name in result.job_outputs}
        assert sorted(calls) == ["bfs", "pagerank", "triangles"]            # read once
        for job in p.jobs:
            assert tables[job.name].equals(job.output(p.vertex_map))
    assert bfs is tables["bfs"] and bfs.num_rows == p.structure.num_vertices


def _graph_pipeline():
    """A csr pipeline with BFS and PageRank kept on their incremental paths (no dense sweeps)."""
    from vinestream.algorithms import BFS, PageRank
    from vinestream.stream.pipeline.pipeline import Pipeline
    from vinestream.structures.registry import create
    rng = np.random.default_rng(4)
    jobs = [PageRank(np, dense_fraction=1e9, fallback_fraction=1e9, budget=4.0), BFS(np, sources=[1])]
    p = Pipeline(create("csr", np), jobs=jobs)
    p.apply(_events(rng, 30_000, ids=5000, deletes=0.0))
    return p, rng


def _adjacency_transfers(graph, counter):
    """Count what graph.adjacency(vertices) itself transfers (the structure's share of a round), per
    phase (the one :func:`phase_counts` saw start last)."""
    calls: dict = {}
    original = graph.adjacency

    def adjacency(vertices=None) -> CSR:
        mark = counter.mark()
        out = original(vertices)
        phase = _RUNNING["phase"]
        calls[phase] = calls.get(phase, 0) + counter.since(mark)
        return out
    graph.adjacency = adjacency
    return calls


def test_bfs_level_and_pagerank_round_sync_budget():
    with count_transfers(trace=True) as c:
        p, rng = _graph_pipeline()
        adj = _adjacency_transfers(p.structure, c)
        for _ in range(3):
            adj.clear()
            with phase_counts(p, c) as counts:
                p.apply(_events(rng, 30, ids=5000))
            for job in p.jobs:
                rounds = int(job.work["iterations"])
                assert job.work["mode"].startswith("incremental"), job.work
                # a fixed cost per batch (delta bookkeeping, corrections, seeds) plus <= 2 per BFS level
                # or PageRank round (3 for BFS, see JOB_ROUND), besides the structure's own transfers
                # inside adjacency()
                own = counts[job.name] - adj.get(job.name, 0)
                assert own <= JOB_FIXED[job.name] + JOB_ROUND[job.name] * rounds, (
                    job.name, counts, rounds, adj, c.sites)


@pytest.mark.gpu
def test_gpu_phases_are_timed_by_events_and_read_once():
    from tests.backends import HAS_GPU
    if not HAS_GPU:
        pytest.skip("needs CuPy and a CUDA device")
    rng = np.random.default_rng(5)
    p = build_pipeline(structure="coo", backend="gpu", jobs=["pagerank", "bfs"], bfs_sources=[1])
    p.apply(_events(rng, 5000))
    result = p.apply(_events(rng, 500))
    assert result.seconds._pending                       # events recorded, nothing read yet
    seconds = dict(result.seconds)
    assert not result.seconds._pending
    # coo's fused path runs both edge phases with one read, timed as one "edges" phase
    assert set(seconds) >= {"resolve", "vertices", "csr", "edges", "pagerank", "bfs"}
    assert all(v >= 0 for v in seconds.values())


def test_an_output_table_is_one_transfer():
    """A job's output columns (values and validity masks of several dtypes) reach the host together."""
    from vinestream.algorithms.base import arrow_table
    with count_transfers() as c:
        ids = np.arange(7, dtype=np.int64)
        dist = np.arange(7, dtype=np.int32) * 3
        parent = np.arange(7, dtype=np.int64)[::-1].copy()
        has = ids % 2 == 0
        mark = c.mark()
        table = arrow_table({"vertex": (ids, None), "distance": (dist, None), "parent": (parent, has)})
        assert c.since(mark) == 1
    assert table.column("distance").to_pylist() == [0, 3, 6, 9, 12, 15, 18]
    assert table.column("parent").to_pylist() == [6, None, 4, None, 2, None, 0]
    assert table.column("vertex").type == pa.int64() and table.column("distance").type == pa.int32()


def test_to_numpy_all_round_trips_mixed_device_arrays():
    """The packed copy on a GPU: dtypes of 1, 4 and 8 bytes, odd lengths (unaligned ends), an empty array,
    a 2-d one, None and a host array, each equal to its own copy."""
    from tests.backends import cupy_or_skip
    from vinestream.structures.backend import to_numpy_all
    cp = cupy_or_skip()
    arrays = [cp.arange(5, dtype=cp.int8), cp.arange(7, dtype=cp.float32) / 3, None, cp.zeros(0, cp.int64),
              cp.arange(11, dtype=cp.int64) * -5, cp.arange(6, dtype=cp.int32).reshape(2, 3), np.ones(3),
              cp.arange(9) % 2 == 0]
    got = to_numpy_all(arrays)
    for a, h in zip(arrays, got):
        if a is None:
            assert h is None
            continue
        want = a if isinstance(a, np.ndarray) else a.get()
        assert isinstance(h, np.ndarray) and h.dtype == want.dtype and h.shape == want.shape
        assert np.array_equal(h, want)


@pytest.mark.parametrize("job", ["bfs", "pagerank", "triangles"])
def test_a_job_output_costs_at_most_two_transfers(job):
    """Reading a job's output table: the live ids (a nonzero, unless the job's update listed them
    already), then every column in one copy."""
    rng = np.random.default_rng(6)
    with count_transfers() as c:
        p = build_pipeline(structure="coo", backend="cpu", jobs=[job], bfs_sources=[1])
        p.apply(_events(rng, 2000))
        result = p.apply(_events(rng, 100))
        mark = c.mark()
        table = result.job_outputs[job]
        assert c.since(mark) <= 2, c.kinds
    assert table.num_rows == p.structure.num_vertices
    if job == "bfs":
        parent, dist = table.column("parent").to_pylist(), table.column("distance").to_pylist()
        assert any(x is None for x in parent) and any(x is not None for x in parent)
        assert all((x is None) == (d <= 0) for x, d in zip(parent, dist))   # the source and the unreached
