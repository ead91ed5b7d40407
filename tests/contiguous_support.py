"""Shared checks for the contiguous-row structures (hornet, custinger): state snapshots, the layout
invariants, random batch streams, and the serial host emulation of structures/contiguous_kernels.SOURCE."""
from __future__ import annotations

import numpy as np

from tests import graphvine_emulation as gv_emu
from vinestream.structures import contiguous_kernels as ck
from vinestream.structures.backend import to_numpy
from vinestream.structures.contiguous import EMPTY
from vinestream.structures.csr_types import CSRBatch

H = to_numpy


# -- host emulation of the kernels ------------------------------------------------------------
_lib = None


def _library():
    global _lib
    if _lib is None:
        _lib = gv_emu.compile_library(gv_emu.PRELUDE + ck.SOURCE, "ca")
    return _lib


class HostLauncher(gv_emu.OrderedLauncher):
    """Stands in for ``contiguous_kernels.launcher``: the same source, threads run serially in a
    chosen order (0 forward, 1 reverse, 2 seeded shuffle); counts launches per kernel."""

    library = staticmethod(lambda: _library())


# -- state -------------------------------------------------------------------------------------
def snapshot(g) -> dict:
    """Everything the structure holds, as host arrays and ints."""
    state = {"capacity": g.capacity, "num_vertices": g.num_vertices, "num_edges": g.num_edges,
             "alive": H(g.alive), "degree": H(g.degree_), "row_start": H(g.row_start),
             "row_capacity": H(g.row_capacity), "row_handle": H(g.row_handle),
             "pool_cols": H(g.pool_cols), "pool_weights": H(g.pool_weights), "pool_top": g.pool_top,
             "memory": g.memory()}
    if g.name == "hornet":
        for c, sc in sorted(g.classes.items()):
            state[f"class{c}"] = (H(sc.array_starts), H(sc.tree), sc.free, sc.slots, sc.leaves)
    else:
        state["garbage"] = g.garbage
    return state


