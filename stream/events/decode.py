"""Vectorised decoding of wire payloads (JSON lines, CSV lines, Arrow IPC) into event batches.

DESIGN.md, "Events and their meaning" / "The worker": payloads are joined and
parsed once with ``pyarrow.json`` / ``pyarrow.csv``; there is never one Python
object per event on the common path.  Records then go through
:func:`stream.validate.validate_table`, so every bad-input class ends as a dead
letter with its reason and source position.

Hostile input is normal input, so three rules hold for every format:

- **Every payload has an outcome**: its valid events, and a dead letter for each
  record that is not one.  A null payload (a Kafka tombstone) is one ``tombstone``
  dead letter; a payload over ``max_payload_bytes`` is one ``too_large``; a payload
  that yields nothing at all (blank, a CSV header alone, an Arrow stream without
  rows) is one ``malformed`` dead letter ("empty").
- **The outcome of a record never depends on its neighbours**: joining payloads
  is only an optimisation.  Each record's outcome is defined on the record alone,
  and the joined parse can only give that same outcome (see the JSON and CSV notes).
- **Nothing crashes the process and nothing reads outside a buffer**: pyarrow's
  JSON reader crashes on some inputs (``oops\\nnull``, deep nesting), so it only
  ever sees lines that passed a screen; Arrow IPC is validated fully
  (``validate(full=True)``: offsets, dictionary indices, UTF-8) before any kernel
  touches it; any other failure of a joined decode falls back to decoding each
  payload alone, and a payload that still fails is one dead letter.

JSON, per line: the screen requires valid UTF-8, a line that starts with ``{``
and ends with ``}`` (anything else is ``malformed``: such a line can never run on
into the next one) and nesting at most ``max_nesting`` deep (``too_deep``,
counted outside strings).  Lines that pass are parsed with all five fields read
as text: every bare JSON value of a key (a number, ``true``, ``false``, ``NaN``)
is quoted first, so the explicit all-text schema leaves nothing to type
inference and a chunk parses iff each of its lines does, to the same values.  A
chunk that fails is bisected; lines of a failing chunk of at most ``_LEAF_LINES``
are decoded one by one with Python's ``json`` (numbers kept as their text), the
same values pyarrow gives whenever both accept a line; a line only pyarrow
accepts is parsed by it alone.  Cost: one parse for clean traffic, O(k log n)
parses for k bad lines among n.

JSON and CSV alike: a UTF-8 byte order mark at the start of a payload is dropped.

CSV, per line: ``op,src,dst[,weight[,ts]]`` split on commas (no quoting), fields
trimmed, empty field = null; a wrong field count or invalid UTF-8 is
``malformed``; a first field ``op`` is a header line, skipped.  The fast path (one
``pyarrow.csv`` parse, when all lines have the same field count and the first is no
header) reads ``op``, ``src``, ``dst`` and ``ts`` as int64 (or ``op`` as text) and
``weight`` as float64, with only the empty string as null, which is what the
per-line split gives: a chunk parses only when each line would.  pyarrow's integer
parser also takes hexadecimal (``0x10``), which the validation's decimal rule
rejects, so input holding ``0x`` takes the split path.

Arrow IPC, per payload: one IPC stream ending with the end-of-stream marker and
nothing after it (two streams concatenated are not one), or one IPC file (framed
by ``ARROW1``, read through its footer), distinct column names,
fully valid buffers, at most one row per payload byte; anything else is one
``malformed`` (or ``too_large``) dead letter for the whole payload, whose events
are then not applied.

Positions: record positions are ``positions[payload]`` (a Kafka offset), or with
``line_positions=True`` ``positions[payload] + record index within the payload``
(a file whose rows are the positions).  ``Decoded.positions`` holds the position
of every valid event.
"""
from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.json as pjson

from vinestream.stream.events.schema import (
    DEAD_LETTER_SCHEMA,
    DEFAULT_MAX_NESTING,
    DEFAULT_MAX_PAYLOAD_BYTES,
    empty_dead_letters,
    empty_events,
)
from vinestream.stream.events.validate import cast_or_null, dead_letters, validate_table

