"""stream.validate: every bad-input class, typed and text columns, order and positions."""
import datetime as dt
import decimal
import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA, EVENT_SCHEMA, REASONS
from vinestream.stream.events.validate import validate

# (row as text fields, expected reason or None)
CASES = [
    ({"op": "add", "src": "1", "dst": "2"}, None),
    ({"op": "wibble", "src": "1", "dst": "2"}, "unknown_op"),
    ({"op": "7", "src": "1", "dst": "2"}, "unknown_op"),
    ({"op": None, "src": "1", "dst": "2"}, "unknown_op"),
    ({"op": "add", "src": None, "dst": "2"}, "null_id"),
    ({"op": "add", "src": "1.5", "dst": "2"}, "bad_id"),
    ({"op": "add", "src": "x", "dst": "2"}, "bad_id"),
    ({"op": "add", "src": str(2 ** 63), "dst": "2"}, "id_out_of_range"),
    ({"op": "add", "src": str(-2 ** 63 - 1), "dst": "2"}, "id_out_of_range"),
    ({"op": "add", "src": "1" * 40, "dst": "2"}, "id_out_of_range"),
    ({"op": "add", "src": "1", "dst": None}, "missing_dst"),
    ({"op": "delete", "src": "1", "dst": "2.5"}, "bad_id"),
    ({"op": "-", "src": "1", "dst": str(2 ** 64)}, "id_out_of_range"),
    ({"op": "add", "src": "1", "dst": "2", "weight": "nan"}, "bad_weight"),
    ({"op": "add", "src": "1", "dst": "2", "weight": "inf"}, "bad_weight"),
    ({"op": "add", "src": "1", "dst": "2", "weight": "heavy"}, "bad_weight"),
    ({"op": "add", "src": "1", "dst": "2", "weight": "1e39"}, "bad_weight"),   # beyond float32
    ({"op": "add", "src": "1", "dst": "2", "ts": "yesterday"}, "bad_timestamp"),
    ({"op": "add", "src": "1", "dst": "2", "ts": "2024-13-01T00:00:00"}, "bad_timestamp"),
    ({"op": "add_vertex", "src": "5", "dst": "x", "weight": "nan"}, None),     # vertex ops ignore dst/weight
    ({"op": "add", "src": "3", "dst": "3"}, None),                              # self-loop: not rejected here
    ({"op": "add", "src": str(2 ** 63 - 1), "dst": str(-2 ** 63)}, None),      # int64 limits are fine
    ({"op": "add", "src": "007", "dst": "12.0"}, None),
]


def _text_table(rows):
    cols = {k: pa.array([r.get(k) for r in rows], pa.string()) for k in ("op", "src", "dst", "weight", "ts")}
    return pa.table(cols)


def test_every_reason_on_text_columns_in_order_with_positions():
    rows = [r for r, _ in CASES]
    positions = np.arange(len(rows)) * 10 + 1000
    events, dead = validate(_text_table(rows), source="s", partition=4, positions=positions)
    assert events.schema == EVENT_SCHEMA and dead.schema == DEAD_LETTER_SCHEMA
    want_dead = [(int(positions[i]), reason) for i, (_, reason) in enumerate(CASES) if reason]
    assert list(zip(dead.column("position").to_pylist(), dead.column("reason").to_pylist())) == want_dead
    assert set(dead.column("partition").to_pylist()) == {4} and set(dead.column("source").to_pylist()) == {"s"}
    assert all(r in REASONS for r in dead.column("reason").to_pylist())
    good = [r for r, reason in CASES if reason is None]
    assert events.column("src").to_pylist() == [int(float(r["src"])) if "." in r["src"] else int(r["src"])
                                                 for r in good]
    vertex = events.filter(pa.compute.equal(events.column("op"), 3))
    assert vertex.column("dst").null_count == 1 and vertex.column("weight").null_count == 1


def test_typed_columns():
    t = pa.table({
        "op": pa.array([1, 2, 3, 9, 1, 1, 1], pa.int8()),
        "src": pa.array([1, 2, 3, 4, 2 ** 64 - 1, 6, 7], pa.uint64()),
        "dst": pa.array([2.0, 3.0, None, 1.0, 1.0, 1.5, float("nan")]),
        "weight": pa.array([0.5, None, 1.0, 1.0, 1.0, 1.0, 1.0], pa.float64()),
        "ts": pa.array([1, 2, 3, 4, 5, 6, 7], pa.timestamp("s", tz="UTC")),
    })
    events, dead = validate(t, source="f")
    assert events.column("src").to_pylist() == [1, 2, 3]
    assert events.column("ts").cast(pa.int64()).to_pylist() == [1000, 2000, 3000]
    assert dead.column("reason").to_pylist() == ["unknown_op", "id_out_of_range", "bad_id", "bad_id"]
    assert dead.column("position").to_pylist() == [3, 4, 5, 6]


