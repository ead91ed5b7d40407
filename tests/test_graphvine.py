"""GraphVine: randomized streams against the oracle, plus the paper's mechanisms checked directly.

The invariant checker walks every vertex's tree through the real child links
(``block_left`` / ``block_right``), so a structure that kept only a flat table
would fail it.
"""
from __future__ import annotations

import bisect
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tests.structure_ops import XP, H, apply_op, batch, check_against, edges_of, operations
from vinestream.structures import backend
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.graphvine import GROW_AT, GROW_BY, VERTEX_ENTRY_BYTES, GraphVine
from vinestream.structures.registry import create


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def tree_blocks(g, v) -> list[int]:
    """Blocks of vertex v in CBT order, found by walking the child links from the root."""
    left, right = H(g.block_left), H(g.block_right)
    root = int(H(g.root_block)[v])
    if root < 0:
        return []
    order, frontier = [], [root]
    while frontier:                       # breadth first = CBT index order
        order.extend(frontier)
        nxt = []
        for b in frontier:
            nxt += [c for c in (int(left[b]), int(right[b])) if c >= 0]
        frontier = nxt
    return order


def block_entries(g, b: int) -> tuple[int, int, int]:
    """(entry base, size, class) of block ``b``, read from the chunk table on the host."""
    j = bisect.bisect_right(g.chunk_first, b) - 1
    size = g.class_sizes[g.chunk_class[j]]
    return g.chunk_base[j] + (b - g.chunk_first[j]) * size, size, g.chunk_class[j]


