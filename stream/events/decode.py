"""Vectorised decoding of wire payloads (JSON lines, CSV lines, Arrow IPC) into event batches.

DESIGN.md, "Events and their meaning" / "The worker": payloads are joined and
parsed once with ``pyarrow.json`` / ``pyarrow.csv``; there is never one Python
object per event on the common path.  Records then go through
:func:`stream.validate.validate_table`, so every bad-input class ends as a dead
letter with its reason and source position.

Bad lines never cost the good ones beside them:

- JSON: the joined text is parsed with ``src``/``dst`` typed as int64 (so an id
  beyond int64 is an error, never a silent float64 or a wrap).  If a chunk fails
  it is bisected; chunks of at most ``_LEAF_LINES`` lines are re-parsed with every
  number quoted and every field read as text (which takes mixed types, ``1.5``,
  ``2**63``...), and a line that still fails alone is ``malformed``.  Cost:
  O(k log n) parses for k bad lines among n.
- CSV: one fast ``pyarrow.csv`` parse when every line has the same field count;
  otherwise every line is split on commas with ``pyarrow.compute`` (variable
  ``op,src,dst[,weight[,ts]]`` lines, vertex ops with two fields) and lines with
  a wrong field count are ``malformed``.  A first field ``op`` is a header and
  is skipped.
- Arrow IPC: each payload is one IPC stream; batches read before a corrupt
  point are kept, the rest of that payload is one ``malformed`` dead letter.

Positions: record positions are ``positions[payload]`` (a Kafka offset), or with
``line_positions=True`` ``positions[payload] + record index within the payload``
(a file whose rows are the positions).
"""
from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.json as pjson

from vinestream.stream.events.schema import empty_dead_letters, empty_events
from vinestream.stream.events.validate import cast_or_null, dead_letters, validate_table

__all__ = ["FORMATS", "Decoded", "decode"]

FORMATS = ("json", "csv", "arrow")
FIELDS = ("op", "src", "dst", "weight", "ts")

_LEAF_LINES = 256
_TYPED_JSON = pjson.ParseOptions(
    explicit_schema=pa.schema([("src", pa.int64()), ("dst", pa.int64())]),
    unexpected_field_behavior="infer")
_TEXT_JSON = pjson.ParseOptions(
    explicit_schema=pa.schema([(f, pa.string()) for f in FIELDS]), unexpected_field_behavior="ignore")
_JSON_NUMBER = re.compile(rb'(":\s*)(-?[0-9][0-9.eE+-]*)')     # a bare number after a key
_BLANK = np.zeros(256, dtype=bool)
_BLANK[list(b" \t\r\n\f\v")] = True
_PARSE_ERRORS = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError)


@dataclass
class Decoded:
    """Valid events (EVENT_SCHEMA, input order) and dead letters (DEAD_LETTER_SCHEMA)."""
    events: pa.Table
    dead: pa.Table

    def __len__(self) -> int:
        return self.events.num_rows


class _Lines:
    """The joined payloads and the byte ranges of their non-blank lines (all NumPy)."""

    def __init__(self, payloads: Sequence[bytes], positions: np.ndarray, line_positions: bool):
        self.data = b"\n".join(payloads) + b"\n"        # join takes any bytes-like payload
        buf = np.frombuffer(self.data, dtype=np.uint8)
        plen = np.fromiter(map(len, payloads), dtype=np.int64, count=len(payloads))
        pstart = np.concatenate([[0], np.cumsum(plen + 1)[:-1]]).astype(np.int64)
        nl = np.flatnonzero(buf == 10)
        starts = np.concatenate([[0], nl[:-1] + 1]).astype(np.int64)
        ends = nl.astype(np.int64)
        # A line is blank when it holds only whitespace.  Almost every line starts with a
        # non-blank byte, so look at first bytes only and check the few others exactly
        # (scanning every byte of the buffer costs more than the JSON parse itself).
        keep = ends > starts
        suspect = np.flatnonzero(keep & _BLANK[buf[np.minimum(starts, len(buf) - 1)]])
        if len(suspect):
            keep[suspect] = [bool(self.data[s:e].strip()) for s, e in zip(starts[suspect], ends[suspect])]
        self._all_starts = np.concatenate([starts, [len(self.data)]]).astype(np.int64)
        self.kept = np.flatnonzero(keep)
        self.starts, self.ends = starts[keep], ends[keep]
        # strip a trailing '\r' (CRLF)
        cr = (self.ends > self.starts) & (buf[np.maximum(self.ends - 1, 0)] == 13)
        self.ends = self.ends - cr
        payload = np.searchsorted(pstart, self.starts, side="right") - 1
        pos = positions[payload]
        if line_positions:
            first_line = np.searchsorted(self.starts, pstart)
            pos = pos + (np.arange(len(self.starts)) - first_line[payload])
        self.positions = pos.astype(np.int64)
        self.buffer = pa.py_buffer(self.data)

    def __len__(self) -> int:
        return len(self.starts)

    def chunk(self, lo: int, hi: int) -> pa.Buffer:
        """Bytes of lines [lo, hi) (with whatever blank lines lie between them)."""
        s, e = int(self.starts[lo]), int(self.ends[hi - 1])
        return self.buffer.slice(s, e - s)

    def text(self, idx: np.ndarray) -> list[str]:
        """The given lines as text (used only for dead letters)."""
        return [self.data[s:e].decode("utf-8", "replace") for s, e in zip(self.starts[idx], self.ends[idx])]

    def binary(self) -> pa.Array:
        """All kept lines (with their line ends) as one binary array: a zero-copy view, then a take."""
        every = pa.Array.from_buffers(pa.large_binary(), len(self._all_starts) - 1,
                                      [None, pa.py_buffer(self._all_starts), self.buffer])
        return every.take(pa.array(self.kept))


