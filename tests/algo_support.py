"""Test doubles for the algorithm tests: a dict vertex map and a stream harness.

The harness applies batches of events (external ids) one at a time to the
oracle, derives the batch's net effect exactly as ``stream/delta.py`` defines a
``BatchDelta`` (vertices removed, then added -- a slot freed in the batch may be
reused at once --, then disjoint inserted / deleted edges), and replays that
delta on the `csr` structure (any registered structure would do); tests/test_pipeline_jobs.py runs the jobs
inside the real pipeline on every structure.
"""
from __future__ import annotations

import random

import networkx as nx
import numpy as np

from tests.oracle import ADD_EDGE, ADD_VERTEX, DELETE_EDGE, DELETE_VERTEX, Oracle
from vinestream.structures.backend import to_numpy
from vinestream.structures.delta import BatchDelta, apply_delta
from vinestream.structures.registry import build, create


class DictVertexMap:
    """external int64 <-> internal int32, freed slots reused last-in first-out."""

    def __init__(self, xp=np):
        self.xp = xp
        self.to_int: dict[int, int] = {}
        self.to_ext: dict[int, int] = {}
        self.free: list[int] = []
        self.next_id = 0

    def lookup(self, external):
        ext = to_numpy(external).astype(np.int64)
        out = np.array([self.to_int.get(int(e), -1) for e in ext], dtype=np.int32)
        return self.xp.asarray(out)

    def external(self, internal):
        ids = to_numpy(internal).astype(np.int64)
        return self.xp.asarray(np.array([self.to_ext[int(i)] for i in ids], dtype=np.int64))

    def assign(self, v: int) -> int:
        slot = self.free.pop() if self.free else self._fresh()
        self.to_int[v] = slot
        self.to_ext[slot] = v
        return slot

    def _fresh(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def release(self, v: int) -> int:
        slot = self.to_int.pop(v)
        del self.to_ext[slot]
        self.free.append(slot)
        return slot

    @property
    def num_vertices(self) -> int:
        return len(self.to_int)

    @property
    def capacity(self) -> int:
        return self.next_id


class Harness:
    """Oracle + vertex map + a structure (``csr`` unless named), advanced one batch of events at a time."""

    def __init__(self, xp=np, structure: str = "csr"):
        self.xp = xp
        self.oracle = Oracle()
        self.vmap = DictVertexMap(xp)
        self.graph = create(structure, xp)
        self.epoch = 0
        self.removed_total = 0      # vertex deletions seen (for tests that need them)
        self.reused_total = 0       # slots freed and reused within one batch

    def apply(self, events) -> BatchDelta:
        xp = self.xp
        before_v = self.oracle.vertices
        before_e = self.oracle.edges
        removed = sorted({e[1] for e in events if e[0] == DELETE_VERTEX} & before_v)
        for ev in events:
            self.oracle.apply(*ev)
        after_v = self.oracle.vertices
        after_e = self.oracle.edges
        gone = set(removed)
        added = sorted(v for v in after_v if v not in before_v or v in gone)
        survived = {k for k in before_e if k[0] not in gone and k[1] not in gone and k in after_e}

        old_id = dict(self.vmap.to_int)
        deleted = sorted(k for k in before_e if k not in survived)
        del_s = [old_id[a] for a, _ in deleted]
        del_d = [old_id[b] for _, b in deleted]
        removed_slots = [self.vmap.release(v) for v in removed]
        added_slots = [self.vmap.assign(v) for v in added]
        new_id = self.vmap.to_int
        inserted = sorted(k for k in after_e if k not in survived)
        updated = sorted(k for k in survived if after_e[k] != before_e[k])

        i32 = lambda a: xp.asarray(np.asarray(a, dtype=np.int32))
        f32 = lambda a: xp.asarray(np.asarray(a, dtype=np.float32))
        self.epoch += 1
        delta = BatchDelta(
            epoch=self.epoch, vertices_added=i32(added_slots), vertices_removed=i32(removed_slots),
            inserted_src=i32([new_id[a] for a, _ in inserted]), inserted_dst=i32([new_id[b] for _, b in inserted]),
            inserted_weight=f32([after_e[k] for k in inserted]),
            deleted_src=i32(del_s), deleted_dst=i32(del_d),
            updated_src=i32([new_id[a] for a, _ in updated]), updated_dst=i32([new_id[b] for _, b in updated]),
            updated_weight=f32([after_e[k] for k in updated]))
        apply_delta(self.graph, delta)
        self.removed_total += len(removed_slots)
        self.reused_total += len(set(removed_slots) & set(added_slots))
        return delta

    def networkx(self) -> nx.DiGraph:
        return self.oracle.to_networkx()

    def check_graph(self) -> None:
        """The structure holds exactly the oracle's graph (in internal ids)."""
        csr = self.graph.adjacency()
        rows = to_numpy(csr.row_ids())
        cols = to_numpy(csr.cols)
        ext = self.vmap.to_ext
        got = {(ext[int(a)], ext[int(b)]) for a, b in zip(rows, cols)}
        assert got == set(self.oracle.edges)
        live = {ext[int(v)] for v in to_numpy(self.graph.vertices())}
        assert live == self.oracle.vertices


def random_batch(rng: random.Random, oracle: Oracle, id_space: int, size: int,
                 p_vertex_delete: float = 0.04, p_vertex_add: float = 0.03, p_delete: float = 0.3):
    """Random events over ids ``0 .. id_space-1``; deletions mostly name existing edges."""
    events = []
    edges = list(oracle.edges)
    for _ in range(size):
        x = rng.random()
        if x < p_vertex_delete:
            events.append((DELETE_VERTEX, rng.randrange(id_space), None, None))
        elif x < p_vertex_delete + p_vertex_add:
            events.append((ADD_VERTEX, rng.randrange(id_space), None, None))
        elif x < p_vertex_delete + p_vertex_add + p_delete and edges:
            a, b = edges[rng.randrange(len(edges))]
            events.append((DELETE_EDGE, a, b, None))
        else:
            a, b = rng.randrange(id_space), rng.randrange(id_space)
            events.append((ADD_EDGE, a, b, 1.0))
    return events


def table_dict(table, column):
    """{external vertex: value} from a job output table."""
    return dict(zip(table.column("vertex").to_pylist(), table.column(column).to_pylist()))


def rmat_edges(rng: np.random.Generator, scale: int, edge_factor: int, abc=(0.57, 0.19, 0.19)):
    """A small R-MAT edge list on NumPy (tests only), self-loops and duplicates dropped."""
    m = edge_factor << scale
    src = np.zeros(m, dtype=np.int64)
    dst = np.zeros(m, dtype=np.int64)
    a, b, c = abc
    for _ in range(scale):
        r = rng.random(m)
        down = r >= a + b                    # quadrants c, d: lower half for src
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)
        src = (src << 1) | down
        dst = (dst << 1) | right
    keep = src != dst
    key = np.unique((src[keep] << 32) | dst[keep])
    return (key >> 32), (key & 0xFFFFFFFF)


