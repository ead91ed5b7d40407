"""stream.decode: JSON / CSV / Arrow IPC payloads, bad records as dead letters, round trips."""
import io
import json

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vinestream.stream.events.decode import decode, encode_arrow
from vinestream.stream.events.schema import EVENT_SCHEMA, MAX_TS_MS

BIG = str(2 ** 63)

# one bad record per reason, per text format: (json line, csv line, reason)
BAD = [
    ('{"op":"add","src":1', "7,1,2", None),                         # json malformed / csv: unknown_op below
    ('{"op":"frobnicate","src":1,"dst":2}', "frobnicate,1,2", "unknown_op"),
    ('{"op":"add","src":null,"dst":2}', "add,,2", "null_id"),
    ('{"op":"add","src":1.5,"dst":2}', "add,1.5,2", "bad_id"),
    ('{"op":"add","src":"x","dst":2}', "add,x,2", "bad_id"),
    (f'{{"op":"add","src":{BIG},"dst":2}}', f"add,{BIG},2", "id_out_of_range"),
    ('{"op":"add","src":1,"dst":%s}' % ("9" * 30), "add,1,%s" % ("9" * 30), "id_out_of_range"),
    ('{"op":"add","src":1}', "add,1", "missing_dst"),
    ('{"op":"add","src":1,"dst":2,"weight":"NaN"}', "add,1,2,nan", "bad_weight"),
    ('{"op":"add","src":1,"dst":2,"weight":1e400}', "add,1,2,inf", "bad_weight"),
    ('{"op":"add","src":1,"dst":2,"ts":"not a time"}', "add,1,2,1.0,not a time", "bad_timestamp"),
    ('not json at all', "just,too,many,fields,in,this", "malformed"),
]


def _good(i):
    return {"op": "add", "src": 100 + i, "dst": 200 + i, "weight": 0.5, "ts": 1_700_000_000_000 + i}


def _csv(e):
    return f'{e["op"]},{e["src"]},{e["dst"]},{e["weight"]},{e["ts"]}'


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_each_bad_record_beside_good_ones(fmt):
    payloads, expect_dead, expect_src = [], [], []
    for i, (jline, cline, reason) in enumerate(BAD):
        good_a, good_b = _good(2 * i), _good(2 * i + 1)
        text = [json.dumps(good_a), jline, json.dumps(good_b)] if fmt == "json" \
            else [_csv(good_a), cline, _csv(good_b)]
        payloads.append("\n".join(text).encode())
        expect_src += [good_a["src"], good_b["src"]]
        if reason is None:
            reason = "malformed" if fmt == "json" else "unknown_op"
        expect_dead.append((1000 + i, reason))
    d = decode(payloads, fmt, source="topic", partition=2, positions=range(1000, 1000 + len(BAD)))
    assert d.events.column("src").to_pylist() == expect_src
    assert list(zip(d.dead.column("position").to_pylist(), d.dead.column("reason").to_pylist())) == expect_dead
    assert set(d.dead.column("partition").to_pylist()) == {2}
    assert all(p for p in d.dead.column("payload").to_pylist())


def test_json_overflow_is_not_silently_a_double():
    d = decode([b'{"op":1,"src":9223372036854775807,"dst":9223372036854775808}'], "json", source="t")
    assert d.events.num_rows == 0 and d.dead.column("reason").to_pylist() == ["id_out_of_range"]
    d = decode([b'{"op":1,"src":9223372036854775807,"dst":-9223372036854775808}'], "json", source="t")
    assert d.events.column("src").to_pylist() == [2 ** 63 - 1] and d.events.column("dst").to_pylist() == [-2 ** 63]


def test_json_mixed_op_types_and_iso_ts():
    lines = [{"op": 1, "src": 1, "dst": 2}, {"op": "delete", "src": 1, "dst": 2},
             {"op": "add_vertex", "src": 3, "ts": "2024-01-01T00:00:00Z"}, {"op": 4, "src": 3, "ts": 5}]
    d = decode(["\n".join(map(json.dumps, lines)).encode()], "json", source="t")
    assert d.events.column("op").to_pylist() == [1, 2, 3, 4] and d.dead.num_rows == 0
    assert d.events.column("ts").cast(pa.int64()).to_pylist() == [None, None, 1704067200000, 5]


def test_json_two_objects_on_one_line_is_malformed_and_blank_lines_skipped():
    d = decode([b'{"op":1,"src":1,"dst":2}\n\n  \n{"op":1,"src":1,"dst":3}{"op":1,"src":1,"dst":4}\n'
                b'{"op":1,"src":1,"dst":5}\r\n'], "json", source="t")
    assert d.events.column("dst").to_pylist() == [2, 5]
    assert d.dead.column("reason").to_pylist() == ["malformed"]


