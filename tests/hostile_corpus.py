"""Hostile messages for every wire format, each with the outcome it must have, and the isolation oracle.

The named classes are the inputs that once stopped the worker for good (issue 9):
tombstones, ``oops\\nnull`` and deep nesting (pyarrow's JSON reader segfaults on
both), invalid UTF-8, repeated Arrow columns, out-of-range dictionary indices,
out-of-bounds string offsets, truncated IPC streams, neighbour-dependent values
(``"op": 1.0``, CSV ``nan`` / ``N/A`` / ``NULL`` weights).  The generated classes
come from hypothesis strategies over raw bytes, JSON shapes and Arrow buffers
(valid IPC streams with bytes flipped).

:func:`isolated_outcomes` is the oracle every consumer is held to: each message
decoded *alone*.  A worker that consumed the same messages among any neighbours
must end with exactly these dead letters, and with the graph of exactly these
events applied in the event-time merge order (:func:`merge_order`).
"""
from __future__ import annotations

import io
import json
import struct
from collections import Counter

import numpy as np
import pyarrow as pa
from hypothesis import strategies as st

from tests.oracle import Oracle
from vinestream.stream.events.decode import decode

FORMATS = ("json", "csv", "arrow")
MAX_PAYLOAD = 512 * 1024         # the limit the corpus runs under (a too_large message is one over it)


def ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def ipc_file(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _events_table(ops, srcs, dsts, ts=None) -> pa.Table:
    cols = {"op": pa.array(ops, pa.int8()), "src": pa.array(srcs, pa.int64()), "dst": pa.array(dsts, pa.int64())}
    if ts is not None:
        cols["ts"] = pa.array(ts, pa.int64()).cast(pa.timestamp("ms"))
    return pa.table(cols)


def _patch(payload: bytes, old: bytes, new: bytes) -> bytes:
    """Replace the last occurrence of ``old`` (a buffer's bytes inside an IPC body) by ``new``."""
    at = payload.rfind(old)
    assert at >= 0, "pattern not in the IPC body"
    return payload[:at] + new + payload[at + len(old):]


def named(fmt: str) -> list[tuple[bytes | None, str | None]]:
    """(payload, expected dead-letter reason, or None for 'valid events') of the named hostile classes."""
    out: list[tuple[bytes | None, str | None]] = [(None, "tombstone"), (b"", "malformed"), (b"\n \n", "malformed"),
                                                  (b"x" * (MAX_PAYLOAD + 1), "too_large")]
    if fmt == "json":
        out += [
            (b"oops\nnull", "malformed"),
            (b"[" * 100_000 + b"]" * 100_000, "malformed"),
            (b"{\"a\":" * 60_000 + b"1" + b"}" * 10, "too_deep"),
            (b'{"op":"add","src":1,"dst":2,"x":"\xff\xfe"}', "malformed"),
            (b'{"op":"add","src":1,"dst":2}{"op":"add","src":3,"dst":4}', "malformed"),
            (b'{"op":"explode","src":1,"dst":2}', "unknown_op"),
            (b'{"op":1.0,"src":11,"dst":12,"ts":5}', None),          # a code written as a float: valid alone
            (b'{"op":"add","src":"13","dst":14,"ts":5}', None),      # ids as text
            (b'{"op":"add","src":1e3,"dst":2}', None),                # an integral float is an id in any spelling
            (b'{"op":"add","src":1.5e0,"dst":2}', "bad_id"),
            (b'{"op":"add","src":1,"dst":2,"ts":5.5}', "bad_timestamp"),   # milliseconds are whole in every format
            (b'\xef\xbb\xbf{"op":"add","src":1,"dst":2}', None),  # a byte order mark opening the message
            (b'{"op":"add","src":9223372036854775808,"dst":2}', "id_out_of_range"),
            (b'{"op":"add","src":1,"dst":2,"weight":NaN}', "bad_weight"),
            (b'{"op":"add","src":1,"dst":2,"weight":Inf}', "malformed"),
            (b'{"op":"add","src":1,"dst":2,"weight":"N/A"}', "bad_weight"),
            (b'{"op":"add","src":[1],"dst":2}', "bad_id"),
            (b'{"op":"add","op":"del","src":1,"dst":2}', None),      # duplicate key: the last one wins
            (b'{"op":"add","src":1,"dst":2,"note":"a\\":5"}', None),  # quoting must not break strings
            (b'{"op":"add","src":"\\ud800","dst":2}', "malformed"),
        ]
    elif fmt == "csv":
        out += [
            (b"oops\nnull", "malformed"),
            (b"1,21,22,nan", "bad_weight"), (b"1,23,24,N/A", "bad_weight"), (b"1,25,26,NULL", "bad_weight"),
            (b"1,27,28,inf", "bad_weight"),
            (b"1.0,29,30", None),
            (b"add,\xff\xfe,2", "malformed"),
            (b"op,src,dst", "malformed"),                          # a header alone: no record
            (b'1,"31,32"', "bad_id"),                             # no quoting: three fields
            (b"frobnicate,1,2", "unknown_op"),
            (b"1,2", "missing_dst"),
            (b"add,0x10,2", "bad_id"),                            # pyarrow's int64 parser reads hex
            (b"0x1,1,2", "unknown_op"),
            (b"1,1e3,2", None), (b"1,1.5e0,2", "bad_id"), (b"1,1,2,,5.5", "bad_timestamp"),
            (b"\xef\xbb\xbf1,1,2", None),
        ]
    else:
        good = ipc(_events_table([1, 1], [41, 42], [43, 44], [7, 8]))
        two_src = pa.Table.from_arrays([pa.array([1], pa.int8()), pa.array([45], pa.int64()),
                                        pa.array([46], pa.int64()), pa.array([47], pa.int64())],
                                       names=["op", "src", "dst", "src"])
        dict_op = pa.table({"op": pa.DictionaryArray.from_arrays(pa.array([0, 0], pa.int8()),
                                                                 pa.array(["add", "add"])),
                            "src": pa.array([48, 49], pa.int64()), "dst": pa.array([50, 51], pa.int64())})
        str_op = pa.table({"op": pa.array(["add", "add"]), "src": pa.array([52, 53], pa.int64()),
                           "dst": pa.array([54, 55], pa.int64())})
        str_payload = ipc(str_op)
        offsets = np.array([0, 3, 6], np.int32).tobytes()
        out += [
            (good, None),
            (good[:-8], "malformed"),                              # no end-of-stream marker
            (good[: len(good) // 2], "malformed"),                 # truncated in the middle
            (ipc(two_src), "malformed"),
            (_patch(ipc(dict_op), np.array([0, 0], np.int8).tobytes(), np.array([0, 100], np.int8).tobytes()),
             "malformed"),                                         # dictionary index out of range
            (_patch(str_payload, offsets, np.array([0, 3, 1 << 30], np.int32).tobytes()), "malformed"),
            (_patch(str_payload, b"addadd", b"ad\xff\xfedd"), "malformed"),   # invalid UTF-8 in a string column
            (ipc(pa.table({"op": pa.nulls(3), "src": pa.nulls(3)})), "unknown_op"),
            (ipc(_events_table([], [], [])), "malformed"),        # no rows
            (good + good, "malformed"),                            # two streams in one message
            (b"\xff\xff\xff\xff" + struct.pack("<i", 1 << 30) + b"\x00" * 8, "malformed"),
            (ipc_file(str_op), None),                              # the IPC file format, footer and all
            (ipc_file(str_op)[:-10] + b"ARROW1", "malformed"),     # ... with its footer cut
            (ipc(pa.table({"op": pa.array(["add"], pa.string_view()), "src": pa.array([56], pa.uint32()),
                           "dst": pa.array(["57"], pa.large_string())})), None),   # other layouts are cast
            (ipc(pa.table({"op": [1], "src": [58.0], "dst": [59], "ts": [5.5]})), "bad_timestamp"),
            (ipc(pa.table({"op": [1], "src": [1.5], "dst": [59]})), "bad_id"),
        ]
    return out


# -- generated hostile input ---------------------------------------------------------------

json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=8)
json_event = st.fixed_dictionaries({}, optional={
    "op": st.sampled_from(["add", "delete", "add_vertex", "delete_vertex", "+", "-", 1, 2, 3, 4, 1.0, 7, "x"])
    | json_value,
    "src": st.integers(-5, 60) | json_value, "dst": st.integers(-5, 60) | json_value,
    "weight": st.floats(allow_nan=True, allow_infinity=True) | json_value,
    "ts": st.integers(0, 10 ** 13) | json_value, "extra": json_value})


def _json_text(obj) -> bytes:
    return json.dumps(obj, allow_nan=True).encode()


def generated(fmt: str, data, n: int) -> list[bytes | None]:
    """``n`` generated hostile payloads for ``fmt`` (``data``: a hypothesis ``st.data()`` object)."""
    byte_soup = st.binary(max_size=64)
    if fmt == "json":
        one = st.one_of(json_event.map(_json_text), byte_soup,
                        st.lists(json_event.map(_json_text), min_size=1, max_size=3).map(b"\n".join),
                        json_value.map(_json_text))
    elif fmt == "csv":
        field = st.sampled_from([b"", b"1", b"2", b"add", b"-", b"nan", b"N/A", b"1e3", b"12", b" 7 ", b"x",
                                 b"9223372036854775808", b"2024-01-01T00:00:00Z", b"\xff", b"0x10"])
        line = st.lists(field, min_size=0, max_size=6).map(b",".join)
        one = st.one_of(line, st.lists(line, min_size=1, max_size=3).map(b"\n".join), byte_soup)
    else:
        def flipped(args):
            payload, flips = args
            buf = bytearray(payload)
            for at, value in flips:
                buf[at % len(buf)] = value
            return bytes(buf)
        base = st.lists(st.tuples(st.integers(1, 4), st.integers(-3, 40), st.integers(-3, 40)), min_size=1,
                        max_size=4).map(lambda rows: ipc(_events_table(*map(list, zip(*rows)))))
        one = st.one_of(st.tuples(base, st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 255)),
                                                 min_size=1, max_size=4)).map(flipped),
                        base.map(lambda p: p[: max(1, len(p) // 3)]), byte_soup)
    return [data.draw(one) for _ in range(n)]


# -- the oracle --------------------------------------------------------------------------------

def isolated_outcomes(messages, fmt: str, topic: str):
    """Each message decoded alone: (per-partition event lists [(ts, op, src, dst, weight)], dead Counter).

    ``messages``: kafka-python records (partition, offset, timestamp, value).  A missing
    ``ts`` takes the record's timestamp, as the worker does.
    """
    per_partition: dict = {}
    dead: Counter = Counter()
    for m in sorted(messages, key=lambda m: (m.partition, m.offset)):
        d = decode([m.value], fmt, source=topic, partition=m.partition, positions=[m.offset],
                   max_payload_bytes=MAX_PAYLOAD)
        assert d.events.num_rows + d.dead.num_rows > 0, f"message {m.partition}@{m.offset} has no outcome"
        for row in d.dead.to_pylist():
            dead[(row["partition"], row["position"], row["reason"])] += 1
        ts = d.events.column("ts").cast(pa.int64()).to_pylist()
        rows = zip(ts, *(d.events.column(c).to_pylist() for c in ("op", "src", "dst", "weight")))
        per_partition.setdefault((topic, m.partition), []).extend(
            (t if t is not None else m.timestamp, op, s, dd, w) for t, op, s, dd, w in rows)
    return per_partition, dead


def merge_order(per_partition: dict, ts_of=lambda event: event[0]) -> list:
    """DESIGN.md's event-time merge, literally: repeatedly the head with the smallest (ts, topic, partition).

    ``per_partition``: {(topic, partition): events in offset order}; ``ts_of(event)`` its time."""
    heads = dict.fromkeys(per_partition, 0)
    out = []
    while True:
        live = [(ts_of(per_partition[k][i]), k) for k, i in heads.items() if i < len(per_partition[k])]
        if not live:
            return out
        _, k = min(live)
        out.append(per_partition[k][heads[k]])
        heads[k] += 1


def oracle_graph(ordered_events) -> Oracle:
    o = Oracle()
    for _ts, op, src, dst, w in ordered_events:
        o.apply(op, src, dst, w)
    return o
