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

**Host syncs.**  On a GPU every result size the host must learn is a
device -> host transfer.  Nothing here is compacted until the end: vertices
live in *rank space* (an event's vertex is the rank of its id among the
batch's sorted ids, arrays are sized by the 2n upper bound and a slot past the
number of distinct ids is ignored), filters become sentinels or masks, and the
sizes of the four outputs are fetched together in one transfer before they are
compacted (``array_ops.compact``); dropped self-loops and missing mirrors
become no-op rows rather than being filtered out.  A batch costs one transfer:
the output sizes, the dropped self-loops and the number of distinct sources of
the inserts and of the deletes (which the CSR phase needs), read together.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vinestream.stream.events.device import DeviceEvents
from vinestream.stream.events.schema import Op
from vinestream.structures.array_ops import compact, scatter_max
from vinestream.structures.backend import asarray

NONE = -1  # "no such event" index
NO_OP = 0  # a row that names a vertex and changes nothing (a dropped self-loop, a missing mirror)
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
    def from_table(xp, table: pa.Table | DeviceEvents) -> EventArrays:
        """From an Arrow batch (copied to ``xp``), or a :class:`DeviceEvents` batch already there (no copy)."""
        if isinstance(table, DeviceEvents):
            return EventArrays(*table.arrays(xp))

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
    insert_rows: int | None = None   # distinct sources of the inserts / of the deletes (the rows of
    delete_rows: int | None = None   # their CSR batches: known, they cost the CSR phase no transfer)
    revived: int | None = None       # created vertices the vertex map revives (see net_effect)


def prepare(xp, events: EventArrays, *, undirected: bool, keep_self_loops: bool):
    """Neutralise self-loops (unless kept) and mirror edge events for undirected graphs.

    Returns (events, dropped self-loops as a device scalar).  Nothing is compacted, so
    nothing is read back: a dropped self-loop becomes a no-op row (``NO_OP``, which
    names its vertex but changes nothing), and mirroring doubles the rows, event
    ``i`` becoming rows ``2i`` (as given) and ``2i+1`` (reversed for an edge op
    between two vertices, a no-op otherwise), which keeps event order.
    """
    n = events.size
    is_edge = (events.op == ADD_EDGE) | (events.op == DELETE_EDGE)
    loop = is_edge & (events.src == events.dst)
    dropped = loop.sum() if not keep_self_loops else xp.zeros((), dtype=np.int64)
    op = events.op
    if not keep_self_loops:
        op = xp.where(loop, np.int8(NO_OP), op)
        is_edge = is_edge & ~loop
    events = EventArrays(op, events.src, events.dst, events.weight)
    if undirected and n:
        # the mirror of a self-loop is itself: those rows become no-ops too
        mirror = is_edge & (events.src != events.dst)
        idx = xp.arange(2 * n, dtype=np.int64) // 2
        second = (xp.arange(2 * n, dtype=np.int64) % 2) == 1
        src, dst = events.src[idx], events.dst[idx]
        events = EventArrays(xp.where(second & ~mirror[idx], np.int8(NO_OP), events.op[idx]),
                             xp.where(second, dst, src), xp.where(second, src, dst), events.weight[idx])
    return events, dropped