__all__ = ["FORMATS", "Decoded", "decode", "encode_arrow"]

log = logging.getLogger(__name__)

FORMATS = ("json", "csv", "arrow")
FIELDS = ("op", "src", "dst", "weight", "ts")

_LEAF_LINES = 256
_TEXT_SCHEMA = pa.schema([(f, pa.string()) for f in FIELDS])
_TEXT_JSON = pjson.ParseOptions(explicit_schema=_TEXT_SCHEMA, unexpected_field_behavior="ignore",
                                newlines_in_values=False)
# Typed schemas for the common shapes (op as a code, or as a name): fully explicit, so a chunk
# parses iff each line does.  Arrow keeps JSON numbers as text and converts them with the same
# routines as a cast from text, so a line gives the same values typed or as text.
_TYPED_SCHEMAS = [pa.schema([("op", op), ("src", pa.int64()), ("dst", pa.int64()), ("weight", pa.float64()),
                             ("ts", pa.int64())]) for op in (pa.int64(), pa.string())]
_TYPED_JSON = [pjson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore",
                                  newlines_in_values=False) for schema in _TYPED_SCHEMAS]
# a bare JSON value after a key, exactly as JSON spells it (so an invalid number is never made valid)
_JSON_BARE = re.compile(
    rb'(":[ \t\r]*)(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|NaN|-?Infinity)'
    rb'(?=[ \t\r]*[,}\]])')
_BLANK = np.zeros(256, dtype=bool)
_BLANK[list(b" \t\r\n\f\v")] = True
_PARSE_ERRORS = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError)
_EOS = b"\xff\xff\xff\xff\x00\x00\x00\x00"
_FILE_MAGIC = b"ARROW1"


@dataclass
class Decoded:
    """Valid events (EVENT_SCHEMA, input order), dead letters, and the source position of each event."""
    events: pa.Table
    dead: pa.Table
    positions: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def __len__(self) -> int:
        return self.events.num_rows


def _dead(source, partition, positions, reason: str, detail: str, payloads) -> pa.Table:
    n = len(positions)
    return dead_letters(source=source, partition=partition, positions=np.asarray(positions, np.int64),
                        reasons=[reason] * n, details=[detail] * n, payloads=payloads)


def _join(events: list, dead: list, positions: list) -> Decoded:
    return Decoded(pa.concat_tables(events) if events else empty_events(),
                   pa.concat_tables(dead) if dead else empty_dead_letters(),
                   np.concatenate(positions).astype(np.int64) if positions else np.zeros(0, np.int64))