def test_csv_variable_fields_header_and_line_positions():
    payload = b"op,src,dst,weight,ts\nadd,1,2\nadd_vertex,7\n3,8\n2,1,2,,1000\n\xff\xfe,1,2\n"
    d = decode([payload], "csv", source="file.csv", positions=[0], line_positions=True)
    assert d.events.column("op").to_pylist() == [1, 3, 3, 2]
    assert d.events.column("ts").cast(pa.int64()).to_pylist() == [None, None, None, 1000]
    assert d.dead.column("reason").to_pylist() == ["malformed"]     # not UTF-8
    assert d.dead.column("position").to_pylist() == [5]


def test_arrow_corrupt_payload_and_string_ops():
    good = pa.table({"op": pa.array([1, 2], pa.int8()), "src": [1, 2], "dst": [3, 4]})
    other = pa.table({"op": ["add", "nope"], "src": ["5", "6"], "dst": [7, 8]})
    truncated = encode_arrow(good)[:-30]
    d = decode([encode_arrow(good), b"\x00garbage", encode_arrow(other), truncated], "arrow",
               source="t", positions=[10, 11, 12, 13])
    assert d.events.column("src").to_pylist() == [1, 2, 5]
    assert sorted(zip(d.dead.column("position").to_pylist(), d.dead.column("reason").to_pylist())) == \
        [(11, "malformed"), (12, "unknown_op"), (13, "malformed")]


def test_arrow_many_batches_line_positions():
    t = pa.table({"op": pa.array([1] * 5, pa.int8()), "src": list(range(5)), "dst": [None, 1, 2, 3, 4]})
    import io
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, t.schema) as w:
        for b in t.to_batches(max_chunksize=2):
            w.write_batch(b)
    d = decode([sink.getvalue()], "arrow", source="t", positions=[100], line_positions=True)
    assert d.events.column("src").to_pylist() == [1, 2, 3, 4]
    assert d.dead.column("position").to_pylist() == [100]


def test_large_payload_one_bad_line_keeps_everything_else():
    n = 5000
    lines = [json.dumps(_good(i)) for i in range(n)]
    lines[1234] = '{"op":"add","src":1e30,"dst":1}'
    lines[4321] = '{"op":"add","src":'
    msgs = ["\n".join(lines[i:i + 100]).encode() for i in range(0, n, 100)]
    d = decode(msgs, "json", source="t")
    assert d.events.num_rows == n - 2
    assert d.dead.column("position").to_pylist() == [12, 43]
    assert d.events.column("src").to_pylist() == [100 + i for i in range(n) if i not in (1234, 4321)]


# ---- round trip of random valid events in all three formats ---------------------------------------
_NAMES = {1: ["add", "+", "1"], 2: ["delete", "-", "del"], 3: ["add_vertex"], 4: ["delete_vertex", "del_vertex"]}

event = st.fixed_dictionaries({
    "op": st.integers(1, 4),
    "src": st.integers(-2 ** 63, 2 ** 63 - 1),
    "dst": st.integers(-2 ** 63, 2 ** 63 - 1),
    "weight": st.one_of(st.none(), st.floats(-1e6, 1e6, width=32, allow_subnormal=False)),
    "ts": st.one_of(st.none(), st.integers(-10 ** 12, MAX_TS_MS)),          # valid times: up to the year 2200
    "name": st.integers(0, 3),
})


def _table(events):
    edge = [e["op"] <= 2 for e in events]
    return pa.Table.from_pylist([{
        "op": e["op"], "src": e["src"], "dst": e["dst"] if ed else None,
        "weight": e["weight"] if ed else None,
        "ts": None if e["ts"] is None else pa.scalar(e["ts"], pa.int64()).cast(pa.timestamp("ms")).as_py(),
    } for e, ed in zip(events, edge)], schema=EVENT_SCHEMA)


def _name(e):
    names = _NAMES[e["op"]]
    return names[e["name"] % len(names)] if e["name"] else e["op"]