def block_table(g) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`block_entries` of every block id below ``pool_blocks`` at once: (entry bases, sizes, classes) as
    arrays, read from the chunk table on the host (the chunks' first ids ascending, as check_invariants holds)."""
    first = np.asarray(g.chunk_first, dtype=np.int64)
    lengths = np.diff(np.append(first, g.pool_blocks))
    chunk_size = np.asarray(g.class_sizes, dtype=np.int64)[np.asarray(g.chunk_class, dtype=np.int64)]
    cls = np.repeat(np.asarray(g.chunk_class, dtype=np.int64), lengths)
    size = np.repeat(chunk_size, lengths)
    base = np.repeat(np.asarray(g.chunk_base, dtype=np.int64) - first * chunk_size, lengths) \
        + np.arange(g.pool_blocks, dtype=np.int64) * size
    return base, size, cls


def check_invariants(g: GraphVine, oracle: Oracle | None = None) -> None:
    """Tree shape, classes, compaction, sentinels, chunks, queue accounting (in-degrees against the oracle)."""
    alive = H(g.alive)
    count, nblocks, vclass = H(g.edge_count), H(g.num_blocks), H(g.block_class)
    cap = g.capacity
    assert cap == 0 or cap & (cap - 1) == 0, "dictionary capacity is a power of two"
    if not g._has_pool:
        assert int(count.sum()) == 0
        return
    left, right, owner = H(g.block_left), H(g.block_right), H(g.block_owner)
    cols = H(g.block_cols)
    last_block, last_offset = H(g.last_block), H(g.last_offset)
    # chunks: contiguous ids and entries, in id order, covering the pool
    ids, entries = 0, 0
    for first, base, c in zip(g.chunk_first, g.chunk_base, g.chunk_class):
        assert first == ids and base == entries
        nxt = g.chunk_first[g.chunk_first.index(first) + 1] if first != g.chunk_first[-1] else g.pool_blocks
        ids, entries = nxt, entries + (nxt - first) * g.class_sizes[c]
    assert ids == g.pool_blocks == len(left) and entries == g.entries == len(cols)
    blk_base, blk_size, blk_class = block_table(g)
    seen = np.zeros(g.pool_blocks, dtype=bool)
    for v in range(cap):
        blocks = tree_blocks(g, v)
        if not alive[v]:
            assert count[v] == 0 and nblocks[v] == 0 and not blocks and vclass[v] == -1
            continue
        c = int(count[v])
        if not blocks:
            assert c == 0 and nblocks[v] == 0 and vclass[v] == -1
            assert last_block[v] == -1 and H(g.root_block)[v] == -1
            continue
        bs = g.class_sizes[vclass[v]]
        assert len(blocks) == nblocks[v] == math.ceil(c / bs), "exactly ceil(deg/size) blocks"
        flat = []
        for k, b in enumerate(blocks):       # complete tree: block k's children are 2k+1, 2k+2
            assert not seen[b], "a block belongs to one tree once"
            seen[b] = True
            assert owner[b] == v
            base, size, bc = int(blk_base[b]), int(blk_size[b]), int(blk_class[b])
            assert size == bs and bc == vclass[v], "a tree's blocks come from its vertex's class"
            flat.append(cols[base:base + size])
            exp_l = blocks[2 * k + 1] if 2 * k + 1 < len(blocks) else -1
            exp_r = blocks[2 * k + 2] if 2 * k + 2 < len(blocks) else -1
            assert left[b] == exp_l and right[b] == exp_r
        flat = np.concatenate(flat)
        assert (flat[:c] >= 0).all() and (flat[c:] == -1).all(), "edges dense, no holes"
        assert (np.diff(flat[:c].astype(np.int64)) > 0).all(), "a row is sorted by column, no parallel edges"
        assert last_block[v] == blocks[-1]
        assert last_offset[v] == c - (len(blocks) - 1) * bs
        # the bit-string locator agrees with the link walk
        loc = H(g.locate_blocks(XP.full(len(blocks), v, dtype=np.int64),
                                XP.arange(len(blocks), dtype=np.int64)))
        assert loc.tolist() == blocks
    # queues: per class, the free ids and the tree blocks of that class partition its blocks
    nfree = 0
    for c in range(g.num_classes):
        free = H(g.class_free_ids(c))
        assert len(set(free.tolist())) == len(free)
        assert not seen[free].any(), "a free block is in no tree"
        in_class = np.flatnonzero(blk_class == c)
        assert set(free.tolist()) <= set(in_class.tolist())
        assert int(seen[in_class].sum()) + len(free) == g.cls_blocks[c] == len(in_class)
        assert int(seen[in_class].sum()) <= GROW_AT * g.cls_blocks[c] + 1e-9, "class kept under 80% use"
        free_entries = blk_base[free][:, None] + np.arange(g.class_sizes[c])      # free blocks are of class c
        assert (cols[free_entries] == -1).all(), "a free block's entries are empty"
        assert (left[free] == -1).all() and (right[free] == -1).all() and (owner[free] == -1).all()
        nfree += len(free)
    assert int(seen.sum()) + nfree == g.pool_blocks == g.blocks_in_use + g.blocks_free
    assert g.num_edges == int(count.sum())
    if oracle is not None:
        indeg = H(g.in_degree)
        for v in range(cap):
            exp = len(oracle.inn.get(v, ())) if alive[v] else 0
            assert indeg[v] == exp


#: size classes 1, 2, 4, 8 with one block per class size of edges: re-homing on small graphs
SMALL_CLASSES = {"min_block_size": 1, "max_block_size": 8, "target_blocks": 1, "min_pool_blocks": 2}


def structure_state(g) -> dict:
    """Every array and counter of a GraphVine, as host copies (fused and array paths must agree on all)."""
    host = lambda a: np.array(backend.to_numpy(a))
    names = ("alive", "edge_count", "num_blocks", "root_block", "last_block", "last_offset",
             "in_degree", "block_class", "block_cols", "block_left", "block_right", "block_owner")
    out = {k: host(getattr(g, k)) for k in names if getattr(g, k) is not None}
    if g.block_weights is not None:       # weights of empty entries are left as they were
        out["live_weights"] = np.where(host(g.block_cols) >= 0, host(g.block_weights), 0)
    if g.queue is not None:
        for c in range(g.num_classes):
            out[f"free{c}"] = host(g.class_free_ids(c))
    out["counters"] = (g.num_vertices, g.num_edges, g.capacity, g.block_size, g.pool_blocks,
                       g.blocks_free, tuple(sorted(g.stats.items())), tuple(g.class_sizes or ()),
                       tuple(g.chunk_first), tuple(g.chunk_base), tuple(g.chunk_class), g.entries,
                       tuple(getattr(g, "cls_blocks", ())), tuple(getattr(g, "cls_head", ())),
                       tuple(getattr(g, "cls_tail", ())))
    return out


def assert_same_state(a, b) -> None:
    sa, sb = structure_state(a), structure_state(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        if isinstance(sa[k], np.ndarray):
            assert np.array_equal(sa[k], sb[k]), k
        else:
            assert sa[k] == sb[k], k


def check_device_queue(g) -> None:
    """The fused path's device queue table (current parity) holds the host's ring starts, sizes, heads
    and tails, unless the host marked it for re-upload."""
    if g._qstate is None or g._qdirty:
        return
    got = np.asarray(backend.to_numpy(g._qstate[g._qpar])).reshape(4, -1)
    want = np.asarray([g.cls_qstart, g.cls_blocks, g.cls_head, g.cls_tail], dtype=np.int64)
    assert np.array_equal(got, want), (got, want)


def phase_batches(xp, rng, ref, nv: int, n_ins: int, n_del: int, hub_drop: bool = False):
    """A batch's two edge phases as the pipeline hands them over (disjoint key sets): ``n_del`` deletes, most
    of them live edges of ``ref`` (with ``hub_drop`` every live edge but two of its largest row of at most
    2,000: a vertex left classes below its blocks, in a batch small enough for the one-sync path) and some
    absent ones; ``n_ins`` inserts of skewed sources, new edges and
    weight updates of live ones, none of them a delete's key.  Returns ``(inserts, deletes)`` on ``xp``."""
    csr = ref.adjacency()
    rows, cols = H(csr.row_ids()).astype(np.int64), H(csr.cols).astype(np.int64)
    pick = rng.choice(len(cols), min(len(cols), n_del), replace=False) if len(cols) else np.zeros(0, np.int64)
    ds, dd = rows[pick], cols[pick]
    if hub_drop and len(cols):
        deg = np.bincount(rows)
        hub = np.where(deg <= 2000, deg, 0).argmax()
        at = np.flatnonzero(rows == hub)[2:]
        ds, dd = np.concatenate([ds, rows[at]]), np.concatenate([dd, cols[at]])
    ds = np.concatenate([ds, rng.integers(0, nv, n_del // 4)])
    dd = np.concatenate([dd, rng.integers(0, nv, n_del // 4)])
    s = np.concatenate([(rng.zipf(1.5, n_ins) % nv), rows[rng.integers(0, max(len(rows), 1), n_ins // 4)]
                        if len(rows) else np.zeros(0, np.int64)])
    d = np.concatenate([rng.integers(0, nv, n_ins), cols[rng.integers(0, max(len(cols), 1), n_ins // 4)]
                        if len(cols) else np.zeros(0, np.int64)])
    dkeys = set(((ds << 32) | dd).tolist())
    keep = np.array([k not in dkeys for k in ((s << 32) | d).tolist()], dtype=bool)
    s, d = s[keep].astype(np.int32), d[keep].astype(np.int32)
    w = rng.random(len(s)).astype(np.float32)
    ins = CSRBatch.from_edges(xp, xp.asarray(s), xp.asarray(d), xp.asarray(w))
    dele = CSRBatch.from_edges(xp, xp.asarray(ds.astype(np.int32)), xp.asarray(dd.astype(np.int32)))
    return ins, dele


@st.composite
def streams(draw):
    ops = draw(operations())
    opts = draw(st.sampled_from([{}, {"block_size": 1}, {"block_size": 2}, {"block_size": 3},
                                 {"block_size": 5, "min_pool_blocks": 1, "grow_min_entries": 0, "headroom": 1.0},
                                 {"block_sizing": "paper"}, SMALL_CLASSES,
                                 {"min_block_size": 1, "target_blocks": 2, "min_pool_blocks": 1,
                                  "grow_min_entries": 0}]))
    return opts, ops


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.integers(0, 2**32 - 1))
def test_random_streams_match_oracle(stream, seed):
    opts, ops = stream
    rng = np.random.default_rng(seed)
    g = create("graphvine", XP, **opts)
    o = Oracle(keep_self_loops=True)
    for op in ops:
        apply_op(g, o, op, rng)
        check_invariants(g, o)
        check_against(g, o, rng)


# ---------------------------------------------------------------------------
# the paper's mechanisms, one by one
# ---------------------------------------------------------------------------
def test_registry_and_interface():
    g = create("graphvine", XP)
    assert isinstance(g, GraphVine) and g.name == "graphvine"
    assert g.num_vertices == 0 and g.num_edges == 0
    assert H(g.contains(XP.asarray([0]), XP.asarray([1]))).tolist() == [False]
    assert g.adjacency().num_edges == 0
    assert H(g.delete_edges(batch([0], [1]))).tolist() == [False]
    m = g.memory()
    for key in ("reserved_bytes", "used_bytes", "blocks_in_use", "blocks_free", "block_size",
                "average_block_fill"):
        assert key in m


def test_block_size_is_average_degree_of_first_batch_nonzero_vertices():
    g = create("graphvine", XP, block_sizing="paper")
    g.insert_vertices(XP.arange(100, dtype=np.int32))     # zero-degree vertices do not count
    # degrees 2, 4, 9 -> average 5
    src = [0] * 2 + [1] * 4 + [7] * 9
    dst = list(range(10, 12)) + list(range(10, 14)) + list(range(10, 19))
    g.insert_edges(batch(src, dst))
    assert g.block_size == 5
    # later batches keep it
    g.insert_edges(batch([3] * 40, list(range(20, 60))))
    assert g.block_size == 5
    check_invariants(g)
    assert create("graphvine", XP, block_size=3).insert_edges(batch([0], [1])) is not None


def test_tree_shape_after_several_batches():
    """Vertex 0 grows 1 -> 3 -> 9 -> 23 blocks over four batches: links follow CBT indices."""
    g = create("graphvine", XP, block_size=2)
    total = 0
    for n_new in (1, 5, 12, 28):
        dst = list(range(total + 1, total + 1 + n_new))
        # other vertices in the same batch interleave their pops with vertex 0's
        g.insert_edges(batch([0] * n_new + [1] * 3, [*dst, total + 1, total + 2, total + 3]))
        total += n_new
        check_invariants(g)
        blocks = tree_blocks(g, 0)
        assert len(blocks) == math.ceil(total / 2)
        left, right = H(g.block_left), H(g.block_right)
        for k in range(1, len(blocks)):      # parent of block k is block (k-1)//2
            parent = blocks[(k - 1) // 2]
            assert (left if k % 2 == 1 else right)[parent] == blocks[k]
    depth = int(math.floor(math.log2(len(tree_blocks(g, 0)))))
    assert depth == 4                        # 23 blocks: a complete tree of height 4


def test_bit_string_locates_ninth_block_as_in_figure_4():
    g = create("graphvine", XP, block_size=1)
    g.insert_edges(batch([0] * 9, list(range(1, 10))))
    blocks = tree_blocks(g, 0)
    left, right = H(g.block_left), H(g.block_right)
    # the ninth block (k = 8, k+1 = 0b1001): left, left, right from the root
    b = blocks[0]
    for bit in "001":
        b = (right if bit == "1" else left)[b]
    assert b == blocks[8] == int(H(g.locate_blocks(XP.asarray([0]), XP.asarray([8])))[0])


def test_queue_reuse_after_deletes():
    g = create("graphvine", XP, block_size=4, headroom=2.0)
    g.insert_edges(batch(np.repeat(np.arange(10), 8), np.tile(np.arange(20, 28), 10)))
    pool = g.pool_blocks
    used_before = {b for v in range(10) for b in tree_blocks(g, v)}
    g.delete_edges(batch(np.repeat(np.arange(5), 8), np.tile(np.arange(20, 28), 5)))
    freed = used_before - {b for v in range(10) for b in tree_blocks(g, v)}
    assert len(freed) == 10 and g.blocks_in_use == 10
    check_invariants(g)
    # the next inserts pop exactly the freed blocks (they sit at the queue head after the initial free ones)
    head_free = H(g.class_free_ids(0))
    assert freed <= set(head_free.tolist())
    g.insert_edges(batch(np.repeat(np.arange(10, 20), 8), np.tile(np.arange(30, 38), 10)))
    assert g.pool_blocks == pool and g.stats["pool_grows"] == 0
    check_invariants(g)


def test_growing_the_pool_keeps_each_rings_free_ids_in_order():
    """_add_chunks re-lays the queue in one gather: every class's ring is its free ids as the old ring held
    them (head first, wrapped), then the new chunk's ids, then empty slots; the counters restart at 0."""
    rng = np.random.default_rng(9)
    g = create("graphvine", XP, headroom=1.0, min_pool_blocks=4)
    for step in range(12):               # grow, free and reuse blocks of several classes: heads wrap around
        src = rng.integers(0, 40, 300)
        g.insert_edges(batch(src, rng.integers(0, 400, 300)))
        if step % 3 == 2:
            keys = sorted(edges_of(g))
            gone = [keys[i] for i in rng.choice(len(keys), len(keys) // 2, replace=False)]
            g.delete_edges(batch([a for a, _ in gone], [b for _, b in gone]))
    free = [H(g.class_free_ids(c)).tolist() for c in range(g.num_classes)]
    assert any(h % max(z, 1) for h, z in zip(g.cls_head, g.cls_blocks))      # some ring starts mid-way
    first, grown = g.pool_blocks, {c: 3 + c for c in range(0, g.num_classes, 2)}
    g._add_chunks(grown)
    queue, ids = H(g.queue).tolist(), first
    for c in range(g.num_classes):
        new = list(range(ids, ids + grown.get(c, 0)))
        ids += grown.get(c, 0)
        ring = queue[g.cls_qstart[c]:g.cls_qstart[c] + g.cls_blocks[c]]
        assert g.cls_head[c] == 0 and g.cls_tail[c] == len(free[c]) + len(new)
        assert ring == free[c] + new + [0] * (g.cls_blocks[c] - len(free[c]) - len(new))
    check_invariants(g)
    g.insert_edges(batch(rng.integers(0, 60, 500), rng.integers(0, 400, 500)))      # and it still works
    check_invariants(g)


def test_pool_grows_by_25_percent_at_80_percent():
    g = create("graphvine", XP, block_size=1, headroom=1.0, min_pool_blocks=10, grow_min_entries=0)
    g.insert_edges(batch([0] * 8, list(range(1, 9))))        # need 8 -> 10 blocks, 80% used
    assert g.pool_blocks == 10 and g.blocks_in_use == 8 and g.stats["pool_grows"] == 0
    g.insert_edges(batch([0], [9]))                          # 9 > 0.8 * 10: grow once, by 25%
    assert g.pool_blocks == math.ceil(10 * GROW_BY) == 13 and g.stats["pool_grows"] == 1
    check_invariants(g)
    sizes = [g.pool_blocks]
    for i in range(10, 60):
        g.insert_edges(batch([1], [i]))
        if g.pool_blocks != sizes[-1]:
            assert g.pool_blocks == math.ceil(sizes[-1] * GROW_BY)
            sizes.append(g.pool_blocks)
        assert g.blocks_in_use <= GROW_AT * g.pool_blocks
    assert len(sizes) > 3
    assert edges_of(g) == {**{(0, i): 1.0 for i in range(1, 10)}, **{(1, i): 1.0 for i in range(10, 60)}}
    check_invariants(g)


def test_pool_grows_by_at_least_grow_min_entries():
    """A class grows by 25% and by at least ``grow_min_entries`` entries (the default's floor keeps a growing
    stream of small batches from growing each class in tiny steps); without the floor the same stream grows
    in smaller steps, more often."""
    rng = np.random.default_rng(4)
    batches = [(rng.integers(0, 3000, 2000), rng.integers(0, 3000, 2000)) for _ in range(12)]
    growths = {}
    for floor in (0, 1 << 12):
        g = create("graphvine", XP, grow_min_entries=floor, min_pool_blocks=1, headroom=1.0)
        for s, d in batches:
            g.insert_edges(batch(s, d))
        check_invariants(g)
        first = {}
        for c, base, nxt in zip(g.chunk_class, g.chunk_base, [*g.chunk_base[1:], g.entries]):
            if c in first:                                   # a growth's chunk (the class's first is its reservation)
                assert nxt - base >= floor - g.class_sizes[c] + 1, (c, nxt - base)
            first.setdefault(c, base)
        growths[floor] = len(g.chunk_first) - len(first)
    assert growths[1 << 12] < growths[0], growths


def test_pool_arrays_keep_their_addresses_while_their_buffers_have_room():
    """The pool's arrays sit at the front of buffers with room to grow (the fused path's captured CUDA graphs name
    their addresses): a growth that fits writes in place, one that does not moves them to a larger buffer; the
    room past the arrays counts as reserved memory."""
    def address(a):
        return a.data.ptr if hasattr(a.data, "ptr") else a.__array_interface__["data"][0]

    rng = np.random.default_rng(6)
    g = create("graphvine", XP, block_size=2, grow_min_entries=0, min_pool_blocks=1, headroom=1.0)
    o = Oracle(keep_self_loops=True)
    kept = moved = 0
    for _ in range(25):
        s, d = rng.integers(0, 200, 150), rng.integers(0, 2000, 150)
        chunks = len(g.chunk_first)
        before = [address(a) for a in (g.block_cols, g.block_left, g.queue)] if g.queue is not None else None
        g.insert_edges(batch(s, d))
        for a, b in zip(s, d):
            o.apply(1, int(a), int(b), 1.0)
        if before is not None and len(g.chunk_first) > chunks:
            after = [address(a) for a in (g.block_cols, g.block_left, g.queue)]
            kept += after == before
            moved += after != before
        slack = g._buffer_slack_bytes()
        m = g.memory()
        assert m["reserved_bytes"] == (VERTEX_ENTRY_BYTES * g.capacity + slack + g.pool_blocks * 16 + 8 * g.entries)
    assert kept >= 2 and moved >= 2, (kept, moved)
    assert edges_of(g) == o.edges
    check_invariants(g)


def test_first_reservation_is_measured_need_times_headroom():
    g = create("graphvine", XP, block_size=4, headroom=1.5, min_pool_blocks=1, grow_min_entries=0)
    g.insert_edges(batch(np.repeat(np.arange(100), 8), np.tile(np.arange(8), 100)))
    assert g.blocks_in_use == 200 and g.pool_blocks == 300 and g.stats["pool_grows"] == 0


def test_compaction_keeps_edges_dense_and_frees_blocks():
    rng = np.random.default_rng(1)
    g = create("graphvine", XP, block_size=3)
    o = Oracle(keep_self_loops=True)
    src = rng.integers(0, 30, 900)
    dst = rng.integers(0, 300, 900)
    g.insert_edges(batch(src, dst))
    for s, d in zip(src, dst):
        o.apply(1, int(s), int(d), 1.0)
    for frac in (0.3, 0.5, 0.9):
        present = list(o.edges)
        pick = rng.choice(len(present), int(len(present) * frac), replace=False)
        dels = [present[i] for i in pick]
        s, d = zip(*dels)
        assert H(g.delete_edges(batch(s, d))).all()
        for e in dels:
            o.apply(2, *e)
        check_invariants(g, o)
        deg = H(g.degree())
        assert g.blocks_in_use == int(sum(math.ceil(x / 3) for x in deg))
        assert edges_of(g) == o.edges


def test_memory_after_deleting_everything():
    rng = np.random.default_rng(2)
    g = create("graphvine", XP)
    src, dst = rng.integers(0, 200, 3000), rng.integers(0, 200, 3000)
    g.insert_edges(batch(src, dst))
    assert g.memory()["blocks_in_use"] > 0
    csr = g.adjacency()
    rows = H(csr.row_ids())
    g.delete_edges(batch(rows, H(csr.cols)))
    m = g.memory()
    assert g.num_edges == 0 and m["blocks_in_use"] == 0 and m["blocks_free"] == m["pool_blocks"]
    assert m["used_bytes"] == g.num_vertices * VERTEX_ENTRY_BYTES
    check_invariants(g)
    # and through vertex deletion
    g.insert_edges(batch(src, dst))
    g.delete_vertices(XP.arange(0, 200, 2, dtype=np.int32))
    g.delete_vertices(XP.arange(1, 200, 2, dtype=np.int32))
    m = g.memory()
    assert g.num_edges == 0 and g.num_vertices == 0 and m["used_bytes"] == 0
    assert m["blocks_in_use"] == 0 and m["blocks_free"] == m["pool_blocks"]
    check_invariants(g)


def test_vertex_id_reuse_starts_empty():
    g = create("graphvine", XP, block_size=2)
    g.insert_edges(batch([3, 3, 3, 5, 7], [5, 7, 9, 3, 3], [2.0, 2.0, 2.0, 2.0, 2.0]))
    s, d = g.delete_vertices(XP.asarray([3]))
    assert set(zip(H(s).tolist(), H(d).tolist())) == {(3, 5), (3, 7), (3, 9), (5, 3), (7, 3)}
    assert int(H(g.degree(XP.asarray([3])))[0]) == 0
    g.insert_vertices(XP.asarray([3]))
    assert 3 in H(g.vertices()).tolist()
    assert g.adjacency(XP.asarray([3])).num_edges == 0
    assert H(g.in_degree)[3] == 0
    assert not H(g.contains(XP.asarray([5, 7, 3]), XP.asarray([3, 3, 9]))).any()
    g.insert_edges(batch([3], [9], [4.0]))
    assert edges_of(g) == {(3, 9): 4.0}
    check_invariants(g)


def test_dictionary_doubles_and_keeps_data():
    g = create("graphvine", XP, block_size=2)
    g.insert_vertices(XP.asarray([0, 1, 2]))
    assert g.capacity == 4
    g.insert_edges(batch([0, 1, 2], [1, 2, 0], [1.0, 2.0, 3.0]))
    doublings = g.stats["dictionary_doublings"]
    g.insert_vertices(XP.asarray([4]))
    assert g.capacity == 8 and g.stats["dictionary_doublings"] == doublings + 1
    g.insert_edges(batch([1000], [0]))
    assert g.capacity == 1024
    assert edges_of(g) == {(0, 1): 1.0, (1, 2): 2.0, (2, 0): 3.0, (1000, 0): 1.0}
    assert g.memory()["vertex_capacity"] == 1024
    check_invariants(g)


def test_existing_edge_gets_weight_updated():
    g = create("graphvine", XP)
    g.insert_edges(batch([0, 0, 1], [1, 2, 2], [1.0, 1.0, 1.0]))
    mask = H(g.insert_edges(batch([0, 0, 1], [1, 3, 2], [5.0, 6.0, 7.0])))
    assert mask.tolist() == [False, True, False]
    assert edges_of(g) == {(0, 1): 5.0, (0, 2): 1.0, (0, 3): 6.0, (1, 2): 7.0}
    assert g.num_edges == 4


# ---------------------------------------------------------------------------
# device
# ---------------------------------------------------------------------------
def _cupy_or_skip():
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError
    except Exception:
        pytest.skip("needs CuPy and a CUDA device")
    return cupy


@pytest.mark.gpu
def test_gpu_matches_cpu_on_a_random_stream():
    cp = _cupy_or_skip()
    rng = np.random.default_rng(5)
    cpu, gpu = create("graphvine", np, block_size=3), create("graphvine", cp, block_size=3)
    for step in range(6):
        s, d = rng.integers(0, 500, 5000).astype(np.int32), rng.integers(0, 500, 5000).astype(np.int32)
        w = rng.random(5000).astype(np.float32)
        for g, xp in ((cpu, np), (gpu, cp)):
            b = CSRBatch.from_edges(xp, xp.asarray(s), xp.asarray(d), xp.asarray(w))
            (g.insert_edges if step % 3 != 2 else g.delete_edges)(b)
        if step == 4:
            cpu.delete_vertices(np.arange(0, 500, 7))
            gpu.delete_vertices(cp.arange(0, 500, 7))
    a, b = cpu.adjacency(), gpu.adjacency()
    assert np.array_equal(a.offsets, H(b.offsets))
    assert np.array_equal(a.cols, H(b.cols)) and np.array_equal(a.weights, H(b.weights))
    assert cpu.memory() == gpu.memory()


@pytest.mark.gpu
def test_fused_lookup_matches_array_program():
    cp = _cupy_or_skip()
    rng = np.random.default_rng(6)
    for bs in (None, 1, 7):
        g = create("graphvine", cp, **({} if bs is None else {"block_size": bs}))
        assert g.fused
        s, d = rng.integers(0, 3000, 40000), rng.integers(0, 3000, 40000)
        g.insert_edges(CSRBatch.from_edges(cp, cp.asarray(s), cp.asarray(d)))
        g.delete_edges(CSRBatch.from_edges(cp, cp.asarray(s[:9000]), cp.asarray(d[:9000])))
        qs = cp.asarray(np.concatenate([s, rng.integers(0, 3100, 20000)]))
        qd = cp.asarray(np.concatenate([d, rng.integers(0, 3100, 20000)]))
        g.fused = False
        unfused, unfused_w = g.contains(qs, qd), g.edge_weights(qs, qd)
        g.fused = True
        assert int(unfused.sum()) > 0
        for a, b in ((qs, qd), (qs.astype(cp.int32), qd.astype(cp.int32))):   # both kernel variants
            assert cp.array_equal(g.contains(a, b), unfused)
            assert np.array_equal(H(g.edge_weights(a, b)), H(unfused_w), equal_nan=True)


# ---------------------------------------------------------------------------
# size classes, re-homing, chunks (beyond the paper)
# ---------------------------------------------------------------------------
def test_degree_classes_give_each_vertex_blocks_of_its_degree():
    """Default sizing: classes 2, 4, ..., 4096; a vertex of count c gets blocks of about c/4 entries."""
    g = create("graphvine", XP)
    assert g.class_sizes == [2 ** s for s in range(1, 13)] and g.block_size is None
    degrees = {0: 1, 1: 5, 2: 40, 3: 1000, 4: 100_000}
    src = np.concatenate([np.full(d, v) for v, d in degrees.items()])
    dst = np.concatenate([np.arange(d) + 10 for d in degrees.values()])
    g.insert_edges(batch(src, dst))
    check_invariants(g)
    sizes = {v: g.class_sizes[int(H(g.block_class)[v])] for v in degrees}
    assert sizes == {0: 2, 1: 2, 2: 8, 3: 128, 4: 4096}
    nb = H(g.num_blocks)
    assert [int(nb[v]) for v in degrees] == [1, 3, 5, 8, 25]
    m = g.memory()
    assert m["blocks_in_use_by_size"] == {2: 4, 8: 5, 128: 8, 4096: 25}
    assert m["average_block_fill"] > 0.9


def test_rehoming_follows_the_degree_up_and_down():
    g = create("graphvine", XP, **SMALL_CLASSES)
    o = Oracle(keep_self_loops=True)
    classes = []
    for lo in range(0, 40, 4):                   # vertex 0 grows 4 edges a batch up to 40
        g.insert_edges(batch([0] * 4 + [1], [*range(lo + 2, lo + 6), lo + 2]))
        for d in list(range(lo + 2, lo + 6)):
            o.apply(1, 0, d, 1.0)
        o.apply(1, 1, lo + 2, 1.0)
        classes.append(int(H(g.block_class)[0]))
        check_invariants(g, o)
        assert edges_of(g) == o.edges
    # vertex 0 re-homed once (8 edges ask for the top class), vertex 1 at 4 edges and at 8
    assert classes == [2] + [3] * 9 and g.stats["rehomed"] == 3 and int(H(g.block_class)[1]) == 3
    # deleting all but one edge brings vertex 0 back to the smallest class
    g.delete_edges(batch([0] * 39, list(range(2, 41))))
    for d in range(2, 41):
        o.apply(2, 0, d)
    assert int(H(g.block_class)[0]) == 0 and int(H(g.num_blocks)[0]) == 1 and g.stats["rehomed"] == 4
    check_invariants(g, o)
    assert edges_of(g) == o.edges


def test_rehoming_keeps_the_batch_semantics():
    """An upsert and a repeated key in the batch that re-homes their vertex: last weight wins,
    the mask says new only for edges that were absent before the batch."""
    g = create("graphvine", XP, **SMALL_CLASSES)
    g.insert_edges(batch([0, 0], [1, 2], [1.0, 1.0]))
    assert int(H(g.block_class)[0]) == 1
    raw = CSRBatch(rows=XP.asarray(np.array([0], np.int32)), offsets=XP.asarray(np.array([0, 9])),
                   cols=XP.asarray(np.array([1, 3, 4, 5, 6, 7, 8, 9, 3], np.int32)),
                   weights=XP.asarray(np.arange(9, dtype=np.float32)))
    mask = H(g.insert_edges(raw))
    assert g.stats["rehomed"] == 1 and int(H(g.block_class)[0]) == 3
    assert mask.tolist() == [False, True, True, True, True, True, True, True, False]
    assert edges_of(g) == {(0, 1): 0.0, (0, 2): 1.0, (0, 3): 8.0, **{(0, c): float(c - 2) for c in range(4, 10)}}
    check_invariants(g)


def test_pool_grows_by_chunks_without_moving_blocks():
    g = create("graphvine", XP, min_pool_blocks=1, grow_min_entries=0, headroom=1.0)
    g.insert_edges(batch([0] * 8, list(range(1, 9))))
    blocks = tree_blocks(g, 0)
    before = {b: H(g.block_cols)[block_entries(g, b)[0]:][:2].tolist() for b in blocks}
    chunks = len(g.chunk_first)
    for v in range(1, 40):                              # new vertices of the same class grow it
        g.insert_edges(batch([v] * 8, list(range(100, 108))))
    assert len(g.chunk_first) > chunks and g.stats["pool_grows"] > 0
    assert tree_blocks(g, 0) == blocks, "old blocks keep their ids"
    assert {b: H(g.block_cols)[block_entries(g, b)[0]:][:2].tolist() for b in blocks} == before
    assert g.memory()["pool_chunks"] == len(g.chunk_first)
    check_invariants(g)


def test_memory_after_churn_on_rmat_within_1_5x_csr():
    """R-MAT scale 14, bulk load, delete and re-insert half: used bytes per live edge <= 1.5x a CSR's
    (int64 offsets, int32 columns, float32 weights), where the paper's single block size is not."""
    from vinestream.stream.bench.structures import rmat_edges
    src, dst = rmat_edges(np, 14, 16, seed=1)
    keep = src != dst
    b = CSRBatch.from_edges(np, src[keep], dst[keep])
    s, d = H(b.sources()), H(b.cols)
    n = 1 << 14
    ratios = {}
    for sizing in ("degree", "paper"):
        g = create("graphvine", XP, block_sizing=sizing)
        g.insert_vertices(XP.arange(n, dtype=np.int32))
        g.insert_edges(batch(s, d))
        pick = np.random.default_rng(0).permutation(len(s))[: len(s) // 2]
        g.delete_edges(batch(s[pick], d[pick]))
        g.insert_edges(batch(s[pick], d[pick]))
        live = g.num_edges
        assert live == len(s)
        csr = ((n + 1) * 8 + live * 8) / live
        ratios[sizing] = g.memory()["used_bytes"] / live / csr
    assert ratios["degree"] <= 1.5 < ratios["paper"], ratios


# ---------------------------------------------------------------------------
# options (declared in GraphVine.options_spec; the contract suite checks every structure's)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("options, expected", [
    ({"blocksize": 8}, "graphvine: unknown option 'blocksize' (did you mean 'block_size'?); its options: "),
    ({"bogus": 1}, "graphvine: unknown option 'bogus'; its options: block_size, block_sizing, "),
    ({"block_size": 0}, "graphvine option block_size=0: expected an integer from 1 to 4096 (max_block_size)"),
    ({"block_size": -3}, "graphvine option block_size=-3: expected an integer from 1 to 4096"),
    ({"block_size": 2.5}, "graphvine option block_size=2.5: expected an integer from 1 to 4096"),
    ({"block_size": "abc"}, "graphvine option block_size='abc': expected an integer from 1 to 4096"),
    ({"block_size": 10**6}, "graphvine option block_size=1000000: expected an integer from 1 to 4096"),
    ({"block_size": 64, "max_block_size": 32}, "block_size=64: expected an integer from 1 to 32 (max_block_size)"),
    ({"max_block_size": 1 << 17}, "graphvine option max_block_size=131072: expected an integer from 1 to 65536"),
    ({"block_sizing": "Paper"}, "graphvine option block_sizing='Paper': expected one of 'degree', 'paper'"),
    ({"fused": "false"}, "graphvine option fused='false': expected True or False"),
    ({"target_blocks": 0}, "graphvine option target_blocks=0: expected an integer from 1 to"),
    ({"headroom": 0.5}, "graphvine option headroom=0.5: expected a number >= 1"),
    ({"max_block_size": 1}, "need min_block_size (2) <= max_block_size (1)"),
])
def test_wrong_options_are_one_line_naming_the_option(options, expected):
    """The QA's cases through the public API: a misspelt option was ignored, 0 and -3 clamped to 1, 2.5
    truncated to 2, 'abc' a bare int() error; now each is a ValueError naming the option and the range."""
    import vinestream
    with pytest.raises(ValueError) as exc:
        vinestream.build_pipeline(structure="graphvine", backend="cpu", structure_options=options)
    assert expected in str(exc.value) and "\n" not in str(exc.value)


def test_options_take_whole_numbers_and_internal_switches():
    g = create("graphvine", XP, block_size=np.int64(8), headroom=2, min_pool_blocks=4.0)
    assert g.block_size == 8 and g.class_sizes == [8] and g.headroom == 2.0 and g.min_pool_blocks == 4
    assert type(g.min_pool_blocks) is int and type(g.headroom) is float
    # the test-only switches of the fused paths are still taken (and checked)
    g = create("graphvine", XP, fused=False, keyside=False, keyside_small=True, shift="staged", graphs="emulate")
    assert (g.keyside, g.keyside_small, g.shift, g.graphs) == (False, True, "staged", "emulate")
    with pytest.raises(ValueError, match="graphvine option shift='tile': expected one of 'tiles', 'staged'"):
        create("graphvine", XP, shift="tile")


# ---------------------------------------------------------------------------
# the paper's rule before it has chosen its block size
# ---------------------------------------------------------------------------
FIRST_BATCHES_WITHOUT_EDGES = {
    "empty": ([], [], []),
    "add_vertex": (["add_vertex", "add_vertex"], [1, 2], [None, None]),
    "delete_absent": (["add_vertex", "add_vertex", "delete"], [1, 2, 1], [None, None, 2]),
}


@pytest.mark.parametrize("first", list(FIRST_BATCHES_WITHOUT_EDGES))
@pytest.mark.parametrize("fused", [False, True], ids=["array", "fused"])
def test_paper_sizing_first_batch_without_edges(first, fused, monkeypatch):
    """``block_sizing="paper"`` picks its one size from the first insert that has edges; a first batch with
    none (empty, only add_vertex, a delete of an absent edge) crashed the pipeline's memory() read
    (AttributeError: no cls_blocks).  Every method works before the size is chosen, and then a normal batch
    chooses it, the graph equal to the oracle's after each batch.  The fused path runs its CUDA kernels on
    CuPy, their host emulation on NumPy."""
    import vinestream
    from tests.test_sync_budget import _rows, assert_graph_matches
    on_gpu = backend.is_gpu(XP)
    if fused and not on_gpu:
        from tests import graphvine_emulation as emu
        from vinestream.structures import graphvine_kernels as gk
        if not emu.available():
            pytest.skip("needs g++ for the host emulation of the graphvine kernels")
        monkeypatch.setattr(gk, "launcher", emu.HostLauncher())
    p = vinestream.build_pipeline(structure="graphvine", backend="gpu" if on_gpu else "cpu",
                                  structure_options={"block_sizing": "paper", "fused": fused})
    g = p.structure
    assert g.fused == (fused and on_gpu)
    if fused and not on_gpu:
        g.fused, g.graphs = True, "emulate"
    oracle = Oracle()
    op, src, dst = FIRST_BATCHES_WITHOUT_EDGES[first]
    events = vinestream.events(op=op, src=src, dst=dst)
    p.apply(events)
    oracle.apply_all(_rows(events))
    assert g.class_sizes is None and g.block_size is None      # nothing to size from yet
    assert_graph_matches(p, oracle)
    m = g.memory()
    assert m["blocks_in_use"] == 0 and m["pool_blocks"] == 0 and m["block_size"] == 0
    assert m["used_bytes"] <= m["reserved_bytes"] and m["blocks_in_use_by_size"] == {}
    assert g.pool_blocks == 0 and g.blocks_free == 0 and g.num_classes == 0
    q = XP.asarray(np.array([0, 1], np.int32))
    assert H(g.contains(q, q[::-1])).tolist() == [False, False]
    assert np.isnan(H(g.edge_weights(q, q[::-1]))).all()
    assert H(g.degree()).sum() == 0 and g.adjacency().num_edges == 0 and g.adjacency(q).num_edges == 0
    assert H(g.delete_edges(batch([0], [1]))).tolist() == [False]
    assert g.class_sizes is None
    # a normal batch: the paper's size, the average degree of its non-zero-degree sources (2 and 4 -> 3)
    events = vinestream.events(op=["add"] * 6 + ["delete"], src=[1, 1, 2, 2, 2, 2, 1], dst=[2, 3, 1, 3, 4, 5, 9])
    p.apply(events)
    oracle.apply_all(_rows(events))
    assert g.block_size == 3 and g.class_sizes == [3]
    assert_graph_matches(p, oracle)
    check_invariants(g)
    assert g.memory()["blocks_in_use"] == 3
    events = vinestream.events(op=["delete", "delete_vertex", "add"], src=[2, 1, 4], dst=[5, None, 2])
    p.apply(events)
    oracle.apply_all(_rows(events))
    assert_graph_matches(p, oracle)
    check_invariants(g)
