"""The event-time merge of several partitions into one deterministic order (DESIGN.md "Order across partitions").

Kafka orders events only within a partition, and graph events interact across
partitions (deleting vertex ``v`` removes the edges other partitions insert), so
one worker applies its partitions' events in one order defined by the data
alone: a k-way merge in which the next event is the head of the partition whose
head has the smallest ``ts``, ties broken by ``(topic, partition)``, each
partition keeping its offset order.

That greedy head-merge is computed here without a loop over events: within a
partition an event whose ``ts`` is below the running maximum of its partition is
released right after its predecessor (every other head is at or above that
maximum), so the merge is the stable sort of all events by the key
``(running max of ts in its partition, topic, partition, offset order)``.
Each partition's key is non-decreasing, so what can be released is a prefix of
each partition.

Release rule: an event is released once every other assigned partition either
has buffered events whose key reaches past it, or is *idle* (read up to its high
watermark).  A partition with nothing buffered still bounds the others by its
running maximum (its next event cannot sort before it), so a topic already on
the broker is consumed in exactly the merge order whatever the timing.  An event
whose own ``ts`` is older than an event already released is *late*: it is
applied in merge order as it comes and counted (``vinestream_late_events_total``).

Positions: a partition's position is ``MergePosition(offset, skip, max_ts)`` —
the first message not wholly released, how many of its events were released,
and the partition's running maximum.  The checkpoint stores the vector of them,
so a restart re-reads each partition from ``offset``, skips ``skip`` events and
continues the same order.  A group commit carries the same triple (the offset, and the rest in its metadata:
``connectors.kafka.commit_metadata``), so a partition that moves to another worker in a rebalance resumes there
the same way; where the brokers drop that metadata, :meth:`PartitionMerge.finish` releases the rest of the
message a leaving partition is in the middle of, so that its offset alone is exact.

A message's dead letters are released when the whole message is (its position passes it), so a restart
neither repeats nor loses them.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from vinestream.stream.events.device import concat_events
from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA, EVENT_SCHEMA

log = logging.getLogger(__name__)

#: the running maximum of a partition that has released nothing yet
NO_TS = np.iinfo(np.int64).min


class MergePosition(NamedTuple):
    """Where a partition stands in the merge: the next message to read, events of it already released,
    and the partition's running maximum ``ts``.  Compares by (offset, skip)."""
    offset: int
    skip: int = 0
    max_ts: int = int(NO_TS)


def as_position(value) -> MergePosition:
    """A checkpointed position (an offset, or an (offset, skip, max_ts) triple) as a MergePosition."""
    if isinstance(value, MergePosition):
        return value
    if isinstance(value, (tuple, list)):
        return MergePosition(int(value[0]), int(value[1]) if len(value) > 1 else 0,
                             int(value[2]) if len(value) > 2 else int(NO_TS))
    return MergePosition(int(value))


@dataclass
class _Partition:
    """Decoded but not yet released events of one partition (in offset order), with their merge keys."""
    position: MergePosition | None = None     # what has been released (None: nothing known yet)
    fetched: int | None = None                # offset after the last message added
    tables: list = field(default_factory=list)
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    index: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))   # event index within its message
    ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    key: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))     # running max of ts
    dead: list = field(default_factory=list)

    @property
    def buffered(self) -> int:
        return len(self.offsets)

    def running_max(self) -> int:
        if len(self.key):
            return int(self.key[-1])
        return self.position.max_ts if self.position is not None else int(NO_TS)

    def table(self) -> pa.Table:
        if len(self.tables) != 1:
            self.tables = [concat_events(self.tables) if self.tables else EVENT_SCHEMA.empty_table()]
        return self.tables[0]


@dataclass
class Released:
    """What one release gives: events in merge order, dead letters, new positions, late events."""
    events: pa.Table
    dead: pa.Table
    positions: dict                 # (topic, partition) -> MergePosition
    late: int = 0


