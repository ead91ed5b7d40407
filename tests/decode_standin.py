"""A minimal stand-in for ``stream.decode.decode`` (written in parallel on another branch).

Only for these tests: JSON lines through ``pyarrow.json``, CSV through
``pyarrow.csv``, Arrow IPC streams through ``pyarrow.ipc``.  A payload that does
not parse, or names an unknown op, becomes a dead letter ("malformed" /
"unknown_op"); everything else in the same call is kept.  The real decoder
validates far more (ids, weights, timestamps).
"""
from __future__ import annotations

import io
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pyarrow.json as pajson

from stream.schema import DEAD_LETTER_SCHEMA, EVENT_SCHEMA, OP_NAMES

_WIRE = pa.schema([("op", pa.string()), ("src", pa.int64()), ("dst", pa.int64()),
                   ("weight", pa.float64()), ("ts", pa.int64())])


class Decoded(NamedTuple):
    events: pa.Table
    dead: pa.Table


def _ops(col: pa.ChunkedArray) -> pa.Array:
    names = list(OP_NAMES) + [str(int(v)) for v in set(OP_NAMES.values())]
    codes = [int(OP_NAMES[n]) for n in OP_NAMES] + [int(v) for v in set(OP_NAMES.values())]
    idx = pc.index_in(pc.utf8_lower(col), value_set=pa.array(names))
    return pc.take(pa.array(codes, pa.int8()), idx)


def _events(t: pa.Table) -> pa.Table:
    return pa.table({
        "op": _ops(t.column("op").combine_chunks()),
        "src": t.column("src").combine_chunks(),
        "dst": t.column("dst").combine_chunks(),
        "weight": pc.cast(t.column("weight"), pa.float32()).combine_chunks(),
        "ts": pc.cast(t.column("ts"), pa.timestamp("ms")).combine_chunks(),
    })


def _parse_text(data: bytes, fmt: str) -> pa.Table:
    if fmt == "json":
        # op is a name or a numeric code; try both column types (the real decoder is smarter)
        for op_type in (pa.int64(), pa.string()):
            schema = _WIRE.set(0, pa.field("op", op_type))
            opts = pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
            try:
                raw = pajson.read_json(io.BytesIO(data), parse_options=opts)
            except pa.ArrowInvalid:
                continue
            return raw.set_column(0, "op", pc.cast(raw.column("op"), pa.string()))
        raise pa.ArrowInvalid("unparseable JSON")
    names = ["op", "src", "dst", "weight", "ts"]
    return pacsv.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(column_names=names),
                          convert_options=pacsv.ConvertOptions(column_types=_WIRE))


def _dead(source, partition, positions, reasons, payloads) -> pa.Table:
    return pa.table({"source": [source] * len(reasons), "partition": [partition] * len(reasons),
                     "position": positions, "reason": reasons, "detail": reasons,
                     "payload": [p[:1000].decode("utf-8", "replace") for p in payloads]},
                    schema=DEAD_LETTER_SCHEMA)


def decode(payloads, fmt, source="", partition=None, positions=None) -> Decoded:
    payloads = list(payloads)
    positions = list(positions) if positions is not None else list(range(len(payloads)))
    tables, bad = [], []
    if fmt == "arrow":
        for i, p in enumerate(payloads):
            try:
                tables.append(ipc.open_stream(p).read_all())
            except Exception:
                bad.append(i)
        tables = [t.select(EVENT_SCHEMA.names).cast(EVENT_SCHEMA) for t in tables]
        events = pa.concat_tables(tables) if tables else EVENT_SCHEMA.empty_table()
        dead = _dead(source, partition, [positions[i] for i in bad], ["malformed"] * len(bad),
                     [payloads[i] for i in bad])
        return Decoded(events, dead)
    # text: parse all payloads joined; on failure find the bad ones one by one (rare path)
    try:
        good_idx, parsed = list(range(len(payloads))), _parse_text(b"\n".join(payloads) + b"\n", fmt)
    except Exception:
        good_idx, parts = [], []
        for i, p in enumerate(payloads):
            try:
                parts.append(_parse_text(p + b"\n", fmt))
                good_idx.append(i)
            except Exception:
                bad.append(i)
        parsed = pa.concat_tables(parts) if parts else _WIRE.empty_table()
    ev = _events(parsed)
    unknown = pc.is_null(ev.column("op"))
    unknown_idx = pc.indices_nonzero(unknown).to_pylist()   # one event per payload in the text formats
    ev = ev.filter(pc.invert(unknown)).cast(EVENT_SCHEMA)
    reasons = ["malformed"] * len(bad) + ["unknown_op"] * len(unknown_idx)
    rows = bad + [good_idx[i] for i in unknown_idx]
    dead = _dead(source, partition, [positions[i] for i in rows], reasons, [payloads[i] for i in rows])
    return Decoded(ev, dead)