def test_float_ids_and_weights_and_ts_variants():
    t = pa.table({
        "op": ["add", "ADD ", " + ", "del_edge", "add", "add"],
        "src": pa.array([1.0, float(2 ** 63), -1.0, 4.0, 5.0, 6.0]),
        "dst": pa.array([2, 3, 4, 5, 6, 7], pa.int32()),
        "weight": pa.array([1, 2, 3, 4, 5, 6], pa.int64()),
        "ts": ["1700000000000", "0", "2024-01-01T00:00:00.250Z", "2024-01-01 01:00:00+01:00", "", "-5"],
    })
    events, dead = validate(t, source="f")
    assert dead.column("reason").to_pylist() == ["id_out_of_range"]
    ts = events.column("ts").cast(pa.int64()).to_pylist()
    jan1 = int(dt.datetime(2024, 1, 1, tzinfo=dt.UTC).timestamp() * 1000)
    assert ts == [1700000000000, jan1 + 250, jan1, None, -5]
    assert events.column("op").to_pylist() == [1, 1, 2, 1, 1]


@given(st.datetimes(min_value=dt.datetime(1800, 1, 1), max_value=dt.datetime(2190, 1, 1)),
       st.sampled_from(["", "Z", "+00:00", "+05:30"]))
def test_iso_times_with_a_finer_fraction_are_floored_to_ms(when, zone):
    """ISO text with microseconds (what datetime.isoformat() writes) or nanoseconds was a bad_timestamp: the cast
    to ms refused any finer fraction.  It is floored to the ms, as a timestamp column of a finer unit is."""
    text = when.isoformat(timespec="microseconds") + zone
    events, dead = validate(pa.table({"op": ["add"], "src": ["1"], "dst": ["2"], "ts": [text]}), source="f")
    assert dead.num_rows == 0
    aware = dt.datetime.fromisoformat(text) if zone else when.replace(tzinfo=dt.UTC)
    micros = (aware - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)
    assert events.column("ts").cast(pa.int64()).to_pylist() == [micros // 1000]
    nanos = validate(pa.table({"op": ["add"], "src": ["1"], "dst": ["2"], "ts": ["2024-01-01T00:00:00.123456789Z"]}),
                     source="f")[0]
    assert nanos.column("ts").cast(pa.int64()).to_pylist() == [1704067200123]


def test_missing_columns():
    events, dead = validate(pa.table({"op": [3, 1], "src": [1, 2]}), source="f")
    assert events.num_rows == 1 and dead.column("reason").to_pylist() == ["missing_dst"]
    events, dead = validate(pa.table({"src": [1, 2]}), source="f")
    assert events.num_rows == 0 and dead.column("reason").to_pylist() == ["unknown_op"] * 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.integers(-2 ** 70, 2 ** 70), st.text(max_size=5),
                          st.floats(allow_nan=True, allow_infinity=True)), min_size=1, max_size=30))
def test_ids_as_text_agree_with_python(values):
    """A text id is valid iff Python's int() of it is an int64, or its exact decimal value is an integer in int64
    (integral floats accepted as text: ``12.0``, ``1.2e3``, ``5.89344445305201e+16``, never rounded)."""
    texts = [repr(v) if isinstance(v, float) else str(v) for v in values]
    t = pa.table({"op": ["add_vertex"] * len(texts), "src": texts})
    events, dead = validate(t, source="h")
    expect = []
    for s in texts:
        s2 = s.strip()
        try:
            v = int(s2) if s2.lstrip("+-").isdigit() and s2.isascii() else None
        except ValueError:
            v = None
        if v is None and s2.endswith(".0") and s2[:-2].lstrip("+-").isdigit():
            v = int(s2[:-2])
        if v is None and re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", s2):
            d = decimal.Decimal(s2)
            if d == d.to_integral_value():
                v = int(d)
        if v is not None and -2 ** 63 <= v < 2 ** 63:
            expect.append(v)
    assert events.column("src").to_pylist() == expect
    assert events.num_rows + dead.num_rows == len(texts)


def test_weights_past_2_53_and_at_the_float32_limit():
    """An integer weight past 2**53 is a weight (rounded): its checked cast to float64 refused the whole column,
    and every other row with it.  A weight is bad only when it is no finite float32 once rounded to one:
    3.4028235e38 (float32's largest value as NumPy prints it) is good, 3.4028236e38 is not."""
    ints = pa.table({"op": [1, 1, 1], "src": [1, 2, 3], "dst": [2, 3, 4],
                     "weight": pa.array([2 ** 60, 7, -(2 ** 62)], pa.int64())})
    events, dead = validate(ints, source="f")
    assert dead.num_rows == 0
    assert events.column("weight").to_pylist() == [float(np.float32(2 ** 60)), 7.0, float(np.float32(-(2 ** 62)))]
    huge = pa.table({"op": [1, 1], "src": [1, 2], "dst": [2, 3], "weight": pa.array([2 ** 64 - 1, 1], pa.uint64())})
    assert validate(huge, source="f")[1].num_rows == 0
    texts = pa.table({"op": ["add"] * 4, "src": ["1"] * 4, "dst": ["2"] * 4,
                      "weight": ["3.4028235e38", "-3.4028235e38", "3.4028236e38", "1e39"]})
    events, dead = validate(texts, source="f")
    assert events.column("weight").to_pylist() == [float(np.finfo(np.float32).max), -float(np.finfo(np.float32).max)]
    assert dead.column("position").to_pylist() == [2, 3] and set(dead.column("reason").to_pylist()) == {"bad_weight"}


