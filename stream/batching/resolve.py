"""Net effect of a batch of events: what one-at-a-time application would leave behind.

DESIGN.md defines a batch's meaning as applying its events in order.  This
module computes the same end state with a handful of sorts and scatters, so
that the structure can apply it as bulk phases:

* for each vertex: the index of its last ``delete_vertex`` and of its last
  creating event (``add_vertex``, or an edge insert naming it);
* an edge event is *effective* when it comes after the last deletion of both
  endpoints (an earlier one was wiped out with the vertex);
* per edge key, the last effective event decides: add -> inserted with its
  weight, delete -> deleted;
* a vertex exists afterwards iff its last creation comes after its last
  deletion, or it existed before and was not deleted.

The result is a set of vertex deletions (old vertices deleted in the batch,
possibly re-created), a set of vertex creations, and disjoint edge insert and
delete sets.  All on ``xp``; no Python loop over events.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vinestream.stream.events.schema import Op
from vinestream.structures.array_ops import repeat_index, scatter_max, unique_inverse
from vinestream.structures.backend import asarray

NONE = -1  # "no such event" index
# plain ints: CuPy does not take IntEnum members as scalars in comparisons
ADD_EDGE, DELETE_EDGE = int(Op.ADD_EDGE), int(Op.DELETE_EDGE)
ADD_VERTEX, DELETE_VERTEX = int(Op.ADD_VERTEX), int(Op.DELETE_VERTEX)


@dataclass
class EventArrays:
    """An event batch as ``xp`` arrays (nulls filled: dst 0 for vertex ops, weight 1.0)."""
    op: object
    src: object
    dst: object
    weight: object

    @property
    def size(self) -> int:
        return int(self.op.shape[0])

    @staticmethod
    def from_table(xp, table: pa.Table) -> EventArrays:
        def column(name, dtype, fill):
            col = table.column(name)
            if col.null_count:
                col = pc.fill_null(col, fill)
            return asarray(xp, col.to_numpy(), dtype=dtype)
        return EventArrays(op=column("op", np.int8, 0), src=column("src", np.int64, 0),
                           dst=column("dst", np.int64, 0), weight=column("weight", np.float32, 1.0))


@dataclass
class NetEffect:
    """What a batch changes, in external ids on ``xp``."""
    deleted_vertices: object      # existed before the batch and were deleted in it (maybe re-created)
    created_vertices: object      # exist after the batch and did not before, or were re-created
    insert_src: object            # edge keys whose last effective event is an add (distinct keys)
    insert_dst: object
    insert_weight: object
    delete_src: object            # edge keys whose last effective event is a delete, on old vertices
    delete_dst: object
    self_loops: int               # dropped self-loop events
    events: int                   # events in the batch (before mirroring)


def prepare(xp, events: EventArrays, *, undirected: bool, keep_self_loops: bool):
    """Drop self-loops (unless kept) and mirror edge events for undirected graphs.

    Returns (events, dropped_self_loops).  Mirroring keeps event order: event i
    becomes rows 2i (as given) and 2i+1 (reversed) for edge ops.
    """
    is_edge = (events.op == ADD_EDGE) | (events.op == DELETE_EDGE)
    loop = is_edge & (events.src == events.dst)
    dropped = int(loop.sum())
    if dropped and not keep_self_loops:
        keep = ~loop
        events = EventArrays(events.op[keep], events.src[keep], events.dst[keep], events.weight[keep])
        is_edge = is_edge[keep]
    if undirected:
        # mirror rows of edge ops; the mirror of a self-loop is itself, so skip it
        mirror = is_edge & (events.src != events.dst)
        idx = repeat_index(xp, 1 + mirror.astype(np.int64))
        second = xp.zeros(idx.shape[0], dtype=bool)
        second[1:] = idx[1:] == idx[:-1]           # the repeated row is the mirror
        src = xp.where(second, events.dst[idx], events.src[idx])
        dst = xp.where(second, events.src[idx], events.dst[idx])
        events = EventArrays(events.op[idx], src, dst, events.weight[idx])
    return events, (dropped if not keep_self_loops else 0)


def net_effect(xp, events: EventArrays, existed_before, *, undirected: bool = False,
               keep_self_loops: bool = False) -> NetEffect:
    """Resolve a batch (see module docstring).

    ``existed_before(ids) -> bool array`` tells which external ids were vertices
    before the batch (the vertex map's lookup).
    """
    n_events = events.size
    events, self_loops = prepare(xp, events, undirected=undirected, keep_self_loops=keep_self_loops)
    op, src, dst, w = events.op, events.src, events.dst, events.weight
    n = events.size
    idx = xp.arange(n, dtype=np.int64)
    is_edge = (op == ADD_EDGE) | (op == DELETE_EDGE)
    is_add_edge = op == ADD_EDGE
    is_add_vertex = op == ADD_VERTEX
    is_del_vertex = op == DELETE_VERTEX

    # Every vertex the batch names, and batch-local positions of src / dst (dst of a
    # vertex op is its src, so it names nothing new).
    verts, pos = unique_inverse(xp, xp.concatenate([src, xp.where(is_edge, dst, src)]))
    src_pos, dst_pos = pos[:n], pos[n:]

    last_delete = xp.full(verts.shape[0], NONE, dtype=np.int64)
    scatter_max(xp, last_delete, src_pos[is_del_vertex], idx[is_del_vertex])
    last_create = xp.full(verts.shape[0], NONE, dtype=np.int64)
    creator = is_add_vertex | is_add_edge
    scatter_max(xp, last_create, src_pos[creator], idx[creator])
    scatter_max(xp, last_create, dst_pos[is_add_edge], idx[is_add_edge])

    # Edge events after the last deletion of both endpoints; per key the last one decides.
    effective = is_edge & (idx > last_delete[src_pos]) & (idx > last_delete[dst_pos])
    e_src_pos, e_dst_pos, e_idx = src_pos[effective], dst_pos[effective], idx[effective]
    key = (e_src_pos << 32) | e_dst_pos
    order = xp.argsort(key, kind="stable")            # stable: events of a key stay in time order
    key_sorted = key[order]
    is_last = xp.ones(key_sorted.shape[0], dtype=bool)
    is_last[:-1] = key_sorted[1:] != key_sorted[:-1]
    deciding = e_idx[order[is_last]]
    decide_add = op[deciding] == ADD_EDGE

    # Vertex existence before / after.
    before = existed_before(verts)
    deleted = last_delete >= 0
    after = (last_create > last_delete) | (before & ~deleted)
    created = after & ~(before & ~deleted)

    ins = deciding[decide_add]
    dels = deciding[~decide_add]
    # A delete only matters on an edge between vertices that existed and were not deleted here.
    untouched_old = before & ~deleted
    dels = dels[untouched_old[src_pos[dels]] & untouched_old[dst_pos[dels]]]

    return NetEffect(
        deleted_vertices=verts[before & deleted],
        created_vertices=verts[created],
        insert_src=src[ins], insert_dst=dst[ins], insert_weight=w[ins],
        delete_src=src[dels], delete_dst=dst[dels],
        self_loops=self_loops, events=n_events,
    )