# Re-exported op codes for the tests
__all__ = [
    "ADD_EDGE",
    "ADD_VERTEX",
    "DELETE_EDGE",
    "DELETE_VERTEX",
    "DictVertexMap",
    "Harness",
    "random_batch",
    "rmat_edges",
    "table_dict",
]


def backends():
    """pytest params: numpy always, cupy (marked gpu) when a CUDA device answers."""
    from tests.backends import BACKENDS
    return list(BACKENDS)


def assert_state_roundtrip(make_job, seed: int, steps: int, make_copy=None) -> None:
    """A job restored from ``state()`` (into ``make_copy()``, default ``make_job()``) goes on exactly
    like the original over ``steps`` batches."""
    rng = random.Random(seed)
    h = Harness()
    h.apply(random_batch(rng, h.oracle, 30, 80))
    job = make_job()
    job.run_static(h.graph, h.vmap)
    copy = (make_copy or make_job)()
    copy.load_state(job.state())
    for _ in range(steps):
        delta = h.apply(random_batch(rng, h.oracle, 30, 10))
        job.update(h.graph, delta, h.vmap)
        copy.update(h.graph, delta, h.vmap)
        assert job.output(h.vmap).equals(copy.output(h.vmap))


# -- references -------------------------------------------------------------------------
def bfs_reference(G: nx.DiGraph, sources) -> dict:
    """networkx distances, min over the sources present; -1 for unreachable."""
    best: dict = {}
    for s in sources:
        if s in G:
            for v, d in nx.single_source_shortest_path_length(G, s).items():
                best[v] = min(best.get(v, d), d)
    return {v: best.get(v, -1) for v in G}


def check_bfs(job, h: Harness, sources) -> None:
    """Distances equal networkx; every parent is one hop closer along an existing edge."""
    G = h.networkx()
    out = job.output(h.vmap)
    dist = table_dict(out, "distance")
    assert dist == bfs_reference(G, sources)
    parent = table_dict(out, "parent")
    for v, p in parent.items():
        if dist[v] <= 0:
            assert p is None, (v, p, dist[v])
        else:
            assert p is not None and G.has_edge(p, v) and dist[p] == dist[v] - 1, (v, p)
    assert job.summary()["bfs_reached"] == sum(1 for d in dist.values() if d >= 0)


def check_triangles(job, h: Harness) -> None:
    ref = nx.triangles(h.networkx().to_undirected())
    assert table_dict(job.output(h.vmap), "triangles") == ref
    assert job.summary()["triangles"] == sum(ref.values()) // 3


def pagerank_l1(job, h: Harness) -> float:
    """L1 distance between the job's ranks and networkx pagerank(weight=None) at a tight tolerance."""
    G = h.networkx()
    got = table_dict(job.output(h.vmap), "rank")
    assert set(got) == set(G)
    if len(G) == 0:
        return 0.0
    ref = nx.pagerank(G, alpha=0.85, weight=None, tol=1e-13, max_iter=10_000)
    return sum(abs(got[v] - ref[v]) for v in G)