def _wire(events, fmt, per_payload):
    chunks = [events[i:i + per_payload] for i in range(0, len(events), per_payload)]
    if fmt == "arrow":
        return [encode_arrow(_table(c)) for c in chunks]
    out = []
    for c in chunks:
        lines = []
        for e in c:
            edge = e["op"] <= 2
            if fmt == "json":
                rec = {"op": _name(e), "src": e["src"]}
                if edge:
                    rec["dst"] = e["dst"]
                    if e["weight"] is not None:
                        rec["weight"] = e["weight"]
                if e["ts"] is not None:
                    rec["ts"] = e["ts"]
                lines.append(json.dumps(rec))
            else:
                w = "" if e["weight"] is None or not edge else repr(e["weight"])
                ts = "" if e["ts"] is None else str(e["ts"])
                lines.append(f'{_name(e)},{e["src"]},{e["dst"] if edge else ""},{w},{ts}')
        out.append("\n".join(lines).encode())
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(event, min_size=1, max_size=40), st.sampled_from(["json", "csv", "arrow"]), st.integers(1, 7))
def test_round_trip(events, fmt, per_payload):
    d = decode(_wire(events, fmt, per_payload), fmt, source="rt")
    assert d.dead.num_rows == 0, d.dead.to_pylist()
    assert d.events.equals(_table(events))


# -- hostile input (issue 9): named classes, and outcomes independent of neighbours --------------
from collections import Counter  # noqa: E402

from tests.hostile_corpus import MAX_PAYLOAD, generated, named  # noqa: E402


def _outcome(payloads, fmt, positions):
    d = decode(payloads, fmt, source="t", partition=0, positions=positions, max_payload_bytes=MAX_PAYLOAD)
    dead = Counter((r["position"], r["reason"]) for r in d.dead.to_pylist())
    events = list(zip(d.positions.tolist(), *(d.events.column(c).to_pylist() for c in d.events.column_names)))
    return events, dead


@pytest.mark.parametrize("fmt", ["json", "csv", "arrow"])
def test_named_hostile_classes_have_their_outcome(fmt):
    for i, (payload, reason) in enumerate(named(fmt)):
        events, dead = _outcome([payload], fmt, [i])
        if reason is None:
            assert events and not dead, (payload[:80], dead)
        else:
            assert (i, reason) in dead and not events, (payload[:80] if payload else payload, dead, events)


@pytest.mark.parametrize("fmt", ["json", "csv", "arrow"])
@settings(max_examples=8, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_outcomes_never_depend_on_neighbours(fmt, data):
    """A poll of named and generated hostile messages among clean ones: each message's outcome is its own."""
    clean = [_good(i) for i in range(20)]
    clean = [json.dumps(e).encode() for e in clean] if fmt == "json" else \
        [_csv(e).encode() for e in clean] if fmt == "csv" else \
        [encode_arrow(pa.table({"op": pa.array([1], pa.int8()), "src": [e["src"]], "dst": [e["dst"]]}))
         for e in clean]
    payloads = clean + [p for p, _ in named(fmt)] + generated(fmt, data, 30)
    order = data.draw(st.permutations(range(len(payloads))))
    payloads = [payloads[i] for i in order]
    together_events, together_dead = _outcome(payloads, fmt, list(range(len(payloads))))
    alone_events, alone_dead = [], Counter()
    for i, p in enumerate(payloads):
        ev, dd = _outcome([p], fmt, [i])
        alone_events += ev
        alone_dead += dd
        assert ev or dd, f"payload {p!r:.80} has no outcome"
    assert together_dead == alone_dead
    assert together_events == alone_events


# -- CSV: the fast path (one typed pyarrow.csv parse) and the per-line split give every line one outcome ---------
#: field texts where pyarrow's typed parsers and the validation's text rules could disagree: hexadecimal (pyarrow
#: reads 0x10 as 16), signs, blanks, decimals, exponents, non-finite spellings, names, int64's edges
CSV_FIELDS = [b"", b"1", b"2", b"3", b"4", b"add", b"delete_vertex", b"-", b"+", b"0x10", b"0X1", b"0x1", b"-0x2",
              b"0x", b"10x", b"x", b" 7 ", b"\t8", b"+5", b"-0", b"007", b"1.0", b"1.5", b"1e3", b".5", b"5.",
              b"nan", b"inf", b"-Infinity", b"N/A", b"9223372036854775807", b"9223372036854775808",
              b"-9223372036854775809", b"1700000000000", b"2024-01-01T00:00:00Z", b"\xc2\xa012", b"\xff"]
csv_line = st.lists(st.sampled_from(CSV_FIELDS), min_size=2, max_size=5).map(b",".join)


def _line_outcomes(payloads, positions, line_positions=False):
    """{position: [("event", op, src, dst, weight, ts) or ("dead", reason)]} of one CSV decode."""
    d = decode(payloads, "csv", source="t", partition=0, positions=positions, line_positions=line_positions)
    events = d.events.set_column(4, "ts", d.events.column("ts").cast(pa.int64()))   # any int64 ms, not datetime
    out = {}
    for pos, *event in zip(d.positions.tolist(), *(events.column(c).to_pylist() for c in events.column_names)):
        out.setdefault(pos, []).append(("event", *event))
    for row in d.dead.to_pylist():
        out.setdefault(row["position"], []).append(("dead", row["reason"]))
    return out


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.lists(csv_line, min_size=1, max_size=12), st.data())
def test_csv_line_outcome_is_the_same_alone_and_in_any_poll(lines, data):
    """Each CSV line decoded alone (the fast path when its field count is valid) has the outcome it has in a
    joined poll of lines of one field count (fast path) and among lines of other field counts (the split)."""
    alone = {}
    for i, line in enumerate(lines):
        alone.update(_line_outcomes([line], [i]))
    assert set(alone) == set(range(len(lines))), "every line has an outcome"
    order = data.draw(st.permutations(range(len(lines))))
    same = [i for i, line in enumerate(lines) if line.count(b",") == lines[0].count(b",")]
    polls = {
        "one message a line": (lines, list(range(len(lines))), False),
        "one message of all lines": ([b"\n".join(lines)], [0], True),
        "lines of one field count": ([lines[i] for i in same], same, False),
        "shuffled": ([lines[i] for i in order], list(order), False),
        # a 2-field and a 5-field neighbour: the split path for every line
        "beside other field counts": ([*lines, b"add,1", b"add,1,2,3,4"], list(range(len(lines) + 2)), False),
    }
    for name, (payloads, positions, line_positions) in polls.items():
        got = _line_outcomes(payloads, positions, line_positions)
        covered = range(len(lines)) if line_positions else [p for p in positions if p < len(lines)]
        assert {p: got.get(p) for p in covered} == {p: alone[p] for p in covered}, name