def net_effect(xp, events: EventArrays, existed_before, *, undirected: bool = False,
               keep_self_loops: bool = False, released_before=None) -> NetEffect:
    """Resolve a batch (see module docstring).

    ``existed_before(ids) -> bool array`` tells which external ids were vertices
    before the batch (the vertex map's lookup); it may be asked about ids that are
    not in the batch (the unused tail of the rank space) and its answer there is ignored.
    ``released_before(ids) -> bool array``, optional, tells which ids the vertex map
    released and still remembers (its tombstones): then ``NetEffect.revived`` counts the
    created vertices it will revive rather than add (those, and the ones deleted and
    re-created in this batch), read with the other sizes.
    """
    n_events = events.size
    empty = xp.zeros(0, dtype=np.int64)
    if n_events == 0:
        return NetEffect(empty, empty, empty, empty, xp.zeros(0, dtype=np.float32), empty, empty,
                         0, 0, insert_rows=0, delete_rows=0)
    events, dropped = prepare(xp, events, undirected=undirected, keep_self_loops=keep_self_loops)
    op, src, dst, w = events.op, events.src, events.dst, events.weight
    n = events.size
    idx = xp.arange(n, dtype=np.int64)
    is_edge = (op == ADD_EDGE) | (op == DELETE_EDGE)
    is_add_edge = op == ADD_EDGE
    is_add_vertex = op == ADD_VERTEX
    is_del_vertex = op == DELETE_VERTEX

    # Rank space: every id the batch names (dst of a vertex op is its src) gets its rank
    # among the batch's distinct ids; verts[rank] is the id.  Sized 2n, the upper bound.
    names = xp.concatenate([src, xp.where(is_edge, dst, src)])
    order = xp.argsort(names)
    ordered = names[order]
    first = xp.ones(2 * n, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    rank_sorted = xp.cumsum(first) - 1
    pos = xp.empty(2 * n, dtype=np.int64)
    pos[order] = rank_sorted
    verts = xp.zeros(2 * n, dtype=np.int64)
    verts[rank_sorted] = ordered
    used = xp.arange(2 * n, dtype=np.int64) <= rank_sorted[-1]        # a device compare, no sync
    src_pos, dst_pos = pos[:n], pos[n:]

    last_delete = xp.full(2 * n, NONE, dtype=np.int64)
    scatter_max(xp, last_delete, src_pos, xp.where(is_del_vertex, idx, NONE))
    last_create = xp.full(2 * n, NONE, dtype=np.int64)
    scatter_max(xp, last_create, src_pos, xp.where(is_add_vertex | is_add_edge, idx, NONE))
    scatter_max(xp, last_create, dst_pos, xp.where(is_add_edge, idx, NONE))

    # Edge events after the last deletion of both endpoints; per key the last one decides.
    effective = is_edge & (idx > last_delete[src_pos]) & (idx > last_delete[dst_pos])
    key = xp.where(effective, (src_pos << 32) | dst_pos, np.iinfo(np.int64).max)
    by_key = xp.argsort(key, kind="stable")            # stable: events of a key stay in time order
    key_sorted = key[by_key]
    is_last = xp.ones(n, dtype=bool)
    is_last[:-1] = key_sorted[1:] != key_sorted[:-1]
    deciding = by_key                                  # event index of each sorted row
    decide = is_last & effective[deciding]
    decide_add = decide & (op[deciding] == ADD_EDGE)

    # Vertex existence before / after.
    before = existed_before(verts) & used
    deleted = last_delete >= 0
    after = (last_create > last_delete) | (before & ~deleted)
    created = after & ~(before & ~deleted) & used
    gone = before & deleted
    # A delete only matters on an edge between vertices that existed and were not deleted here.
    untouched_old = before & ~deleted
    decide_del = decide & ~decide_add & untouched_old[src_pos[deciding]] & untouched_old[dst_pos[deciding]]

    # The distinct sources of the inserts and of the deletes (the rows of their CSR batches):
    # flags over the rank space, with one spare slot where the other events write.
    sources = src_pos[deciding]
    ins_row = xp.zeros(2 * n + 1, dtype=bool)
    ins_row[xp.where(decide_add, sources, 2 * n)] = True
    del_row = xp.zeros(2 * n + 1, dtype=bool)
    del_row[xp.where(decide_del, sources, 2 * n)] = True

    # created vertices whose ids the vertex map will find as tombstones (from before, or released here)
    revived = ((created & (released_before(verts) | gone)).sum() if released_before is not None
               else xp.zeros((), dtype=np.int64))

    # One transfer: every size the host needs; then sync-free compactions.
    n_gone, n_created, n_ins, n_del, self_loops, ins_rows, del_rows, n_revived = (int(v) for v in xp.stack(
        [gone.sum(), created.sum(), decide_add.sum(), decide_del.sum(), dropped,
         ins_row[:-1].sum(), del_row[:-1].sum(), revived]).tolist())
    ins = compact(xp, deciding, decide_add, n_ins)
    dels = compact(xp, deciding, decide_del, n_del)
    return NetEffect(
        deleted_vertices=compact(xp, verts, gone, n_gone),
        created_vertices=compact(xp, verts, created, n_created),
        insert_src=src[ins], insert_dst=dst[ins], insert_weight=w[ins],
        delete_src=src[dels], delete_dst=dst[dels],
        self_loops=self_loops, events=n_events, insert_rows=ins_rows, delete_rows=del_rows,
        revived=n_revived if released_before is not None else None,
    )