def outputs_equal(a, b, column) -> bool:
    return table_dict(a, column) == table_dict(b, column)


# -- a graph of >= 100k edges and a batch of 0.1% of them (work tests) -------------------------
class IdentityMap:
    """Vertex map where internal and external ids coincide (graphs built directly on slots)."""

    def lookup(self, external):
        return np.asarray(to_numpy(external), dtype=np.int32)

    def external(self, internal):
        return np.asarray(to_numpy(internal), dtype=np.int64)


def work_graph_and_delta(scale: int = 13, edge_factor: int = 16, fraction: float = 0.001, seed: int = 0):
    """An R-MAT ``csr`` structure (>= 100k edges) and a delta changing ``fraction`` of its edges
    (half deletions of existing edges, half insertions of new ones), not yet applied."""
    from vinestream.stream.bench.algorithms import edge_keys_of
    from vinestream.structures.array_ops import split_keys
    rng = np.random.default_rng(seed)
    s, d = rmat_edges(rng, scale, edge_factor)
    n = 1 << scale
    loop = s == d
    g = build("csr", np, s[~loop], d[~loop], n)
    k = max(2, int(g.num_edges * fraction))
    keys = edge_keys_of(g)
    del_s, del_d = split_keys(keys[rng.choice(keys.shape[0], k // 2, replace=False)])
    pairs = rng.integers(0, n, size=(k, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    ik = np.unique((pairs[:, 0].astype(np.int64) << 32) | pairs[:, 1])
    ik = ik[~np.isin(ik, keys)][: k - k // 2]
    ins_s, ins_d = split_keys(ik)
    e = np.zeros(0, np.int32)
    delta = BatchDelta(1, e, e, ins_s, ins_d, np.ones(ins_s.shape[0], np.float32),
                       del_s, del_d, e, e, np.zeros(0, np.float32))
    return g, delta


def split_delta(delta):
    """An edge-only delta as two consecutive deltas (each half of its insertions and of its deletions)."""
    ni, nd = delta.num_inserted // 2, delta.num_deleted // 2
    e, f = np.zeros(0, np.int32), np.zeros(0, np.float32)

    def part(i, d):
        return BatchDelta(delta.epoch, e, e, delta.inserted_src[i], delta.inserted_dst[i],
                          delta.inserted_weight[i], delta.deleted_src[d], delta.deleted_dst[d], e, e, f)
    return part(slice(0, ni), slice(0, nd)), part(slice(ni, None), slice(nd, None))


# -- hypothesis strategies ---------------------------------------------------------------------
def event_batches(max_id: int = 9, max_batches: int = 6, max_events: int = 14):
    """Lists of event batches over ids 0..max_id: edge adds dominate; deletes and vertex ops mixed in."""
    from hypothesis import strategies as st
    vid = st.integers(0, max_id)
    edge = st.tuples(st.sampled_from([ADD_EDGE] * 3 + [DELETE_EDGE]), vid, vid, st.just(1.0))
    vop = st.tuples(st.sampled_from([ADD_VERTEX, DELETE_VERTEX]), vid, st.none(), st.none())
    event = st.one_of(edge, edge, edge, edge, vop)
    return st.lists(st.lists(event, min_size=1, max_size=max_events), min_size=1, max_size=max_batches)


def long_stream(seed: int, batches: int = 55, id_space: int = 40, first: int = 120, size: int = 12):
    """(harness, list of deltas) generator: a first batch then ``batches`` small random ones."""
    rng = random.Random(seed)
    h = Harness()
    yield h, h.apply(random_batch(rng, h.oracle, id_space, first))
    for _ in range(batches):
        yield h, h.apply(random_batch(rng, h.oracle, id_space, size))


def check_bfs_on_graph(job, g, sources) -> None:
    """A BFS job's distances over a structure ``g`` (identity vertex map) equal networkx's from ``sources``;
    every parent is one hop closer along an existing edge; roots and unreached have none; the count is right."""
    import networkx as nx
    csr = g.adjacency()
    rows = np.repeat(np.arange(csr.offsets.shape[0] - 1), np.diff(csr.offsets))
    G = nx.DiGraph()
    G.add_nodes_from(range(int(g.vertex_capacity)))
    G.add_edges_from(zip(rows.tolist(), csr.cols.tolist()))
    ref = nx.multi_source_dijkstra_path_length(G, list(sources))
    dist = job.dist[: int(g.vertex_capacity)]
    assert {v: int(x) for v, x in enumerate(dist) if x >= 0} == ref
    far = np.nonzero(dist > 0)[0]
    par = job.parent[far]
    assert (dist[par] == dist[far] - 1).all() and g.contains(par.astype(np.int32), far.astype(np.int32)).all()
    assert (job.parent[: dist.shape[0]][dist <= 0] == -1).all()
    assert job.reached() == len(ref)
