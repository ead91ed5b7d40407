"""The event-time merge across partitions (connectors/partition_merge.py) against a literal k-way head merge."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hostile_corpus import merge_order
from vinestream.connectors.partition_merge import MergePosition, PartitionMerge
from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA, EVENT_SCHEMA


def head_merge(streams: dict) -> list:
    """The ids of ``{key: [(id, ts), ...]}`` in DESIGN.md's merge order (the literal head merge)."""
    return [event_id for event_id, _ in merge_order(streams, ts_of=lambda event: event[1])]


def table(ids, ts):
    n = len(ids)
    return pa.Table.from_arrays([pa.array(np.ones(n, np.int8)), pa.array(np.asarray(ids, np.int64)),
                                 pa.array(np.asarray(ids, np.int64) + 1), pa.nulls(n, pa.float32()),
                                 pa.array(np.asarray(ts, np.int64), pa.int64()).cast(pa.timestamp("ms"))],
                                schema=EVENT_SCHEMA)


streams_st = st.dictionaries(
    st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 3)),
    st.lists(st.lists(st.integers(0, 20), min_size=0, max_size=4), min_size=0, max_size=8),  # messages of ts
    min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(streams_st, st.randoms(use_true_random=False), st.integers(0, 3), st.one_of(st.none(), st.integers(1, 5)))
def test_merge_equals_the_head_merge_whatever_the_timing_and_restarts(msgs, rnd, restarts, cap):
    """``cap``: at most that many events a release (``--batch-size``), so releases and restarts cut messages."""
    # every event gets a unique id; a message is a list of ts values
    streams, messages, uid = {}, {}, 0
    for key in sorted(msgs):
        streams[key], messages[key] = [], []
        for off, tss in enumerate(msgs[key]):
            ids = list(range(uid, uid + len(tss)))
            uid += len(tss)
            messages[key].append((off, ids, tss))
            streams[key] += list(zip(ids, tss))
    expected = head_merge(streams)

    out, positions = [], dict.fromkeys(messages)
    for _round in range(restarts + 1):           # restart from the released positions each round
        merge = PartitionMerge()
        for k in messages:
            merge.start(k, positions[k])
        cursor = {k: (positions[k].offset if positions[k] else 0) for k in messages}
        last_round = _round == restarts
        steps = 0
        while True:
            steps += 1
            # deliver the next few messages of a random partition, as a poll
            pending = [k for k in messages if cursor[k] < len(messages[k])]
            if pending:
                k = rnd.choice(pending)
                take = messages[k][cursor[k]:cursor[k] + rnd.randint(1, 3)]
                ids = [i for _, m_ids, _ in take for i in m_ids]
                tss = [t for _, _, m_ts in take for t in m_ts]
                offs = [o for o, m_ids, _ in take for _ in m_ids]
                merge.add(k, table(ids, tss), np.asarray(offs, np.int64), DEAD_LETTER_SCHEMA.empty_table(),
                          take[0][0], take[-1][0] + 1)
                cursor[k] += len(take)
            idle = {k: cursor[k] >= len(messages[k]) for k in messages}
            rel = merge.release(idle, max_events=cap)
            assert cap is None or rel.events.num_rows <= cap
            out += rel.events.column("src").to_pylist()
            for k, pos in rel.positions.items():
                positions[k] = pos
            if not pending and merge.empty():
                break
            if not last_round and steps > rnd.randint(0, 6):
                break                             # "killed": the next round restarts from positions
    assert out == expected


def test_an_empty_partition_holds_back_the_others_until_it_is_idle():
    merge = PartitionMerge()
    merge.start(("t", 0))
    merge.start(("t", 1))
    merge.add(("t", 0), table([1, 2], [5, 6]), np.array([0, 1]), DEAD_LETTER_SCHEMA.empty_table(), 0, 2)
    assert merge.release({("t", 0): True, ("t", 1): False}).events.num_rows == 0
    rel = merge.release({("t", 0): True, ("t", 1): True})
    assert rel.events.column("src").to_pylist() == [1, 2]
    assert rel.positions[("t", 0)] == MergePosition(2, 0, 6)


def test_late_events_are_counted():
    merge = PartitionMerge()
    merge.start(("t", 0))
    merge.add(("t", 0), table([1, 2, 3], [10, 4, 12]), np.array([0, 1, 2]), DEAD_LETTER_SCHEMA.empty_table(), 0, 3)
    rel = merge.release({("t", 0): True})
    assert rel.events.column("src").to_pylist() == [1, 2, 3] and rel.late == 1