def assert_same_state(a, b) -> None:
    sa, sb = snapshot(a), snapshot(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        va, vb = sa[k], sb[k]
        if isinstance(va, tuple):
            for x, y in zip(va, vb):
                assert np.array_equal(np.asarray(x), np.asarray(y)), k
        elif isinstance(va, np.ndarray):
            assert np.array_equal(va, vb), k
        else:
            assert va == vb, (k, va, vb)


def check_invariants(g) -> None:
    """The layout: dense rows, empty tails and free space, disjoint storage, allocator bookkeeping."""
    deg, start, cap = H(g.degree_), H(g.row_start), H(g.row_capacity)
    cols = H(g.pool_cols)
    assert int(deg.sum()) == g.num_edges
    assert (deg <= cap).all()
    held = np.nonzero(cap > 0)[0]
    assert (start[cap == 0] == -1).all()
    # storage of different vertices never overlaps (nothing handed out twice)
    order = held[np.argsort(start[held])]
    assert (start[order][:-1] + cap[order][:-1] <= start[order][1:]).all()
    covered = np.zeros(cols.shape[0], dtype=bool)
    for v in held.tolist():                      # test code: a loop is fine here
        row = cols[start[v]:start[v] + deg[v]]
        assert (row >= 0).all(), f"row {v} holds a non-edge"
        assert len(set(row.tolist())) == row.shape[0], f"row {v} repeats a column"
        assert (cols[start[v] + deg[v]:start[v] + cap[v]] == EMPTY).all(), f"row {v} tail not empty"
        covered[start[v]:start[v] + cap[v]] = True
    assert (cols[~covered] == EMPTY).all(), "an edge outside every row"
    assert H(g.alive)[deg > 0].all(), "a dead vertex holds edges"
    if g.name == "hornet":
        _check_hornet(g, deg, start, cap, held)
    else:
        _check_custinger(g, deg, cap)


def _check_hornet(g, deg, start, cap, held) -> None:
    from vinestream.structures.hornet import ceil_log2
    want = np.where(deg > 0, 1 << np.maximum(ceil_log2(np, np.maximum(deg, 1)), g.min_class), 0)
    assert np.array_equal(cap, want), "a block is not the smallest power of two >= the degree"
    handles = H(g.row_handle)
    for c, sc in g.classes.items():
        tree = H(sc.tree)
        inner = np.arange(1, sc.leaves)
        assert np.array_equal(tree[inner], tree[2 * inner] + tree[2 * inner + 1]), "bit-tree counts"
        leaves = tree[sc.leaves:sc.leaves + sc.slots]
        assert (tree[sc.leaves + sc.slots:] == 0).all()
        assert int(tree[1]) == sc.free == int(leaves.sum())
        mine = held[cap[held] == (1 << c)]
        slots = handles[mine]
        assert len(set(slots.tolist())) == slots.shape[0], "a block handed out twice"
        assert (leaves[slots] == 0).all(), "a block in use is marked free"
        assert sc.slots - sc.free == mine.shape[0], "a block lost (neither free nor in use)"
        assert np.array_equal(H(sc.addresses(g.xp.asarray(slots))), start[mine])


def _check_custinger(g, deg, cap) -> None:
    held = cap > 0
    assert (cap[held] >= g.min_capacity).all()
    assert int(cap.sum()) + g.garbage == g.pool_top <= H(g.pool_cols).shape[0]


# -- random streams ---------------------------------------------------------------------------
def random_ops(rng, nv: int, steps: int, max_batch: int = 400):
    """Ops (kind, payload) on ids below ``nv``: skewed inserts (hub rows grow through many sizes),
    deletes of present and absent edges, vertex deletions and re-insertions."""
    ops = [("insv", np.arange(nv, dtype=np.int32))]
    for step in range(steps):
        n = int(rng.choice([1, 5, 50, max_batch]))
        s = (rng.zipf(1.4, n) % nv).astype(np.int32)
        d = rng.integers(0, nv, n).astype(np.int32)
        w = rng.random(n).astype(np.float32)
        kind = ["ins", "ins", "del", "ins", "del", "delv", "ins"][step % 7]
        if kind == "delv":
            dead = rng.integers(0, nv, 3).astype(np.int32)
            ops += [("delv", dead), ("insv", dead)]
        else:
            ops.append((kind, (s, d, w)))
    return ops


def apply(g, op, present=None):
    """Apply one op; returns the mask or the removed edges (host arrays)."""
    kind, payload = op
    xp = g.xp
    if kind == "insv":
        return g.insert_vertices(xp.asarray(payload))
    if kind == "delv":
        s, d = g.delete_vertices(xp.asarray(payload))
        return H(s), H(d)
    s, d, w = payload
    if kind == "del" and g.num_edges:
        # half of the deletions name present edges
        csr = g.adjacency()
        rows, cols = H(csr.row_ids()), H(csr.cols)
        k = min(len(cols), len(s))
        pick = np.random.default_rng(len(s)).choice(len(cols), k, replace=False)
        s = np.concatenate([s[: len(s) // 2], rows[pick]]).astype(np.int32)
        d = np.concatenate([d[: len(d) // 2], cols[pick]]).astype(np.int32)
    batch = CSRBatch.from_edges(xp, xp.asarray(s), xp.asarray(d),
                                xp.asarray(w[: len(s)]) if kind == "ins" else None)
    return H(g.insert_edges(batch) if kind == "ins" else g.delete_edges(batch))


# -- the GPU check: fused kernels against the array program, both on CuPy --------------------------
def fused_vs_array_on_device(cp, name: str, opts: dict, seed: int, nv: int, steps: int, max_batch: int):
    """Random stream through ``name`` twice on the device (fused / array program); the whole state,
    masks, removed edges, memory and invariants compared after every batch; then queries."""
    from vinestream.structures.registry import create
    fused, ref = create(name, cp, **opts), create(name, cp, fused=False, **opts)
    assert fused.fused and not ref.fused
    rng = np.random.default_rng(seed)
    for op in random_ops(rng, nv=nv, steps=steps, max_batch=max_batch):
        mf, mr = apply(fused, op), apply(ref, op)
        if isinstance(mf, tuple):
            assert sorted(zip(*[m.tolist() for m in mf])) == sorted(zip(*[m.tolist() for m in mr]))
        elif mf is not None:
            assert np.array_equal(mf, mr)
        assert_same_state(fused, ref)
    check_invariants(fused)
    qs = cp.asarray(rng.integers(-2, nv + 5, 20000))
    qd = cp.asarray(rng.integers(-2, nv + 5, 20000))
    assert np.array_equal(H(fused.contains(qs, qd)), H(ref.contains(qs, qd)))
    assert np.array_equal(H(fused.edge_weights(qs, qd)), H(ref.edge_weights(qs, qd)), equal_nan=True)
    rows = cp.asarray(rng.integers(-1, nv + 3, 500))
    for r in (rows, None):
        a, b = fused.adjacency(r), ref.adjacency(r)
        assert np.array_equal(H(a.offsets), H(b.offsets)) and np.array_equal(H(a.cols), H(b.cols))
        assert np.array_equal(H(a.weights), H(b.weights))
    return fused, ref


def fused_vs_array_bulk_rmat(cp, name: str, opts: dict, scale: int = 16):
    """R-MAT bulk build from a CSR, then 1e4-edge insert / delete rounds, fused vs array program."""
    from vinestream.stream.bench.structures import rmat_edges
    from vinestream.structures.csr_types import csr_from_edges
    from vinestream.structures.registry import get
    src, dst = rmat_edges(cp, scale, 16, seed=3)
    keep = src != dst
    src, dst = src[keep].astype(cp.int32), dst[keep].astype(cp.int32)
    n = 1 << scale
    m = int(src.shape[0])
    init = m - 40000
    csr = csr_from_edges(cp, src[:init], dst[:init], cp.ones(init, dtype=cp.float32), n)
    cls = get(name)
    fused, ref = cls.from_csr(cp, csr, **opts), cls.from_csr(cp, csr, fused=False, **opts)
    assert_same_state(fused, ref)
    for lo in range(init, m, 10000):
        b = CSRBatch.from_edges(cp, src[lo:lo + 10000], dst[lo:lo + 10000])
        assert np.array_equal(H(fused.insert_edges(b)), H(ref.insert_edges(b)))
        half = CSRBatch.from_edges(cp, src[lo - 20000:lo - 15000], dst[lo - 20000:lo - 15000])
        assert np.array_equal(H(fused.delete_edges(half)), H(ref.delete_edges(half)))
        assert_same_state(fused, ref)
    check_invariants(fused)