# ---------------------------------------------------------------------------------------------
# JSON
def _json_parse(buf: pa.Buffer, options: pjson.ParseOptions, expected_rows: int) -> pa.Table | None:
    try:
        table = pjson.read_json(pa.BufferReader(buf), parse_options=options)
    except _PARSE_ERRORS:
        return None
    # one row per line, or the positions would slip (e.g. two objects on one line)
    return table if table.num_rows == expected_rows else None


def _json_text(lines: _Lines, lo: int, hi: int, out: list) -> None:
    """Parse lines [lo, hi) with every value as text; bisect down to single malformed lines."""
    quoted = _JSON_NUMBER.sub(rb'\1"\2"', lines.chunk(lo, hi).to_pybytes())
    table = _json_parse(pa.py_buffer(quoted), _TEXT_JSON, hi - lo)
    if table is not None:
        out.append((lo, hi, table))
    elif hi - lo == 1:
        out.append((lo, hi, None))
    else:
        mid = (lo + hi) // 2
        _json_text(lines, lo, mid, out)
        _json_text(lines, mid, hi, out)


def _json_chunks(lines: _Lines, lo: int, hi: int, out: list) -> None:
    table = _json_parse(lines.chunk(lo, hi), _TYPED_JSON, hi - lo)
    if table is not None:
        out.append((lo, hi, table))
    elif hi - lo <= _LEAF_LINES:
        _json_text(lines, lo, hi, out)
    else:
        mid = (lo + hi) // 2
        _json_chunks(lines, lo, mid, out)
        _json_chunks(lines, mid, hi, out)


# ---------------------------------------------------------------------------------------------
# CSV
def _csv_fast(lines: _Lines) -> pa.Table | None:
    """One pyarrow.csv parse of everything, when all lines have the same field count."""
    first = lines.data[lines.starts[0]:lines.ends[0]]
    nfields = first.count(b",") + 1
    if not 2 <= nfields <= len(FIELDS) or first.split(b",")[0].strip().lower() == b"op":
        return None
    try:
        table = pcsv.read_csv(
            pa.BufferReader(lines.chunk(0, len(lines))),
            read_options=pcsv.ReadOptions(column_names=list(FIELDS[:nfields])),
            parse_options=pcsv.ParseOptions(newlines_in_values=False),
            convert_options=pcsv.ConvertOptions(
                column_types={"src": pa.int64(), "dst": pa.int64()}, strings_can_be_null=True))
    except _PARSE_ERRORS:
        return None
    return table if table.num_rows == len(lines) else None


def _csv_split(lines: _Lines) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """Split every line on commas (vectorised); returns (fields as text, malformed, header)."""
    text, not_utf8 = cast_or_null(lines.binary(), pa.large_string())
    parts = pc.split_pattern(pc.fill_null(text, ""), ",")
    count = np.asarray(pc.list_value_length(parts).to_numpy(zero_copy_only=False), dtype=np.int64)
    flat = pc.utf8_trim_whitespace(pc.list_flatten(parts))
    offsets = np.asarray(parts.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)[:-1]
    cols = []
    for k, _ in enumerate(FIELDS):
        has = count > k
        idx = pa.array(np.where(has, offsets + k, 0), pa.int64(), mask=~has)
        cols.append(flat.take(idx) if len(flat) else pa.nulls(len(count), pa.large_string()))
    table = pa.Table.from_arrays(cols, names=list(FIELDS))
    malformed = not_utf8 | (count < 2) | (count > len(FIELDS))
    header = ~malformed & np.asarray(
        pc.fill_null(pc.equal(pc.utf8_lower(cols[0]), "op"), False).to_numpy(zero_copy_only=False), bool)
    return table, malformed, header