def test_a_capped_release_cuts_a_message_and_its_position_says_where():
    merge = PartitionMerge()
    merge.start(("t", 0))
    merge.add(("t", 0), table(list(range(10)), list(range(10))), np.array([5] * 6 + [6] * 4),
              DEAD_LETTER_SCHEMA.empty_table(), 5, 7)
    idle = {("t", 0): True}
    first = merge.release(idle, max_events=4)
    assert first.events.column("src").to_pylist() == [0, 1, 2, 3]
    assert first.positions[("t", 0)] == MergePosition(5, 4, 3)      # message 5, 4 of its events done
    assert merge.releasable(idle)
    second = merge.release(idle, max_events=4)
    assert second.events.column("src").to_pylist() == [4, 5, 6, 7]
    assert second.positions[("t", 0)] == MergePosition(6, 2, 7)
    third = merge.release(idle, max_events=4)
    assert third.events.column("src").to_pylist() == [8, 9] and third.positions[("t", 0)] == MergePosition(7, 0, 9)
    assert not merge.releasable(idle) and merge.empty()


def test_finish_releases_the_rest_of_the_message_a_partition_is_in_the_middle_of_and_no_more():
    """What a worker does before a partition it is in the middle of a message of leaves it, where the commit can
    say only an offset: the partition's position must be a message boundary, else its next owner applies the
    message's released events again."""
    merge = PartitionMerge()
    for key in (("t", 0), ("t", 1)):
        merge.start(key)
    dead = dead_letter_at("t", 0, 5)
    merge.add(("t", 0), table(list(range(10)), list(range(10))), np.array([5] * 6 + [6] * 4), dead, 5, 7)
    merge.add(("t", 1), table([100], [50]), np.array([0]), DEAD_LETTER_SCHEMA.empty_table(), 0, 1)
    idle = {("t", 0): True, ("t", 1): False}
    assert merge.release(idle, max_events=4).positions[("t", 0)] == MergePosition(5, 4, 3)
    assert merge.finish({("t", 1)}).events.num_rows == 0         # nothing of partition 1 released: no message begun
    first = merge.finish({("t", 0), ("t", 1)}, max_events=1)
    assert first.events.column("src").to_pylist() == [4] and first.positions[("t", 0)] == MergePosition(5, 5, 4)
    rest = merge.finish({("t", 0), ("t", 1)})
    assert rest.events.column("src").to_pylist() == [5]             # message 5's rest, not message 6
    assert rest.positions[("t", 0)] == MergePosition(6, 0, 5)       # a message boundary: an offset says it all
    assert rest.dead.column("position").to_pylist() == [5]          # the message's dead letter goes with it
    assert merge.finish({("t", 0)}).events.num_rows == 0
    after = merge.release({("t", 0): True, ("t", 1): True})
    assert after.events.column("src").to_pylist() == [6, 7, 8, 9, 100]


def dead_letter_at(topic, partition, position):
    from vinestream.stream.events.validate import dead_letters
    return dead_letters(source=topic, partition=partition, positions=np.array([position], np.int64),
                        reasons=pa.array(["malformed"]), details=pa.array(["x"]), payloads=pa.nulls(1, pa.string()))


def test_a_commit_s_metadata_gives_back_the_whole_position_and_hostile_metadata_only_the_offset():
    """The rebalance path resumes a partition new to a worker from its group commit: its metadata carries what the
    offset cannot (events of the message done, the running maximum ts).  Metadata is whatever the group holds
    (other tools, other versions): anything that is not ours, for this offset, is the offset alone, never an
    error."""
    from vinestream.connectors.kafka import commit_metadata, committed_position
    for pos in (MergePosition(7, 3, 1_700_000_000_000), MergePosition(0, 0), MergePosition(2**62, 2**31, -5),
                (9, 4, 12)):
        assert committed_position(pos[0], commit_metadata(pos)) == MergePosition(*pos)
    assert committed_position(12, commit_metadata(12)) == MergePosition(12)
    good = commit_metadata(MergePosition(7, 3, 99))
    hostile = [None, "", "x", "{", "[]", "null", '{"v":"vinestream-merge/1"}', good.replace("1", "2", 1),
               good.replace('"skip":3', '"skip":-3'), good.replace('"skip":3', '"skip":true'),
               good.replace('"skip":3', '"skip":3.5'), good.replace('"max_ts":99', '"max_ts":1e400'),
               good.replace('"max_ts":99', f'"max_ts":{2**64}'), "[" * 100_000 + "]" * 100_000, b"\xff"]
    for metadata in hostile:
        assert committed_position(7, metadata) == MergePosition(7), metadata[:80] if metadata else metadata
    assert committed_position(8, good) == MergePosition(8)          # an offset reset by another tool