def test_events_reads_any_python_value_it_can_name():
    """vinestream.events: an id past 64 bits is the ValueError its docstring promises (it was an OverflowError from
    pyarrow), datetimes are times, and columns of different lengths are one ValueError."""
    import pytest

    from vinestream.stream.events.validate import events
    with pytest.raises(ValueError, match="row 0: id_out_of_range"):
        events(op=["add"], src=[2 ** 64], dst=[2])
    with pytest.raises(ValueError, match=r"row 1: id_out_of_range \(dst"):
        events(op=["add", "add"], src=[1, 2], dst=[2, -(2 ** 70)])
    got = events(op=["add"], src=[1], dst=[2], ts=[dt.datetime(2024, 1, 1, 0, 0, 1)])
    assert got.column("ts").cast(pa.int64()).to_pylist() == [
        int(dt.datetime(2024, 1, 1, 0, 0, 1, tzinfo=dt.UTC).timestamp() * 1000)]
    with pytest.raises(ValueError, match="differ in length"):
        events(op=["add", "add"], src=[1], dst=[2])


def test_times_past_2200_are_bad_timestamps():
    """An event time past the year 2200 (or before 1740) is a bad_timestamp, as convert holds it: one such event
    moved the worker's event-time watermark past every edge's --edge-ttl for good (found by QA: every edge then
    expired as it arrived).  The bound is the same for numbers, ISO text and typed timestamps."""
    from vinestream.stream.events.schema import MAX_TS_MS
    t = pa.table({"op": ["add"] * 6, "src": ["1"] * 6, "dst": ["2"] * 6,
                  "ts": [str(MAX_TS_MS), str(MAX_TS_MS + 1), "9999-12-31T00:00:00", "99999999999999999",
                         str(-MAX_TS_MS - 1), "2199-12-31T23:59:59Z"]})
    _, dead = validate(t, source="f")
    assert dead.column("position").to_pylist() == [1, 2, 3, 4]
    assert set(dead.column("reason").to_pylist()) == {"bad_timestamp"}
    assert "between the years 1740 and 2200" in dead.column("detail")[0].as_py()
    typed = pa.table({"op": [1, 1], "src": [1, 2], "dst": [2, 3],
                      "ts": pa.array([2 ** 62, 1_700_000_000_000], pa.int64()).cast(pa.timestamp("ms"))})
    assert validate(typed, source="f")[1].column("position").to_pylist() == [0]


def test_integral_floats_are_ids_and_times_in_every_spelling_and_fractions_are_not():
    """Text (JSON, CSV) and float columns (Arrow, Parquet) follow one rule: integral or bad."""
    text = pa.table({"op": ["1"] * 6, "src": ["1e3", "1.0", "2.5e1", "1.5", "1.2345678901234567e3", "1e3"],
                     "dst": ["2"] * 6, "ts": ["5", "5.0", "5e3", "", "", "5.5"]})
    floats = pa.table({"op": [1] * 6, "src": [1e3, 1.0, 25.0, 1.5, 1234.5678901234567, 1e3],
                       "dst": [2] * 6, "ts": [5.0, 5.0, 5e3, None, None, 5.5]})
    for t in (text, floats):
        events, dead = validate(t, source="f")
        assert events.column("src").to_pylist() == [1000, 1, 25]
        assert events.column("ts").cast(pa.int64()).to_pylist() == [5, 5, 5000]
        assert dead.column("reason").to_pylist() == ["bad_id", "bad_id", "bad_timestamp"]


@pytest.mark.parametrize("text,expected", [
    ("5.89344445305201e+16", 58934444530520100), ("9.223372036854775807e18", 2 ** 63 - 1),
    ("-9.223372036854775808e18", -2 ** 63), ("9.223372036854775808e18", "id_out_of_range"),
    ("1e999999999999999999999", "id_out_of_range"), ("1e-999999999999999999999", "bad_id"),
    ("0e-99", 0), ("-0.0e5", 0), ("120e-1", 12), ("1.25e1", "bad_id"), (".5e1", 5), ("1.e3", 1000),
])
def test_exponent_ids_are_read_exactly_never_through_float64(text, expected):
    events, dead = validate(pa.table({"op": ["add_vertex"], "src": [text]}), source="t")
    got = events.column("src").to_pylist() + dead.column("reason").to_pylist()
    assert got == [expected]
