"""Synthetic event logs: R-MAT graphs, deletions mixed into insert-only logs, random events.

R-MAT (Chakrabarti, Zhan, Faloutsos 2004; the Graph500 generator) is the
synthetic input the GPU dynamic-graph papers benchmark on (faimGraph, Hornet,
GraphVine).  SNAP's temporal logs only insert, so :func:`mix_deletions` adds
realistic edge and vertex deletions to them.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from vinestream.stream.events.schema import EVENT_SCHEMA, Op

__all__ = ["mix_deletions", "random_events", "rmat_edges"]


def rmat_edges(xp, scale: int, edge_factor: int, a: float = 0.57, b: float = 0.19, c: float = 0.19,
               seed: int = 0):
    """``edge_factor * 2**scale`` R-MAT edges on ``2**scale`` vertices as (src, dst) int64 xp arrays.

    For each of the ``scale`` bits every edge picks a quadrant at once (probabilities a, b, c,
    d = 1 - a - b - c): a loop over bits, vectorised over all edges.  Duplicates and
    self-loops are kept, as in Graph500; the pipeline's batcher resolves them.
    """
    if not (a >= 0 and b >= 0 and c >= 0 and a + b + c <= 1):
        raise ValueError("R-MAT probabilities must be >= 0 with a + b + c <= 1")
    m = int(edge_factor) * (1 << int(scale))
    rng = xp.random.RandomState(seed)
    src = xp.zeros(m, dtype=xp.int64)
    dst = xp.zeros(m, dtype=xp.int64)
    for bit in range(int(scale)):
        r = rng.random_sample(m)
        down = r >= a + b                          # quadrants c, d: the row bit is set
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)   # quadrants b, d: the column bit
        src |= down.astype(xp.int64) << bit
        dst |= right.astype(xp.int64) << bit
    return src, dst


def rmat_simple_edges(xp, scale: int, edge_factor: int, seed: int = 0, *, relabel: bool = False):
    """The simple graph under :func:`rmat_edges`: distinct (src, dst) without self-loops, sorted by key.

    ``relabel`` applies a random permutation to the vertex ids so that degree does
    not follow the id (hubs are otherwise the low ids).
    """
    src, dst = rmat_edges(xp, scale, edge_factor, seed=seed)
    if relabel:
        perm = xp.random.RandomState(seed + 1).permutation(1 << int(scale)).astype(xp.int64)
        src, dst = perm[src], perm[dst]
    keep = src != dst
    keys = xp.sort((src[keep] << 32) | dst[keep])      # sort, then drop repeats: np.unique hashes on NumPy >= 2.3
    keys = keys[xp.concatenate([xp.ones(min(keys.shape[0], 1), dtype=bool), keys[1:] != keys[:-1]])]
    return keys >> 32, keys & 0xFFFFFFFF


def mix_deletions(events: pa.Table, *, edge_delete_fraction: float = 0.1,
                  vertex_delete_fraction: float = 0.0, seed: int = 0) -> pa.Table:
    """Insert deletions into an event log at random later positions.

    - ``edge_delete_fraction`` of the add-edge rows each get a delete-edge event of the same
      (src, dst) placed uniformly at random after that row;
    - ``vertex_delete_fraction`` of the distinct vertices each get one delete-vertex event
      placed uniformly at random after the vertex first appears.

    An inserted event takes the ``ts`` of the row it follows, so a time-sorted log stays
    sorted.  All NumPy: one stable argsort merges the new rows into the log.
    """
    rng = np.random.default_rng(seed)
    n = events.num_rows
    events = events.cast(EVENT_SCHEMA)
    if n == 0:
        return events
    op = events.column("op").to_numpy()
    src = events.column("src").to_numpy()
    dst = events.column("dst").fill_null(0).to_numpy()
    ts = events.column("ts")

    add = np.flatnonzero(op == Op.ADD_EDGE)
    k_e = int(round(edge_delete_fraction * len(add)))
    picked = np.sort(rng.choice(add, size=k_e, replace=False)) if k_e else np.zeros(0, np.int64)
    e_after = picked + (rng.random(k_e) * (n - picked)).astype(np.int64)     # in [row, n-1]

    # first appearance of every vertex (as src of any op, or dst of an edge op)
    is_edge = (op == Op.ADD_EDGE) | (op == Op.DELETE_EDGE)
    ids = np.concatenate([src, dst[is_edge]])
    rows = np.concatenate([np.arange(n), np.flatnonzero(is_edge)])
    order = np.argsort(rows, kind="stable")
    vertices, first_idx = np.unique(ids[order], return_index=True)
    first_row = rows[order][first_idx]
    k_v = int(round(vertex_delete_fraction * len(vertices)))
    chosen = rng.choice(len(vertices), size=k_v, replace=False) if k_v else np.zeros(0, np.int64)
    v_first = first_row[chosen]
    v_after = v_first + (rng.random(k_v) * (n - v_first)).astype(np.int64)

    # merge: original row i has key 2i, a new row placed after row p has key 2p + 1
    keys = np.concatenate([2 * np.arange(n), 2 * e_after + 1, 2 * v_after + 1])
    order = np.argsort(keys, kind="stable")
    new_op = np.concatenate([op, np.full(k_e, int(Op.DELETE_EDGE), np.int8),
                             np.full(k_v, int(Op.DELETE_VERTEX), np.int8)])
    new_src = np.concatenate([src, src[picked], vertices[chosen]])
    new_dst = pa.concat_arrays([events.column("dst").combine_chunks(),
                                pa.array(dst[picked], pa.int64()), pa.nulls(k_v, pa.int64())])
    new_w = pa.concat_arrays([events.column("weight").combine_chunks(), pa.nulls(k_e + k_v, pa.float32())])
    ts_all = ts.combine_chunks()
    new_ts = pa.concat_arrays([ts_all, ts_all.take(pa.array(e_after)), ts_all.take(pa.array(v_after))])
    merged = pa.Table.from_arrays([pa.array(new_op, pa.int8()), pa.array(new_src, pa.int64()),
                                   new_dst, new_w, new_ts], schema=EVENT_SCHEMA)
    return merged.take(pa.array(order))


def random_events(n: int, num_vertices: int, seed: int = 0,
                  op_probs: Sequence[float] = (0.7, 0.2, 0.05, 0.05), *, weighted: bool = True,
                  start_ms: int = 1_700_000_000_000) -> pa.Table:
    """``n`` random events over vertices ``0..num_vertices-1`` (EVENT_SCHEMA).

    ``op_probs`` are the probabilities of add edge, delete edge, add vertex, delete vertex;
    ``ts`` increases by one millisecond per event; a fifth of edge weights are null (= 1.0).
    """
    rng = np.random.default_rng(seed)
    p = np.asarray(op_probs, dtype=np.float64)
    op = (rng.choice(4, size=n, p=p / p.sum()) + 1).astype(np.int8)
    src = rng.integers(0, num_vertices, size=n, dtype=np.int64)
    dst = rng.integers(0, num_vertices, size=n, dtype=np.int64)
    edge = op <= Op.DELETE_EDGE
    w = rng.random(n).astype(np.float32)
    w_null = ~edge | (rng.random(n) < 0.2) | (not weighted)
    return pa.Table.from_arrays([
        pa.array(op), pa.array(src), pa.array(dst, mask=~edge), pa.array(w, pa.float32(), mask=w_null),
        pa.array(start_ms + np.arange(n, dtype=np.int64), pa.timestamp("ms")),
    ], schema=EVENT_SCHEMA)