# ---------------------------------------------------------------------------------------------
# lines
class _Lines:
    """Joined text and the byte ranges of its non-blank lines (all NumPy), with their positions."""

    def __init__(self, data: bytes, starts: np.ndarray, ends: np.ndarray, positions: np.ndarray):
        self.data = data
        self.starts, self.ends = starts.astype(np.int64), ends.astype(np.int64)
        self.positions = positions.astype(np.int64)
        self.buffer = pa.py_buffer(data)

    @classmethod
    def of_payloads(cls, payloads: Sequence[bytes], positions: np.ndarray, line_positions: bool) -> _Lines:
        data = b"\n".join(payloads) + b"\n"        # join takes any bytes-like payload
        buf = np.frombuffer(data, dtype=np.uint8)
        plen = np.fromiter(map(len, payloads), dtype=np.int64, count=len(payloads))
        pstart = np.concatenate([[0], np.cumsum(plen + 1)[:-1]]).astype(np.int64)
        # A UTF-8 byte order mark opening a payload (a file or message saved by an editor) is no part of its first
        # record, in either text format: it was malformed JSON while pyarrow.csv skipped it (only at a buffer's
        # start, so a CSV line's outcome depended on its neighbours too).  Dropped here, vectorised.
        bom = (plen >= 3) & (buf[pstart] == 0xEF) & (buf[np.minimum(pstart + 1, len(buf) - 1)] == 0xBB) \
            & (buf[np.minimum(pstart + 2, len(buf) - 1)] == 0xBF)
        if bom.any():
            drop = np.zeros(len(buf), dtype=bool)
            for k in range(3):
                drop[pstart[bom] + k] = True
            data = buf[~drop].tobytes()
            buf = np.frombuffer(data, dtype=np.uint8)
            plen = plen - 3 * bom
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
            keep[suspect] = [bool(data[s:e].strip()) for s, e in zip(starts[suspect], ends[suspect])]
        starts, ends = starts[keep], ends[keep]
        cr = (ends > starts) & (buf[np.maximum(ends - 1, 0)] == 13)      # strip a trailing '\r' (CRLF)
        ends = ends - cr
        payload = np.searchsorted(pstart, starts, side="right") - 1
        pos = positions[payload]
        if line_positions:
            first_line = np.searchsorted(starts, pstart)
            pos = pos + (np.arange(len(starts)) - first_line[payload])
        return cls(data, starts, ends, pos)

    def __len__(self) -> int:
        return len(self.starts)

    def chunk(self, lo: int, hi: int) -> pa.Buffer:
        """Bytes of lines [lo, hi) (with whatever blank lines lie between them)."""
        s, e = int(self.starts[lo]), int(self.ends[hi - 1])
        return self.buffer.slice(s, e - s)

    def line(self, i: int) -> bytes:
        return self.data[int(self.starts[i]):int(self.ends[i])]

    def text(self, idx) -> list[str]:
        """The given lines as text (used only for dead letters)."""
        return [self.data[s:e].decode("utf-8", "replace") for s, e in zip(self.starts[idx], self.ends[idx])]

    def binary(self) -> pa.Array:
        """Every line as one binary array: a view of [start, end) ranges interleaved with the gaps, then a take."""
        n = len(self)
        if not n:
            return pa.array([], pa.large_binary())
        offsets = np.empty(2 * n + 1, dtype=np.int64)
        offsets[0:-1:2], offsets[1::2], offsets[-1] = self.starts, self.ends, self.ends[-1]
        every = pa.Array.from_buffers(pa.large_binary(), 2 * n, [None, pa.py_buffer(offsets), self.buffer])
        return every.take(pa.array(np.arange(0, 2 * n, 2)))

    def subset(self, idx: np.ndarray) -> _Lines:
        """Only the given lines, joined into a new buffer (so no other line lies between them)."""
        if len(idx) == len(self):
            return self
        if not len(idx):
            return _Lines(b"\n", np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
        taken = self.binary().take(pa.array(idx, pa.int64()))
        one_list = pa.LargeListArray.from_arrays(pa.array([0, len(taken)], pa.int64()), taken)
        data = pc.binary_join(one_list, pa.scalar(b"\n", pa.large_binary()))[0].as_py() + b"\n"
        lengths = self.ends[idx] - self.starts[idx]
        starts = np.zeros(len(idx), dtype=np.int64)
        np.cumsum(lengths[:-1] + 1, out=starts[1:])
        return _Lines(data, starts, starts + lengths, self.positions[idx])


# ---------------------------------------------------------------------------------------------
# JSON
def _json_depth(line: bytes) -> int:
    """Deepest nesting of objects and arrays in ``line``, brackets inside strings not counted."""
    a = np.frombuffer(line, dtype=np.uint8)
    quote = a == 34
    backslash = a == 92
    if backslash.any():
        idx = np.arange(len(a))
        last_plain = np.maximum.accumulate(np.where(~backslash, idx, -1))
        run_before = (idx - 1) - np.concatenate([[-1], last_plain[:-1]])     # backslashes right before i
        quote &= run_before % 2 == 0
    in_string = np.cumsum(quote) % 2 == 1
    step = np.zeros(len(a), dtype=np.int64)
    step[(a == 123) | (a == 91)] = 1
    step[(a == 125) | (a == 93)] = -1
    step[in_string] = 0
    return int(np.cumsum(step).max(initial=0))


def _json_screen(lines: _Lines, max_nesting: int) -> tuple[np.ndarray, np.ndarray]:
    """(malformed, too_deep) masks: the lines pyarrow's JSON reader must never see."""
    n = len(lines)
    buf = np.frombuffer(lines.data, dtype=np.uint8)
    first, last = buf[lines.starts], buf[np.maximum(lines.ends - 1, 0)]
    shaped = (lines.ends > lines.starts) & (first == 123) & (last == 125)
    loose = np.flatnonzero(~shaped & (_BLANK[first] | _BLANK[last]))     # blanks around the object
    for i in loose:
        t = lines.line(i).strip()
        shaped[i] = t[:1] == b"{" and t[-1:] == b"}"
    malformed = ~shaped
    try:
        lines.data.decode("utf-8")          # one fast pass; the common case is all valid
    except UnicodeDecodeError:
        _, not_utf8 = cast_or_null(lines.binary(), pa.large_string())
        malformed |= not_utf8
    too_deep = np.zeros(n, dtype=bool)
    opens = np.flatnonzero((buf == 123) | (buf == 91))
    if len(opens) > n * max_nesting or len(opens):
        owner = np.searchsorted(lines.starts, opens, side="right") - 1
        inside = (owner >= 0) & (opens < lines.ends[np.maximum(owner, 0)])
        count = np.bincount(owner[inside], minlength=n)
        for i in np.flatnonzero((count > max_nesting) & ~malformed):
            too_deep[i] = _json_depth(lines.line(i)) > max_nesting
    return malformed, too_deep


_SERIAL = pjson.ReadOptions(use_threads=False)      # a thread pool costs ~1 ms per call: only for big input
_THREADED_BYTES = 8 << 20


def _json_read(buf, options, rows: int) -> pa.Table | None:
    try:
        table = pjson.read_json(pa.BufferReader(buf), parse_options=options,
                                read_options=None if len(buf) > _THREADED_BYTES else _SERIAL)
    except _PARSE_ERRORS:
        return None
    if table.num_rows != rows:     # one row per line, or the positions would slip
        return None
    return table.select(list(FIELDS))


def _json_special(lines: _Lines) -> np.ndarray:
    """Lines holding ``NaN`` or ``Inf``: pyarrow's reader takes spellings Python's json refuses
    (``Inf``, ``-NaN``), so these few lines are decoded by Python alone, never by pyarrow."""
    special = np.zeros(len(lines), dtype=bool)
    data = lines.data
    if b"NaN" not in data and b"Inf" not in data:
        return special
    hits = [m.start() for m in re.finditer(rb"NaN|Inf", data)]
    owner = np.searchsorted(lines.starts, np.asarray(hits, np.int64), side="right") - 1
    special[owner[owner >= 0]] = True
    return special


def _json_parse(buf, rows: int, typed: bool = True) -> pa.Table | None:
    """The lines of ``buf`` as a table: typed (op a code, or op a name), else every field as text
    (bare values quoted first).  None unless it is exactly ``rows`` objects."""
    if typed:
        for options in _TYPED_JSON:
            table = _json_read(buf, options, rows)
            if table is not None:
                return table
    raw = buf.to_pybytes() if isinstance(buf, pa.Buffer) else buf
    return _json_read(_JSON_BARE.sub(rb'\1"\2"', raw), _TEXT_JSON, rows)


def _as_text(value):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, separators=(",", ":"))