def _ms(ts_column) -> np.ndarray:
    arr = ts_column.combine_chunks() if isinstance(ts_column, pa.ChunkedArray) else ts_column
    return np.asarray(arr.view(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)


class PartitionMerge:
    """Buffers decoded events per partition and releases them in event-time merge order (module docstring)."""

    def __init__(self):
        self.parts: dict = {}            # (topic, partition) -> _Partition
        self.max_released_ts = int(NO_TS)

    # -- partitions come and go -------------------------------------------------------
    def start(self, key, position=None) -> None:
        """Begin (or restart) ``key`` at a checkpointed ``position`` (None: wherever its first message is)."""
        part = _Partition()
        if position is not None:
            part.position = as_position(position)
            part.fetched = part.position.offset
        self.parts[key] = part

    def drop(self, key) -> None:
        """Forget ``key`` (revoked): its unreleased events are re-read by whoever owns it next."""
        self.parts.pop(key, None)

    def tracks(self, key) -> bool:
        """Whether ``key`` was started (assigned) and not dropped since."""
        return key in self.parts

    def buffered(self, key) -> int:
        part = self.parts.get(key)
        return part.buffered if part is not None else 0

    def fetched(self, key) -> int | None:
        part = self.parts.get(key)
        return part.fetched if part is not None else None

    def position(self, key) -> MergePosition | None:
        part = self.parts.get(key)
        return part.position if part is not None else None

    def empty(self) -> bool:
        return all(p.buffered == 0 and not p.dead for p in self.parts.values())

    # -- input --------------------------------------------------------------------------
    def add(self, key, events: pa.Table, event_offsets: np.ndarray, dead: pa.Table, first_offset: int,
            next_offset: int) -> None:
        """Append one poll's decoded messages ``[first_offset, next_offset)`` of partition ``key``.

        ``events`` carry a ``ts`` for every event (the caller fills a missing one with the
        record timestamp); ``event_offsets`` is the offset of each event's message.
        """
        part = self.parts.get(key)
        if part is None:
            part = self.parts[key] = _Partition()
        event_offsets = np.asarray(event_offsets, dtype=np.int64)
        if part.position is not None and first_offset < part.position.offset:
            # before what was already released: the broker lost data (or retention removed it)
            log.warning("%s[%d] went back from offset %d to %d (data lost on the broker?); continuing from %d",
                        key[0], key[1], part.position.offset, first_offset, first_offset)
            part.tables, part.dead = [], []
            part.offsets = part.index = part.ts = part.key = np.zeros(0, np.int64)
            part.position = MergePosition(first_offset, 0, part.position.max_ts)
            part.fetched = first_offset
        elif part.fetched is not None and first_offset < part.fetched:
            keep = event_offsets >= part.fetched          # a re-delivery: keep only what is new
            if not keep.all():
                events = events.filter(pa.array(keep))
                event_offsets = event_offsets[keep]
            if dead.num_rows:
                dead = dead.filter(pa.array(np.asarray(dead.column("position"), np.int64) >= part.fetched))
        if part.position is None:
            part.position = MergePosition(first_offset, 0, int(NO_TS))
        n = len(event_offsets)
        if n:
            # index of each event within its message (a message always comes whole, in one poll)
            starts = np.flatnonzero(np.concatenate([[True], event_offsets[1:] != event_offsets[:-1]]))
            index = np.arange(n) - np.repeat(starts, np.diff(np.concatenate([starts, [n]])))
            skip = part.position.skip
            if skip and not part.buffered:              # events a checkpoint says were released already
                done = (event_offsets == part.position.offset) & (index < skip)
                if done.any():
                    events = events.filter(pa.array(~done))
                    event_offsets, index = event_offsets[~done], index[~done]
        else:
            index = np.zeros(0, np.int64)
        if len(event_offsets):
            ts = _ms(events.column("ts"))
            key_ts = np.maximum.accumulate(np.concatenate([[part.running_max()], ts]))[1:]
            part.tables.append(events)
            part.offsets = np.concatenate([part.offsets, event_offsets])
            part.index = np.concatenate([part.index, index])
            part.ts = np.concatenate([part.ts, ts])
            part.key = np.concatenate([part.key, key_ts])
        if dead.num_rows:
            part.dead.append(dead)
        part.fetched = max(next_offset, part.fetched if part.fetched is not None else next_offset)

    # -- output -------------------------------------------------------------------------
    def release(self, idle: dict, max_events: int | None = None) -> Released:
        """Release everything the rule allows, or its first ``max_events`` in merge order (the rest stays
        buffered, at the front of its partitions, for the next release); ``idle[key]`` says a partition is read
        up to its high watermark.

        A cut may fall inside a message: the positions then say how many of its events went (``skip``), which
        is what a checkpoint stores, so batches never exceed ``max_events`` whatever the size of a message.
        """
        keys, rank, counts = self._releasable(idle)
        return self._take(keys, rank, counts, max_events)

    def finish(self, finishing, max_events: int | None = None) -> Released:
        """Release the rest of the message each partition of ``finishing`` is in the middle of (some of its
        events released, ``skip`` > 0), whatever the rule says, in merge order; at most ``max_events`` of them
        (call again for the rest).

        For a partition that leaves this worker (a rebalance) on brokers that do not keep commit metadata: the
        commit is then an offset alone, and an offset inside a message made the next owner apply that message's
        released events again.  Finished, the partition's position is a message boundary, which an offset says
        exactly.  The cost: those events come before events of other partitions that the merge would have
        taken first."""
        keys = sorted(self.parts)
        rank = {k: i for i, k in enumerate(keys)}
        counts = dict.fromkeys(keys, 0)
        for k in finishing:
            part = self.parts.get(k)
            if part is None or part.position is None or not part.position.skip or not part.buffered:
                continue
            # the buffer starts with the unreleased rest of the message at the position (offset order)
            counts[k] = int(np.searchsorted(part.offsets, part.position.offset, side="right"))
        return self._take(keys, rank, counts, max_events)

    def _take(self, keys: list, rank: dict, counts: dict, max_events: int | None) -> Released:
        """Release the first ``counts[k]`` buffered events of each partition (of them the first ``max_events``
        in merge order), their dead letters once their messages are wholly released, and the new positions."""
        taking = [k for k in keys if counts[k]]
        order = None
        if taking:
            order, ranks = self._merge_order(taking, counts, rank)
            if max_events is not None and len(order) > max_events:
                # the first max_events in merge order: of each partition a prefix (its keys never decrease)
                kept = np.bincount(ranks[order[:max(0, max_events)]], minlength=len(keys))
                counts = {k: int(kept[rank[k]]) for k in keys}
                taking = [k for k in taking if counts[k]]
                order = self._merge_order(taking, counts, rank)[0] if taking else None
        taken_tables, taken_ts = [], []
        positions, dead = {}, []
        for k in keys:
            part = self.parts[k]
            count = counts[k]
            if count:
                table = part.table()
                taken_tables.append(table.slice(0, count))
                taken_ts.append(part.ts[:count])
                part.tables = [table.slice(count)]
                max_ts = int(part.key[count - 1])
                part.offsets, part.index = part.offsets[count:], part.index[count:]
                part.ts, part.key = part.ts[count:], part.key[count:]
            else:
                max_ts = part.position.max_ts if part.position is not None else int(NO_TS)
            if part.position is None:
                continue
            if part.buffered:           # the first event not released (dead-letter-only messages before it pass)
                new = MergePosition(int(part.offsets[0]), int(part.index[0]), max_ts)
            elif part.fetched > part.position.offset:
                new = MergePosition(int(part.fetched), 0, max_ts)
            else:                       # nothing read past the position yet (e.g. a restart's skip)
                new = part.position
            if new != part.position:
                part.position = new
                positions[k] = new
            if part.dead:
                ready, rest = [], []
                for d in part.dead:
                    pos = np.asarray(d.column("position"), np.int64)
                    out = pos < part.position.offset
                    if out.all():
                        ready.append(d)
                    elif out.any():
                        ready.append(d.filter(pa.array(out)))
                        rest.append(d.filter(pa.array(~out)))
                    else:
                        rest.append(d)
                dead += ready
                part.dead = rest
        late = 0
        if taken_tables:
            events = concat_events(taken_tables)
            if len(taken_tables) > 1:
                events = events.take(pa.array(order))
            ts = np.concatenate(taken_ts)[order]
            before = np.maximum.accumulate(np.concatenate([[self.max_released_ts], ts]))
            late = int(np.count_nonzero(ts < before[:-1]))
            self.max_released_ts = int(before[-1])
        else:
            events = EVENT_SCHEMA.empty_table()
        return Released(events, pa.concat_tables(dead) if dead else DEAD_LETTER_SCHEMA.empty_table(),
                        positions, late)

    def _merge_order(self, taking: list, counts: dict, rank: dict) -> tuple[np.ndarray, np.ndarray]:
        """The merge order of the first ``counts[k]`` buffered events of each partition in ``taking`` (as
        indices into their concatenation, partitions in ``taking``'s order), and each one's partition rank."""
        merge_keys = np.concatenate([self.parts[k].key[:counts[k]] for k in taking])
        ranks = np.concatenate([np.full(counts[k], rank[k], np.int64) for k in taking])
        seq = np.concatenate([np.arange(counts[k]) for k in taking])
        return np.lexsort((seq, ranks, merge_keys)), ranks

    def releasable(self, idle: dict) -> bool:
        """Whether :meth:`release` would give any event now (what a capped release left behind, say)."""
        return any(self._releasable(idle)[2].values())

    def _releasable(self, idle: dict) -> tuple[list, dict, dict]:
        """(partitions in rank order, their ranks, how many buffered events of each the rule releases now)."""
        keys = sorted(self.parts)
        rank = {k: i for i, k in enumerate(keys)}
        inf = (np.iinfo(np.int64).max, len(keys) + 1)
        bound = {k: inf if idle.get(k, False) else (self.parts[k].running_max(), rank[k]) for k in keys}
        counts = {}
        for k in keys:
            part = self.parts[k]
            others = [b for q, b in bound.items() if q != k]
            limit = min(others) if others else inf
            count = 0
            if part.buffered:           # keys (key, rank[k]) below the limit: a prefix, keys never decrease
                side = "right" if rank[k] < limit[1] else "left"
                count = int(np.searchsorted(part.key, limit[0], side=side))
            counts[k] = count
        return keys, rank, counts