@pytest.mark.parametrize("line, reason", [(b"add,0x10,2", "bad_id"), (b"0x1,1,2", "unknown_op"),
                                          (b"add,1,0X1F", "bad_id"), (b"add,1,2,1,0x10", "bad_timestamp")])
def test_csv_hexadecimal_is_rejected_alone_and_in_a_poll(line, reason):
    """QA: ``add,0x10,2`` was applied as src 16 when every line of the poll had its field count."""
    for payloads in ([line], [line, b"add,5,6"], [line, line]):
        d = decode(payloads, "csv", source="t", positions=list(range(len(payloads))))
        assert (0, reason) in {(r["position"], r["reason"]) for r in d.dead.to_pylist()}, payloads
        assert 0 not in d.positions.tolist()


def test_arrow_message_of_two_concatenated_streams_is_one_dead_letter():
    """QA: the reader stopped at the first stream's end-of-stream marker and the second stream's events were
    lost without a dead letter."""
    first = encode_arrow(_table([{"op": 1, "src": 1, "dst": 2, "weight": None, "ts": None}]))
    second = encode_arrow(_table([{"op": 1, "src": 3, "dst": 4, "weight": None, "ts": None}]))
    d = decode([first, first + second, second], "arrow", source="t", partition=0, positions=[10, 11, 12])
    assert d.positions.tolist() == [10, 12] and d.events.column("src").to_pylist() == [1, 3]
    dead = d.dead.to_pylist()
    assert [(r["position"], r["reason"]) for r in dead] == [(11, "malformed")]
    assert "more than one stream" in dead[0]["detail"]


# -- one meaning per value, whatever the wire format ------------------------------------------
# (field, JSON spelling, CSV spelling, Arrow column, expected: the value in the event, or the dead-letter reason)
SAME_VALUE = [
    ("src", "1e3", "1e3", pa.array([1e3]), 1000),                  # an integral float is an id in every spelling
    ("src", "1E3", "1E3", pa.array([1e3]), 1000),
    ("src", "1.0", "1.0", pa.array([1.0]), 1),
    ("src", "-0.0", "-0.0", pa.array([-0.0]), 0),
    ("src", "1.5", "1.5", pa.array([1.5]), "bad_id"),               # a fractional one is not
    ("src", "1e30", "1e30", pa.array([1e30]), "id_out_of_range"),
    ("src", "9.3e18", "9.3e18", pa.array([9.3e18]), "id_out_of_range"),
    ("dst", "2.5e1", "2.5e1", pa.array([25.0]), 25),
    ("ts", "5.5", "5.5", pa.array([5.5]), "bad_timestamp"),         # milliseconds are whole, as ids are
    ("ts", "5.0", "5.0", pa.array([5.0]), 5),
    ("ts", "5e3", "5e3", pa.array([5e3]), 5000),
    ("weight", "null", "", pa.array([None], pa.float64()), None),
    ("weight", "-0.0", "-0.0", pa.array([-0.0]), -0.0),
    ("weight", "1e300", "1e300", pa.array([1e300]), "bad_weight"),
    ("op", '"delete"', "delete", pa.array(["delete"]), 2),
    ("op", "2.0", "2.0", pa.array([2.0]), 2),
]


