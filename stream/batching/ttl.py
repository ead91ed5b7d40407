"""Sliding windows in event time: edges expire a fixed time after their last insert (``--edge-ttl``).

The rule, defined one event at a time (``tests/test_edge_ttl.py`` checks the batched form
against exactly this):

- the **watermark** is the largest ``ts`` seen so far (events without ``ts`` do not move it, nor do
  dropped self-loops, which have no effect at all);
- an edge insert records the edge's **last insert time**: its ``ts``, or the watermark when
  it has none, minus infinity before the first timed event (a re-insert refreshes it);
- after each event, every edge whose last insert time is **older than watermark - ttl**
  (strictly) is deleted, as if by a delete-edge event.  Vertices stay (a vertex's existence
  is not windowed); an insert already older than that on arrival is deleted at once (its
  endpoints are still created, as for any insert).

Batched: the watermark only grows, so an edge last inserted at ``t`` is gone at the end of a
batch iff ``t < wm_end - ttl`` (or an event deleted it).  So :meth:`EdgeTTL.extend` appends
one delete-edge event per expired edge to the end of the batch; the pipeline's net effect
then gives exactly the one-at-a-time state (the delete happens in the batch in which the
watermark passes the edge).  With ``undirected`` an edge is keyed by its unordered pair.

The last insert times of the live edges live in three NumPy arrays sorted by (src, dst); each
batch merges its edge events in with one lexsort (a vectorised program, no loop over edges): an
insert records its time, a delete of the edge or of an endpoint drops the record, so an edge
deleted before its time runs out is never counted as expired.  ``expired`` (the summary's column)
is the number of edges the window deletes at the end of the batch; an edge that expired and was
then re-inserted or deleted inside one batch is not among them.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vinestream.stream.events.schema import EVENT_SCHEMA, Op
from vinestream.structures.array_ops import last_position

__all__ = ["EdgeTTL"]

_NO_TS = np.iinfo(np.int64).min


class EdgeTTL:
    """The last insert time of every edge and the event-time watermark; expires edges per batch."""

    def __init__(self, ttl_seconds: float, *, undirected: bool = False, keep_self_loops: bool = False):
        if not ttl_seconds > 0:
            raise ValueError("edge TTL must be > 0 seconds")
        self.ttl_ms = float(ttl_seconds) * 1000.0
        self.undirected = undirected
        self.keep_self_loops = keep_self_loops
        self.watermark = _NO_TS            # ms; _NO_TS before the first timed event
        self.src = np.zeros(0, np.int64)
        self.dst = np.zeros(0, np.int64)
        self.last = np.zeros(0, np.int64)   # ms
        self.expired_total = 0

    def __len__(self) -> int:
        return int(self.src.shape[0])

    def extend(self, events: pa.Table) -> tuple[pa.Table, int]:
        """``events`` plus one delete-edge event per edge that expires in this batch; and how many."""
        n = events.num_rows
        op = np.asarray(events.column("op").to_numpy(zero_copy_only=False))
        all_src = np.asarray(events.column("src").to_numpy(zero_copy_only=False), dtype=np.int64)
        all_dst = np.asarray(pc.fill_null(events.column("dst"), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
        edges = (op == int(Op.ADD_EDGE)) | (op == int(Op.DELETE_EDGE))
        # a dropped self-loop has no effect at all (DESIGN.md): its time moves no watermark either (it expired every
        # edge its late time passed, as no other invalid event can)
        dropped = edges & (all_src == all_dst) if not self.keep_self_loops else np.zeros(n, bool)
        ts_col = pc.cast(events.column("ts"), pa.int64())
        has_ts = ~np.asarray(ts_col.is_null().to_numpy(zero_copy_only=False), dtype=bool) & ~dropped if n else \
            np.zeros(0, bool)
        ts = np.asarray(pc.fill_null(ts_col, _NO_TS).to_numpy(zero_copy_only=False), dtype=np.int64) if n else \
            np.zeros(0, np.int64)
        # the watermark before each event (an event without ts is stamped with it)
        running = np.maximum.accumulate(np.where(has_ts, ts, _NO_TS)) if n else np.zeros(0, np.int64)
        running = np.maximum(running, self.watermark)
        stamp = np.where(has_ts, ts, running)
        if n:
            self.watermark = int(running[-1])
        # edge inserts record a time; edge deletes, and vertex deletes of an endpoint, drop the record: the edge is
        # gone, and the window must not count it as expired later (nor keep its record until then)
        vertex_deletes = op == int(Op.DELETE_VERTEX)
        if edges.any() or (vertex_deletes.any() and len(self)):
            pos = np.flatnonzero(edges)
            src, dst = all_src[edges], all_dst[edges]
            t, kill = stamp[edges], op[edges] == int(Op.DELETE_EDGE)
            if not self.keep_self_loops:
                keep = src != dst
                src, dst, t, kill, pos = src[keep], dst[keep], t[keep], kill[keep], pos[keep]
            if self.undirected:
                src, dst = np.minimum(src, dst), np.maximum(src, dst)
            self._merge(src, dst, t, pos, kill, all_src[vertex_deletes], np.flatnonzero(vertex_deletes))
        if self.watermark == _NO_TS or not len(self):
            return events, 0
        gone = self.last < self.watermark - self.ttl_ms
        k = int(gone.sum())
        if not k:
            return events, 0
        expired = pa.Table.from_arrays([
            pa.array(np.full(k, int(Op.DELETE_EDGE), np.int8)), pa.array(self.src[gone]),
            pa.array(self.dst[gone]), pa.nulls(k, pa.float32()),
            pa.array(np.full(k, self.watermark, np.int64)).cast(pa.timestamp("ms"))], schema=EVENT_SCHEMA)
        keep = ~gone
        self.src, self.dst, self.last = self.src[keep], self.dst[keep], self.last[keep]
        self.expired_total += k
        return pa.concat_tables([events.cast(EVENT_SCHEMA), expired]), k

    def _merge(self, src: np.ndarray, dst: np.ndarray, t: np.ndarray, pos: np.ndarray, kill: np.ndarray,
               gone_vertices: np.ndarray, gone_pos: np.ndarray) -> None:
        """Last insert time per (src, dst) of the edges that exist after the batch: per key the batch's last edge
        event wins over earlier and stored ones (an insert records its time, a delete drops the key), and a
        ``delete_vertex`` of an endpoint after that last insert drops it too.  ``pos``/``gone_pos``: the events'
        rows in the batch (stored entries come before all of them)."""
        stored = self.src.shape[0]
        all_src = np.concatenate([self.src, src])
        all_dst = np.concatenate([self.dst, dst])
        all_t = np.concatenate([self.last, t])
        all_pos = np.concatenate([np.full(stored, -1, np.int64), pos])
        all_kill = np.concatenate([np.zeros(stored, bool), kill])
        order = np.lexsort((np.arange(all_src.shape[0]), all_dst, all_src))   # by key, then arrival
        s, d = all_src[order], all_dst[order]
        last = np.ones(s.shape[0], bool)
        last[:-1] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
        keep = order[last]
        keep = keep[~all_kill[keep]]
        if gone_vertices.shape[0]:
            # each endpoint's last delete_vertex row (-2: none, before the stored records' -1); a record inserted
            # before it loses that endpoint
            inserted = all_pos[keep]
            src_gone, dst_gone = (last_position(np, gone_vertices, gone_pos, ends[keep], missing=-2)
                                  for ends in (all_src, all_dst))
            keep = keep[(src_gone < inserted) & (dst_gone < inserted)]
        self.src, self.dst, self.last = all_src[keep], all_dst[keep], all_t[keep]

    # -- checkpoints ----------------------------------------------------------------------------
    def state(self) -> dict:
        return {"watermark": int(self.watermark), "src": self.src.copy(), "dst": self.dst.copy(),
                "last": self.last.copy(), "expired_total": int(self.expired_total)}

    def load_state(self, state: dict) -> None:
        self.watermark = int(state["watermark"])
        self.src = np.asarray(state["src"], np.int64)
        self.dst = np.asarray(state["dst"], np.int64)
        self.last = np.asarray(state["last"], np.int64)
        self.expired_total = int(state.get("expired_total", 0))