# ---------------------------------------------------------------------------------------------
def _text_decode(lines: _Lines, fmt: str, source: str, partition) -> Decoded:
    if len(lines) == 0:
        return Decoded(empty_events(), empty_dead_letters())
    pieces: list[tuple[int, int, pa.Table | None]] = []
    if fmt == "json":
        _json_chunks(lines, 0, len(lines), pieces)
    else:
        table = _csv_fast(lines)
        if table is not None:
            pieces.append((0, len(lines), table))
        else:
            table, malformed, header = _csv_split(lines)
            good = ~malformed & ~header
            # contiguous runs of good lines become pieces; each malformed line its own None piece
            bounds = np.flatnonzero(np.diff(np.concatenate([[0], good.astype(np.int8), [0]])))
            runs = list(zip(bounds[::2], bounds[1::2]))
            for lo, hi in runs:
                pieces.append((int(lo), int(hi), table.slice(lo, hi - lo)))
            for i in np.flatnonzero(malformed):
                pieces.append((int(i), int(i) + 1, None))
            pieces.sort(key=lambda p: p[0])
    events, dead = [], []
    for lo, hi, table in pieces:
        if table is None:
            idx = np.arange(lo, hi)
            dead.append(dead_letters(source=source, partition=partition, positions=lines.positions[idx],
                                     reasons=["malformed"] * len(idx),
                                     details=[f"not a valid {fmt.upper()} record"] * len(idx),
                                     payloads=lines.text(idx)))
            continue
        ev, dl = validate_table(table, source=source, partition=partition,
                                positions=lines.positions[lo:hi],
                                raw=lambda idx, lo=lo: lines.text(idx + lo))
        events.append(ev)
        dead.append(dl)
    return _join(events, dead)


def _arrow_decode(payloads: Sequence[bytes], positions: np.ndarray, line_positions: bool,
                  source: str, partition) -> Decoded:
    events, dead = [], []
    run: list[pa.Table] = []
    run_pos: list[np.ndarray] = []

    def flush():
        if run:
            table = pa.concat_tables(run)
            ev, dl = validate_table(table, source=source, partition=partition,
                                    positions=np.concatenate(run_pos))
            events.append(ev)
            dead.append(dl)
            run.clear()
            run_pos.clear()

    for i, payload in enumerate(payloads):
        batches, error, reader = [], None, None
        try:
            reader = pa.ipc.open_stream(pa.py_buffer(payload))
            for batch in reader:
                batches.append(batch)
        except (*_PARSE_ERRORS, OSError, ValueError) as exc:
            error = exc
        if batches:
            table = pa.Table.from_batches(batches)
            if run and table.schema != run[0].schema:
                flush()
            pos = np.full(table.num_rows, positions[i], dtype=np.int64)
            if line_positions:
                pos += np.arange(table.num_rows)
            run.append(table)
            run_pos.append(pos)
        if error is not None:
            flush()
            dead.append(dead_letters(source=source, partition=partition, positions=[positions[i]],
                                     reasons=["malformed"],
                                     details=[f"bad Arrow IPC stream after {len(batches)} batches: {error}"],
                                     payloads=[f"<{len(payload)} bytes of Arrow IPC>"]))
    flush()
    return _join(events, dead)


def _join(events: list[pa.Table], dead: list[pa.Table]) -> Decoded:
    return Decoded(pa.concat_tables(events) if events else empty_events(),
                   pa.concat_tables(dead) if dead else empty_dead_letters())


def decode(payloads: Sequence[bytes], fmt: Literal["json", "csv", "arrow"], *, source: str,
           partition: int | None = None, positions: Sequence[int] | None = None,
           line_positions: bool = False) -> Decoded:
    """Decode wire payloads into (valid events, dead letters); see the module docstring.

    ``positions[i]`` is the source position of payload i (default: i).  Valid events keep
    their input order; dead letters carry ``source``, ``partition`` and the position.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown wire format {fmt!r}: choose one of {', '.join(FORMATS)}")
    positions = np.arange(len(payloads), dtype=np.int64) if positions is None \
        else np.asarray(positions, dtype=np.int64)
    if len(positions) != len(payloads):
        raise ValueError(f"{len(positions)} positions for {len(payloads)} payloads")
    if not len(payloads):
        return Decoded(empty_events(), empty_dead_letters())
    if fmt == "arrow":
        return _arrow_decode(payloads, positions, line_positions, source, partition)
    return _text_decode(_Lines(payloads, positions, line_positions), fmt, source, partition)


def encode_arrow(events: pa.Table) -> bytes:
    """One Arrow IPC stream payload holding ``events`` (the producer side of the fast path)."""
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, events.schema) as writer:
        writer.write_table(events)
    return sink.getvalue()