_PY_JSON = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=str, strict=False)


def _python_line(line: bytes) -> dict | None:
    """One line with Python's json (numbers kept as their text); None if it is not one JSON object."""
    try:
        obj = _PY_JSON.decode(line.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    row = {f: _as_text(obj.get(f)) for f in FIELDS}
    try:
        for v in row.values():
            if v is not None:
                v.encode("utf-8")               # lone surrogates ("\ud800") are not text
    except UnicodeEncodeError:
        return None
    return row


def _json_leaf(lines: _Lines, idx, out: list) -> None:
    """The given lines one by one with Python's json; a line it rejects is malformed (None)."""
    rows, good = [], []
    for i in idx:
        row = _python_line(lines.line(i))
        if row is None:
            out.append((i, i + 1, None))
        else:
            rows.append(row)
            good.append(i)
    if rows:
        out.append((good, None, pa.Table.from_pylist(rows, schema=_TEXT_SCHEMA)))


def _json_chunks(lines: _Lines, lo: int, hi: int, out: list) -> None:
    table = _json_parse(lines.chunk(lo, hi), hi - lo)
    if table is not None:
        out.append((lo, hi, table))
    elif hi - lo <= _LEAF_LINES:
        _json_leaf(lines, range(lo, hi), out)
    else:
        mid = (lo + hi) // 2
        _json_chunks(lines, lo, mid, out)
        _json_chunks(lines, mid, hi, out)


def _json_decode(lines: _Lines, source, partition, max_nesting: int) -> Decoded:
    malformed, too_deep = _json_screen(lines, max_nesting)
    dead, events, positions = [], [], []
    bad = np.flatnonzero(malformed | too_deep)
    if len(bad):
        for mask, reason, detail in ((malformed, "malformed", "not a valid JSON object"),
                                     (too_deep, "too_deep", f"nested deeper than {max_nesting} levels")):
            idx = np.flatnonzero(mask & (reason == "malformed" or ~malformed))
            if len(idx):
                dead.append(_dead(source, partition, lines.positions[idx], reason, detail, lines.text(idx)))
        lines = lines.subset(np.flatnonzero(~(malformed | too_deep)))
    if len(lines):
        pieces: list = []
        python_only = _json_special(lines)
        if python_only.any():           # NaN / Inf spellings: Python's json decides (see _json_special)
            _json_leaf(lines, np.flatnonzero(python_only), pieces)
        runs = np.flatnonzero(np.diff(np.concatenate([[1], python_only.astype(np.int8), [1]])))
        for lo, hi in zip(runs[::2], runs[1::2]):
            _json_chunks(lines, int(lo), int(hi), pieces)
        by_schema: dict = {}            # validated once per schema (validation is row by row)
        failed = []
        for lo, hi, table in pieces:
            if table is None:
                failed.append(lo)
            else:
                tables, rows = by_schema.setdefault(table.schema, ([], []))
                tables.append(table)
                rows.append(np.arange(lo, hi) if hi is not None else np.asarray(lo, np.int64))
        if failed:
            idx = np.asarray(failed)
            dead.append(_dead(source, partition, lines.positions[idx], "malformed", "not a valid JSON object",
                              lines.text(idx)))
        ev_parts, line_parts = [], []
        for tables, rows in by_schema.values():
            row_lines = np.concatenate(rows).astype(np.int64)
            ev, dl, valid = validate_table(pa.concat_tables(tables), source=source, partition=partition,
                                           positions=lines.positions[row_lines],
                                           raw=lambda i, r=row_lines: lines.text(r[i]), return_rows=True)
            ev_parts.append(ev)
            dead.append(dl)
            line_parts.append(row_lines[valid])
        if ev_parts:
            event_lines = np.concatenate(line_parts)
            order = np.argsort(event_lines, kind="stable")          # events back in input order
            table = pa.concat_tables(ev_parts)
            events.append(table if np.all(order == np.arange(len(order))) else table.take(pa.array(order)))
            positions.append(lines.positions[event_lines[order]])
    return _join(events, dead, positions)


# ---------------------------------------------------------------------------------------------
# CSV
def _has_hex_prefix(data: bytes) -> bool:
    """Whether ``0x`` / ``0X`` occurs in ``data``: memchr for an ``x`` first (fast; most traffic has none),
    then one vectorised pass (op names such as ``add_vertex`` hold an ``x``)."""
    if data.find(b"x") < 0 and data.find(b"X") < 0:
        return False
    buf = np.frombuffer(data, dtype=np.uint8)
    return bool((((buf[1:] | 0x20) == ord("x")) & (buf[:-1] == ord("0"))).any())


def _csv_fast(lines: _Lines) -> pa.Table | None:
    """One pyarrow.csv parse of everything, when all lines have the same field count.

    Only for input on which pyarrow's typed parsers accept exactly what the validation's text rules
    accept: pyarrow's integer parser also reads hexadecimal (``0x10`` is 16, ``0x1`` op 1), which the
    decimal rule rejects, so a record's outcome depended on whether its neighbours had its field count.
    Input holding ``0x`` goes the split way (the reference: every field validated as text).
    """
    if _has_hex_prefix(lines.data):
        return None
    first = lines.line(0)
    nfields = first.count(b",") + 1
    if not 2 <= nfields <= len(FIELDS) or first.split(b",")[0].strip().lower() == b"op":
        return None
    names = list(FIELDS[:nfields])
    for schema in _TYPED_SCHEMAS:       # op a code, or op a name; every type explicit
        try:
            table = pcsv.read_csv(
                pa.BufferReader(lines.chunk(0, len(lines))),
                read_options=pcsv.ReadOptions(column_names=names),
                parse_options=pcsv.ParseOptions(newlines_in_values=False, quote_char=False,
                                                ignore_empty_lines=True),
                convert_options=pcsv.ConvertOptions(
                    column_types={n: schema.field(n).type for n in names},
                    null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=False))
        except _PARSE_ERRORS:
            continue
        if table.num_rows == len(lines):
            return table
    return None


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


def _csv_decode(lines: _Lines, source, partition) -> Decoded:
    if not len(lines):
        return _join([], [], [])
    table = _csv_fast(lines)
    if table is not None:
        ev, dl, valid = validate_table(table, source=source, partition=partition, positions=lines.positions,
                                       raw=lambda i: lines.text(i), return_rows=True)
        return Decoded(ev, dl, lines.positions[valid])
    table, malformed, header = _csv_split(lines)
    good = np.flatnonzero(~malformed & ~header)
    dead, events, positions = [], [], []
    bad = np.flatnonzero(malformed)
    if len(bad):
        dead.append(_dead(source, partition, lines.positions[bad], "malformed", "not a valid CSV record",
                          lines.text(bad)))
    if len(good):
        # empty fields are nulls, as in the fast path
        sub = table.take(pa.array(good))
        sub = pa.table({n: pc.if_else(pc.equal(sub.column(n), ""), pa.scalar(None, pa.large_string()),
                                      sub.column(n)) for n in FIELDS})
        ev, dl, valid = validate_table(sub, source=source, partition=partition,
                                       positions=lines.positions[good], raw=lambda i: lines.text(good[i]),
                                       return_rows=True)
        events.append(ev)
        dead.append(dl)
        positions.append(lines.positions[good][valid])
    return _join(events, dead, positions)


# ---------------------------------------------------------------------------------------------
# Arrow IPC
def _read_ipc(payload) -> tuple[pa.Table | None, str, str]:
    """(table, reason, detail): a fully validated table, or None and why the payload is rejected."""
    view = memoryview(payload)
    # the IPC file format (a stream framed by "ARROW1" and ended by a footer) is read by its own reader: it was
    # reported as a "truncated stream", though it holds the same batches
    is_file = len(view) >= 12 and bytes(view[:6]) == _FILE_MAGIC and bytes(view[-6:]) == _FILE_MAGIC
    if not is_file and (len(view) < 8 or bytes(view[-8:]) != _EOS):
        return None, "malformed", "truncated Arrow IPC stream (no end-of-stream marker)"
    kind = "file" if is_file else "stream"
    try:
        source = pa.BufferReader(pa.py_buffer(payload))
        if is_file:
            file_reader = pa.ipc.open_file(source)
            reader = (file_reader.get_batch(i) for i in range(file_reader.num_record_batches))
            schema = file_reader.schema
        else:
            reader = pa.ipc.open_stream(source)
            schema = reader.schema
        names = schema.names
        if len(set(names)) != len(names):
            return None, "malformed", f"Arrow IPC {kind} with repeated column names {names}"
        batches, rows = [], 0
        for batch in reader:
            rows += batch.num_rows
            if rows > len(view):          # no real event costs less than a byte: a bomb of null columns
                return None, "too_large", f"Arrow IPC {kind} claims more rows than its {len(view)} bytes"
            batch.validate(full=True)      # offsets, dictionary indices, UTF-8: before any kernel reads it
            batches.append(batch)
        table = pa.Table.from_batches(batches, schema=schema)
        # The reader stops at the first end-of-stream marker: bytes after it (a second stream concatenated to
        # the first, which ends with a marker too) would be lost without a word.  (A file is read from its footer.)
        if not is_file and source.tell() != len(view):
            return None, "malformed", (f"Arrow IPC stream ends at byte {source.tell()} of {len(view)} (more "
                                       "than one stream in the message?)")
    except MemoryError:
        return None, "too_large", f"out of memory reading the Arrow IPC {kind}"
    except Exception as exc:               # a hostile stream may fail in any way; it is one dead letter
        return None, "malformed", f"bad Arrow IPC {kind}: {type(exc).__name__}: {exc}"[:500]
    if table.num_rows == 0:
        return None, "malformed", f"empty Arrow IPC {kind} (no rows)"
    return table, "", ""


def _arrow_decode(payloads: Sequence[bytes], positions: np.ndarray, line_positions: bool,
                  source: str, partition) -> Decoded:
    events, dead, event_positions = [], [], []
    run: list[pa.Table] = []
    run_pos: list[np.ndarray] = []

    def validate_run(tables, pos):
        pos = np.concatenate(pos)
        ev, dl, valid = validate_table(pa.concat_tables(tables) if len(tables) > 1 else tables[0], source=source,
                                       partition=partition, positions=pos, return_rows=True)
        events.append(ev)
        dead.append(dl)
        event_positions.append(pos[valid])

    def flush():
        if not run:
            return
        try:
            validate_run(run, run_pos)
        except Exception:                 # a type the validator cannot take: each payload alone
            for table, pos in zip(run, run_pos):
                try:
                    validate_run([table], [pos])
                except Exception as exc:
                    dead.append(_dead(source, partition, pos[:1], "malformed",
                                      f"Arrow IPC columns of unusable types: {type(exc).__name__}",
                                      [f"<Arrow IPC, schema {table.schema.names}>"]))
        run.clear()
        run_pos.clear()

    for i, payload in enumerate(payloads):
        table, reason, detail = _read_ipc(payload)
        if table is None:
            dead.append(_dead(source, partition, positions[i:i + 1], reason, detail,
                              [f"<{len(payload)} bytes of Arrow IPC>"]))
            continue
        if run and table.schema != run[0].schema:
            flush()
        pos = np.full(table.num_rows, positions[i], dtype=np.int64)
        if line_positions:
            pos += np.arange(table.num_rows)
        run.append(table)
        run_pos.append(pos)
    flush()
    return _join(events, dead, event_positions)


# ---------------------------------------------------------------------------------------------
def _decode_kept(payloads, fmt, positions, line_positions, source, partition, max_nesting) -> Decoded:
    if fmt == "arrow":
        return _arrow_decode(payloads, positions, line_positions, source, partition)
    lines = _Lines.of_payloads(payloads, positions, line_positions)
    if fmt == "json":
        return _json_decode(lines, source, partition, max_nesting)
    return _csv_decode(lines, source, partition)


def _decode_isolated(payloads, fmt, positions, line_positions, source, partition, max_nesting) -> Decoded:
    """The joined decode, or (should it fail in any way) each payload on its own."""
    try:
        return _decode_kept(payloads, fmt, positions, line_positions, source, partition, max_nesting)
    except Exception as exc:
        if len(payloads) == 1:
            reason = "too_large" if isinstance(exc, MemoryError) else "malformed"
            log.warning("decoding one %s payload at %s[%s]@%d failed (%s: %s): dead letter", fmt, source,
                        partition, positions[0], type(exc).__name__, exc)
            return Decoded(empty_events(), _dead(source, partition, positions[:1], reason,
                                                 f"could not decode: {type(exc).__name__}: {exc}"[:500],
                                                 [_preview(payloads[0])]))
        log.warning("decoding %d %s payloads together failed (%s: %s); decoding each alone", len(payloads),
                    fmt, type(exc).__name__, exc)
    parts = [_decode_isolated(payloads[i:i + 1], fmt, positions[i:i + 1], line_positions, source, partition,
                              max_nesting) for i in range(len(payloads))]
    return _join([p.events for p in parts], [p.dead for p in parts], [p.positions for p in parts])


def _preview(payload) -> str:
    return bytes(payload[:PREVIEW_BYTES]).decode("utf-8", "replace")


PREVIEW_BYTES = 200


def decode(payloads: Sequence[bytes | None], fmt: Literal["json", "csv", "arrow"], *, source: str,
           partition: int | None = None, positions: Sequence[int] | None = None,
           line_positions: bool = False, max_payload_bytes: int | None = DEFAULT_MAX_PAYLOAD_BYTES,
           max_nesting: int = DEFAULT_MAX_NESTING) -> Decoded:
    """Decode wire payloads into (valid events, dead letters); see the module docstring.

    ``positions[i]`` is the source position of payload i (default: i).  Valid events keep
    their input order; dead letters carry ``source``, ``partition`` and the position.
    A payload of None (a Kafka tombstone) or over ``max_payload_bytes`` is one dead
    letter; JSON nested deeper than ``max_nesting`` is a ``too_deep`` dead letter.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown wire format {fmt!r}: choose one of {', '.join(FORMATS)}")
    positions = np.arange(len(payloads), dtype=np.int64) if positions is None \
        else np.asarray(positions, dtype=np.int64)
    if len(positions) != len(payloads):
        raise ValueError(f"{len(positions)} positions for {len(payloads)} payloads")
    if not len(payloads):
        return _join([], [], [])
    sizes = np.fromiter((-1 if p is None else len(p) for p in payloads), dtype=np.int64, count=len(payloads))
    dead = []
    tomb = np.flatnonzero(sizes < 0)
    if len(tomb):
        dead.append(_dead(source, partition, positions[tomb], "tombstone", "null message value (tombstone)",
                          ["<null>"] * len(tomb)))
    big = np.flatnonzero(sizes > max_payload_bytes) if max_payload_bytes else np.zeros(0, np.int64)
    if len(big):
        dead.append(_dead(source, partition, positions[big], "too_large",
                          f"payload over the limit of {max_payload_bytes} bytes",
                          [f"<{int(sizes[i])} bytes> " + _preview(payloads[i]) for i in big]))
    keep = np.flatnonzero((sizes >= 0) & ((sizes <= max_payload_bytes) if max_payload_bytes else True))
    kept_payloads = payloads if len(keep) == len(payloads) else [payloads[i] for i in keep]
    decoded = (_decode_isolated(kept_payloads, fmt, positions[keep], line_positions, source, partition,
                                max_nesting) if len(keep) else _join([], [], []))
    dead.append(decoded.dead)
    if not line_positions and len(keep):
        # every payload has an outcome: one that gave neither events nor dead letters is "empty"
        seen = np.concatenate([decoded.positions, np.asarray(decoded.dead.column("position"), np.int64)])
        empty = keep[~np.isin(positions[keep], seen)]
        if len(empty):
            dead.append(_dead(source, partition, positions[empty], "malformed", "empty payload (no record)",
                              [_preview(payloads[i]) for i in empty]))
    dead = [d for d in dead if d.num_rows]
    all_dead = pa.concat_tables(dead) if dead else empty_dead_letters()
    if all_dead.num_rows > 1:         # in source order (a stable sort: lines of one payload stay in order)
        order = np.argsort(np.asarray(all_dead.column("position"), np.int64), kind="stable")
        all_dead = all_dead.take(pa.array(order))
    return Decoded(decoded.events, all_dead.cast(DEAD_LETTER_SCHEMA), decoded.positions)


def encode_arrow(events: pa.Table) -> bytes:
    """One Arrow IPC stream payload holding ``events`` (the producer side of the fast path)."""
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, events.schema) as writer:
        writer.write_table(events)
    return sink.getvalue()