def _one_event(fmt: str, field: str, json_text: str, csv_text: str, column: pa.Array) -> bytes:
    base = {"op": "1", "src": "7", "dst": "8", "weight": "", "ts": ""}
    if fmt == "json":
        fields = {**{k: v for k, v in base.items() if v}, field: json_text}
        return ("{" + ",".join(f'"{k}":{v}' for k, v in fields.items()) + "}").encode()
    if fmt == "csv":
        return ",".join({**base, field: csv_text}.values()).encode()
    cols = {"op": pa.array([1], pa.int8()), "src": pa.array([7]), "dst": pa.array([8]), field: column}
    return encode_arrow(pa.table(cols))


@pytest.mark.parametrize("fmt", ["json", "csv", "arrow"])
@pytest.mark.parametrize("field,json_text,csv_text,column,expected", SAME_VALUE,
                         ids=[f"{c[0]}={c[1]}" for c in SAME_VALUE])
def test_a_value_has_one_outcome_in_every_format(fmt, field, json_text, csv_text, column, expected):
    d = decode([_one_event(fmt, field, json_text, csv_text, column)], fmt, source="t")
    if isinstance(expected, str):
        assert d.events.num_rows == 0 and d.dead.column("reason").to_pylist() == [expected], d.dead.to_pylist()
    else:
        assert d.dead.num_rows == 0, d.dead.to_pylist()
        value = d.events.column(field).to_pylist()[0]
        if field == "ts":
            value = int(d.events.column("ts").cast(pa.int64())[0].as_py())
        assert value == expected and str(value) == str(expected)       # -0.0 stays -0.0


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_a_byte_order_mark_opening_a_payload_is_dropped(fmt):
    line = b'{"op":1,"src":1,"dst":2}' if fmt == "json" else b"1,1,2"
    other = b'{"op":1,"src":3,"dst":4}' if fmt == "json" else b"1,3,4"
    bom = b"\xef\xbb\xbf"
    for payloads in ([bom + line], [other, bom + line], [bom + line + b"\n" + other]):
        d = decode(payloads, fmt, source="t")
        assert d.dead.num_rows == 0 and 1 in d.events.column("src").to_pylist(), (payloads, d.dead.to_pylist())


ARROW_LAYOUTS = [
    ("op", pa.array(["add"], pa.large_string())),
    ("op", pa.array(["add"], pa.string_view())),
    ("op", pa.array(["add"]).dictionary_encode()),
    ("op", pa.array([1], pa.uint8())),
    ("src", pa.array(["7"], pa.string_view())),
    ("src", pa.array([b"7"], pa.binary_view())),
    ("src", pa.array([7], pa.int16())),
    ("src", pa.array([7], pa.int32())),
    ("src", pa.array([7], pa.uint32())),
    ("src", pa.array([7], pa.uint64())),
    ("weight", pa.array(["1.0"], pa.string_view())),
    ("op", pc.run_end_encode(pa.array(["add"]))),
    ("src", pc.run_end_encode(pa.array([7], pa.int32()))),
]


@pytest.mark.parametrize("field,column", ARROW_LAYOUTS, ids=[f"{f}:{c.type}" for f, c in ARROW_LAYOUTS])
def test_arrow_layouts_of_a_column_are_cast_not_refused(field, column):
    cols = {"op": pa.array([1], pa.int8()), "src": pa.array([7]), "dst": pa.array([8]), "weight": pa.array([1.0])}
    d = decode([encode_arrow(pa.table({**cols, field: column}))], "arrow", source="t")
    assert d.dead.num_rows == 0, d.dead.to_pylist()
    assert d.events.to_pylist()[0] | {"ts": None} == {"op": 1, "src": 7, "dst": 8, "weight": 1.0, "ts": None}


def test_arrow_ipc_file_format_is_read_and_a_cut_file_named_so():
    table = pa.table({"op": pa.array([1, 1], pa.int8()), "src": [1, 3], "dst": [2, 4]})
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    payload = sink.getvalue()
    d = decode([payload], "arrow", source="t")
    assert d.dead.num_rows == 0 and d.events.column("src").to_pylist() == [1, 3]
    d = decode([payload[:-10] + payload[-6:]], "arrow", source="t")       # footer damaged, magic kept
    assert d.dead.column("reason").to_pylist() == ["malformed"] and "IPC file" in d.dead.column("detail")[0].as_py()
