"""Validation of loosely typed event tables into ``EVENT_SCHEMA`` plus dead letters.

DESIGN.md, "Events and their meaning": bad input never stops the worker; each
bad record becomes a dead letter with its reason (``REASONS``) and source
position, and nothing valid beside it is lost.  This module is used by
:mod:`stream.decode` (JSON / CSV / Arrow IPC from Kafka) and by Parquet replay
(user-made files can hold anything), so it accepts columns of any Arrow type:

- ``op``: an integer code, an integral float, or a name from ``OP_NAMES`` / a
  code as text (case-insensitive, surrounding blanks ignored);
- ``src`` / ``dst``: any integer type, an integral float, or decimal text
  (``"12"``, ``"12.0"``, ``"1e3"``): an integral float is an id in every
  spelling (a float column, ``1.0``, ``1e3``) and a fractional one is
  ``bad_id``; text is read exactly, never through float64: its decimal value is
  integral or not, and is range-checked digit by digit, so ids beyond int64
  (``2**63``, ``9.3e18`` or a 40-digit string) are caught exactly rather than
  wrapped or rounded;
- ``weight``: any number or numeric text; null means 1.0; NaN / inf / beyond
  float32 is ``bad_weight``;
- ``ts``: a timestamp of any unit (tz-aware ones as their UTC instant), a date,
  integer milliseconds (a number, or numeric text, by the same rule as an id: an
  integral float such as ``5.0`` or ``5e3`` is milliseconds, a fractional one such
  as ``5.5`` is ``bad_timestamp`` whatever the format), or text holding an ISO 8601
  time (``2024-01-01T00:00:00.5Z``; a fraction finer than ms is floored, as for a
  timestamp column), between the years 1740 and 2200 (``MAX_TS_MS``).

The first failing check decides the reason, in this order: unknown_op,
null_id (src missing), bad_id / id_out_of_range (src), missing_dst (edge op
with a null or absent dst), bad_id / id_out_of_range (dst), bad_weight,
bad_timestamp.  Vertex ops ignore dst and weight (they come out null).
Self-loops are not rejected here: the pipeline counts them.

Everything is column-at-a-time (pyarrow.compute and NumPy); the only loop is
the bisection in :func:`cast_or_null`, which runs only when a cast meets values
that pass the cheap syntax checks but still fail (e.g. month 13).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vinestream.stream.events.schema import (
    DEAD_LETTER_SCHEMA,
    EVENT_SCHEMA,
    MAX_TS_MS,
    OP_NAMES,
    PAYLOAD_MAX_CHARS,
    REASONS,
    VALUE_EXCERPT_CHARS,
    Op,
    excerpt,
)

__all__ = ["cast_or_null", "dead_letters", "validate", "validate_table"]

# Status codes of the column parsers below.
OK, NULL, BAD, OUT_OF_RANGE = 0, 1, 2, 3

_REASON_CODE = {name: i + 1 for i, name in enumerate(REASONS)}   # 0 = valid
_REASON_NAMES = np.array(["", *list(REASONS)], dtype=object)

_INT_RE = r"^[+-]?[0-9]+(\.0*)?$"        # integral text, "12" or "12.0"
_FLOAT_RE = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_ZONE_RE = r"(Z|z|[+-][0-9]{2}:?[0-9]{2})$"
_INT64_MAX = "9223372036854775807"
_INT64_MIN_ABS = "9223372036854775808"

# Op names and numeric codes as text -> code.
_OP_TEXT = {**{k.lower(): int(v) for k, v in OP_NAMES.items()}, **{str(int(o)): int(o) for o in Op}}
_OP_VALS = np.array(list(_OP_TEXT.values()), dtype=np.int8)


# Arrow objects made at first use, not at import: building one loads pandas where it is installed (pyarrow's
# check for pandas objects), 0.2 s of every command line's start (the parser imports this module)
@functools.cache
def _op_keys() -> pa.Array:
    return pa.array(list(_OP_TEXT))


@functools.cache
def _no_dead_letters() -> pa.Table:
    return DEAD_LETTER_SCHEMA.empty_table()


# ---------------------------------------------------------------------------------------------
# helpers
def _array(col) -> pa.Array:
    """One contiguous array; run-end and dictionary encodings decoded (a Parquet string column often is a dictionary),
    and Arrow's view layouts (``string_view``, ``binary_view``) cast to their plain layouts, which every kernel here
    takes: a layout is not a value, so an IPC producer's choice of one must not change an event's outcome."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if pa.types.is_run_end_encoded(col.type):      # an op or ts repeated down a batch is often sent so
        col = pc.run_end_decode(col)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if pa.types.is_string_view(col.type):
        # the bytes as they are: _text checks UTF-8 before any string kernel reads them
        col = pc.cast(col.view(pa.binary_view()), pa.large_binary()).view(pa.large_string())
    elif pa.types.is_binary_view(col.type):
        col = pc.cast(col, pa.large_binary())
    return col


def _nulls(arr: pa.Array) -> np.ndarray:
    return np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def _np(arr: pa.Array, fill) -> np.ndarray:
    return np.asarray(pc.fill_null(arr, fill).to_numpy(zero_copy_only=False))


def _bool(arr) -> np.ndarray:
    return np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=bool)


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
        or pa.types.is_large_binary(t)


def _text(arr: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """Text column as trimmed utf8, with a mask of rows that are not valid UTF-8 (bad).

    String columns are checked too (their bytes are viewed as binary and cast back): a
    string column from a file or an IPC message may hold invalid UTF-8, and the string
    kernels must never see it.
    """
    if pa.types.is_string(arr.type):
        arr = arr.view(pa.binary())
    elif pa.types.is_large_string(arr.type):
        arr = arr.view(pa.large_binary())
    arr, bad = cast_or_null(arr, pa.string())
    return pc.utf8_trim_whitespace(arr), bad


def cast_or_null(arr: pa.Array, to: pa.DataType) -> tuple[pa.Array, np.ndarray]:
    """Cast ``arr`` to ``to``; rows whose cast fails come out null and are flagged in the mask.

    Tries the whole array first (the normal case: one vectorised cast); only on failure
    bisects, so k bad rows among n cost O(k log n) casts of shrinking slices.
    """
    n = len(arr)
    try:
        return pc.cast(arr, to), np.zeros(n, dtype=bool)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        if n <= 1:
            return pa.nulls(n, to), ~_nulls(arr)
    mid = n // 2
    a, fa = cast_or_null(arr.slice(0, mid), to)
    b, fb = cast_or_null(arr.slice(mid), to)
    return pa.concat_arrays([a, b]), np.concatenate([fa, fb])


# ---------------------------------------------------------------------------------------------
# column parsers: each returns NumPy values and a status per row
def parse_op(col) -> np.ndarray:
    """Op codes as int8; 0 where unknown or missing."""
    if col is None:
        return np.zeros(0, dtype=np.int8)
    arr = _array(col)
    t = arr.type
    n = len(arr)
    if pa.types.is_integer(t):
        if pa.types.is_unsigned_integer(t):
            arr = pc.cast(pc.if_else(pc.greater(arr, 127), 0, arr), pa.int64())
        v = _np(pc.cast(arr, pa.int64()), 0)
    elif pa.types.is_floating(t):
        f = _np(pc.cast(arr, pa.float64()), 0.0)
        with np.errstate(invalid="ignore"):
            integral = np.isfinite(f) & (f == np.floor(f)) & (np.abs(f) < 128)
        v = np.where(integral, f, 0).astype(np.int64)
    elif _is_text(t):
        s, _ = _text(arr)
        idx = _np(pc.index_in(pc.utf8_lower(s), value_set=_op_keys()), -1).astype(np.int64)
        v = np.where(idx >= 0, _OP_VALS[np.maximum(idx, 0)], 0)
        # a code written as a number in text ("1.0", "1e0"): the same rule as a float column
        numeric = (idx < 0) & _bool(pc.match_substring_regex(s, _FLOAT_RE))
        if numeric.any():
            vals, _ = cast_or_null(pc.if_else(pa.array(numeric), s, "0"), pa.float64())
            f = _np(vals, 0.0)
            with np.errstate(invalid="ignore"):
                integral = numeric & np.isfinite(f) & (f == np.floor(f)) & (np.abs(f) < 128)
            v = np.where(integral, f, v).astype(np.int64)
    else:
        return np.zeros(n, dtype=np.int8)
    v = np.where((v >= int(Op.ADD_EDGE)) & (v <= int(Op.DELETE_VERTEX)), v, 0)
    return v.astype(np.int8)


def _parse_int_text(s: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Decimal text -> (int64, status).  The range check compares digit strings, never floats."""
    n = len(s)
    status = np.full(n, OK, dtype=np.int8)
    empty = _bool(pc.equal(pc.utf8_length(s), 0)) | _nulls(s)
    syntax = _bool(pc.match_substring_regex(s, _INT_RE))
    status[~syntax] = BAD
    status[empty] = NULL
    neg = _bool(pc.starts_with(s, "-"))
    digits = pc.replace_substring_regex(s, r"^[+-]|\.0*$", "")     # sign and ".0" off
    digits = pc.utf8_ltrim(digits, characters="0")                 # "0007" -> "7", "0" -> ""
    length = _np(pc.utf8_length(digits), 0)
    limit = np.where(neg, _INT64_MIN_ABS, _INT64_MAX)
    over = (length > 19) | ((length == 19) & _bool(pc.greater(digits, pa.array(limit, pa.string()))))
    status[(status == OK) & over] = OUT_OF_RANGE
    ok = status == OK
    clean = pc.if_else(pa.array(ok), pc.binary_join_element_wise(
        pc.if_else(pa.array(neg), "-", ""), pc.if_else(pc.equal(digits, ""), "0", digits), ""), "0")
    vals, failed = cast_or_null(clean, pa.int64())
    status[ok & failed] = BAD
    return _np(vals, 0).astype(np.int64), status


_NUMBER_PARTS = r"^(?P<sign>[+-]?)(?P<whole>[0-9]*)\.?(?P<frac>[0-9]*)(?:[eE](?P<exp>[+-]?[0-9]+))?$"


def _parse_number_text(s: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Numeric text -> (int64, status) by the rule of a float column, decided on the exact decimal value:
    integral (``1e3``, ``2.5e1``, ``12.0``) is an id, with the range checked on its digits; a fraction (``1.5``,
    ``1.5e0``) is ``BAD``.  The digits ``D`` (whole and fraction, trailing zeros off) and the exponent ``E`` of the
    last one give ``D * 10**E``, integral iff ``E >= 0``; then ``D`` and ``E`` zeros is its digit text."""
    vals, status = _parse_int_text(s)
    cand = (status == BAD) & _bool(pc.match_substring_regex(s, _FLOAT_RE))
    if not cand.any():
        return vals, status
    idx = np.flatnonzero(cand)
    parts = pc.extract_regex(s.take(pa.array(idx)), _NUMBER_PARTS)
    sign, whole, frac, exp = (pc.fill_null(pc.struct_field(parts, k), "") for k in ("sign", "whole", "frac", "exp"))
    digits = pc.utf8_ltrim(pc.binary_join_element_wise(whole, frac, ""), characters="0")
    significant = pc.utf8_rtrim(digits, characters="0")
    exp_val, exp_st = _parse_int_text(pc.if_else(pc.equal(exp, ""), "0", exp))
    # an exponent past int64 is far past any id: clamp it, keeping its sign
    exp_val = np.where(exp_st == OUT_OF_RANGE, np.where(_bool(pc.starts_with(exp, "-")), -10 ** 9, 10 ** 9),
                       exp_val)
    shift = exp_val - _np(pc.utf8_length(frac), 0) + (_np(pc.utf8_length(digits), 0)
                                                      - _np(pc.utf8_length(significant), 0))
    zero = _np(pc.utf8_length(significant), 0) == 0
    st = np.where(zero, OK, np.where(shift < 0, BAD, np.where(shift > 19, OUT_OF_RANGE, OK))).astype(np.int8)
    zeros = pc.binary_repeat("0", pa.array(np.clip(np.where(st == OK, shift, 0), 0, 19)))
    text = pc.binary_join_element_wise(sign, pc.if_else(pa.array(zero), "0", significant), zeros, "")
    exact, exact_st = _parse_int_text(pc.if_else(pa.array(st == OK), text, "0"))
    st = np.where(st == OK, exact_st, st)
    status[idx] = st
    vals[idx] = np.where(st == OK, exact, 0)
    return vals, status


def parse_id(col, n: int) -> tuple[np.ndarray, np.ndarray]:
    """External ids as int64 with a status per row (OK, NULL, BAD, OUT_OF_RANGE)."""
    if col is None:
        return np.zeros(n, dtype=np.int64), np.full(n, NULL, dtype=np.int8)
    arr = _array(col)
    t = arr.type
    null = _nulls(arr)
    status = np.where(null, NULL, OK).astype(np.int8)
    if pa.types.is_null(t):
        return np.zeros(n, dtype=np.int64), status
    if pa.types.is_integer(t):
        if t == pa.uint64():
            big = _bool(pc.greater(arr, pa.scalar(np.iinfo(np.int64).max, pa.uint64())))
            status[big] = OUT_OF_RANGE
            arr = pc.if_else(pa.array(big), pa.scalar(0, pa.uint64()), arr)
        return _np(pc.cast(arr, pa.int64()), 0).astype(np.int64), status
    if pa.types.is_floating(t):
        f = _np(pc.cast(arr, pa.float64()), 0.0)
        with np.errstate(invalid="ignore"):
            integral = np.isfinite(f) & (f == np.floor(f))
            inside = (f >= -2.0 ** 63) & (f < 2.0 ** 63)
        status[~null & ~integral] = BAD
        status[~null & integral & ~inside] = OUT_OF_RANGE
        return np.where(status == OK, f, 0).astype(np.int64), status
    if pa.types.is_decimal(t):
        arr, t = pc.cast(arr, pa.string()), pa.string()
    if _is_text(t):
        s, not_utf8 = _text(arr)
        vals, st = _parse_number_text(s)
        st[not_utf8] = BAD
        return vals, st
    status[~null] = BAD           # booleans, timestamps, nested values: not ids
    return np.zeros(n, dtype=np.int64), status


def parse_weight(col, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights as float32, a null mask (null means 1.0) and a bad mask."""
    if col is None:
        return np.zeros(n, dtype=np.float32), np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
    arr = _array(col)
    t = arr.type
    null = _nulls(arr)
    bad = np.zeros(n, dtype=bool)
    if pa.types.is_null(t):
        return np.zeros(n, dtype=np.float32), null, bad
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        # unchecked: an integer past 2**53 (or a decimal) rounds to the nearest double; the checked cast refused
        # the whole column for it, and with it every other row of the batch
        f = _np(pc.cast(arr, pa.float64(), safe=False), 0.0)
    elif _is_text(t):
        s, not_utf8 = _text(arr)
        null |= _bool(pc.equal(pc.utf8_length(s), 0))
        syntax = _bool(pc.match_substring_regex(s, _FLOAT_RE))
        vals, failed = cast_or_null(pc.if_else(pa.array(syntax), s, "0"), pa.float64())
        f = _np(vals, 0.0)
        bad |= ~null & (~syntax | failed | not_utf8)
    else:
        bad |= ~null
        f = np.zeros(n)
    with np.errstate(invalid="ignore", over="ignore"):
        # bad when it is no finite float32 once rounded to one: 3.4028235e38, float32's largest value as
        # printed, is a little above it in float64 and rounds to it
        bad |= ~null & ~np.isfinite(f.astype(np.float32))
    f = np.where(bad | null, 0.0, f)
    return f.astype(np.float32), null, bad


_UNIT_TO_MS = {"s": (1000, 1), "ms": (1, 1), "us": (1, 1000), "ns": (1, 1_000_000)}


def parse_ts(col, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Event times as int64 milliseconds since the epoch, a null mask and a bad mask."""
    if col is None:
        return np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
    arr = _array(col)
    t = arr.type
    null = _nulls(arr)
    bad = np.zeros(n, dtype=bool)
    ms = np.zeros(n, dtype=np.int64)
    if pa.types.is_null(t):
        return ms, null, bad
    if pa.types.is_timestamp(t):
        mul, div = _UNIT_TO_MS[t.unit]
        v = _np(arr.view(pa.int64()), 0).astype(np.int64)
        if mul > 1:
            over = np.abs(v) > np.iinfo(np.int64).max // mul
            bad |= ~null & over
            ms = np.where(over, 0, v) * mul
        else:
            ms = np.floor_divide(v, div)
    elif pa.types.is_date32(t):
        ms = _np(pc.cast(arr, pa.int32()), 0).astype(np.int64) * 86_400_000
    elif pa.types.is_date64(t):
        ms = _np(pc.cast(arr, pa.int64()), 0).astype(np.int64)
    elif pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        # milliseconds by the id rule: a float column is integral or bad, as 5.5 in JSON or CSV text is (it was
        # rounded here, so the same 5.5 was 6 ms from Arrow and bad_timestamp from JSON)
        ms, st = parse_id(arr, n)
        bad |= st >= BAD
    elif _is_text(t):
        s, not_utf8 = _text(arr)
        null |= _bool(pc.equal(pc.utf8_length(s), 0))
        digits = _bool(pc.match_substring_regex(s, _FLOAT_RE))      # a number (integral or bad), not ISO
        ms_int, st = _parse_number_text(pc.if_else(pa.array(digits), s, "0"))
        ms = np.where(digits, ms_int, 0)
        bad |= digits & (st >= BAD)
        iso = ~digits & ~null & ~not_utf8
        if iso.any():
            idx = np.flatnonzero(iso)
            cand = s.take(pa.array(idx))
            zoned = _bool(pc.match_substring_regex(cand, _ZONE_RE))
            iso_ms = np.zeros(len(idx), dtype=np.int64)
            iso_bad = np.zeros(len(idx), dtype=bool)
            for want_zone, tz in ((True, "UTC"), (False, None)):
                sel = np.flatnonzero(zoned == want_zone)
                if len(sel):
                    # parsed in ns and floored to ms, as a timestamp column of a finer unit is: a cast to ms refused
                    # any finer fraction, so datetime.isoformat()'s microseconds were bad_timestamp; ns spans
                    # 1677-2262, past the years 1740-2200 that the range check below keeps anyway
                    vals, failed = cast_or_null(cand.take(pa.array(sel)), pa.timestamp("ns", tz=tz))
                    iso_ms[sel] = np.floor_divide(_np(vals.view(pa.int64()), 0), 1_000_000)
                    iso_bad[sel] = failed
            ms[idx] = iso_ms
            bad[idx] = iso_bad
        bad |= ~null & not_utf8
    else:
        bad |= ~null
    bad |= ~null & (np.abs(ms) > MAX_TS_MS)
    return np.where(bad | null, 0, ms).astype(np.int64), null, bad


# ---------------------------------------------------------------------------------------------
def _render_rows(table: pa.Table, idx: np.ndarray) -> pa.Array:
    """A readable text form ``op=add, src=1, ...`` of the given rows, for dead-letter payloads."""
    parts = []
    for i, name in enumerate(table.column_names):
        col = _array(table.column(i)).take(pa.array(idx, pa.int64()))
        try:
            text = pc.cast(col, pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            text = pa.array(["?"] * len(idx), pa.string())
        parts.append(pc.binary_join_element_wise(f"{name}=", pc.fill_null(text, "null"), ""))
    if not parts:
        return pa.array([""] * len(idx), pa.string())
    return pc.binary_join_element_wise(*parts, ", ")


def dead_letters(*, source: str, partition: int | None, positions: np.ndarray, reasons,
                 details, payloads) -> pa.Table:
    """A DEAD_LETTER_SCHEMA table (payload and detail texts truncated to PAYLOAD_MAX_CHARS)."""
    n = len(positions)
    payloads = pa.array(payloads, pa.string()) if not isinstance(payloads, pa.Array) else payloads
    details = pa.array(details, pa.string()) if not isinstance(details, pa.Array) else details
    return pa.Table.from_arrays([
        pa.array([source] * n, pa.string()) if n else pa.array([], pa.string()),
        pa.nulls(n, pa.int32()) if partition is None else pa.array(np.full(n, partition, np.int32)),
        pa.array(np.asarray(positions, dtype=np.int64)),
        pa.array(reasons, pa.string()),
        # a detail quotes an excerpt of the value (_details); this bounds the details of every other producer too
        pc.utf8_slice_codeunits(_clean_text(details), 0, PAYLOAD_MAX_CHARS),
        pc.utf8_slice_codeunits(_clean_text(payloads), 0, PAYLOAD_MAX_CHARS),
    ], schema=DEAD_LETTER_SCHEMA)


def _clean_text(arr: pa.Array) -> pa.Array:
    """Text that is valid UTF-8 whatever the input held (rows that are not say so instead).

    A dead letter's payload is rendered from hostile input; written to Parquet or JSON it
    must be valid text, and the string kernels must never meet invalid UTF-8.
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = pc.cast(arr, pa.string())
    as_binary = arr.view(pa.binary() if pa.types.is_string(arr.type) else pa.large_binary())
    text, bad = cast_or_null(as_binary, pa.string())
    if bad.any():
        text = pc.if_else(pa.array(bad), pa.scalar("<not valid UTF-8>"), text)
    return text


_DETAIL = {
    "unknown_op": ("op", "op {} is not a known code or name"),
    "null_id": ("src", "src is missing ({})"),
    "bad_id": (None, "{} is not an integer"),
    "id_out_of_range": (None, "{} is outside int64"),
    "missing_dst": ("dst", "edge op without dst ({})"),
    "bad_weight": ("weight", "weight {} is not a finite float32"),
    "bad_timestamp": ("ts", "ts {} is not a valid time between the years 1740 and 2200"),
}


def _details(table: pa.Table, idx: np.ndarray, codes: np.ndarray, which: np.ndarray) -> pa.Array:
    """Per-row explanation: the reason's template filled with the offending value as text."""
    out = np.empty(len(idx), dtype=object)
    for code in np.unique(codes):
        reason = REASONS[code - 1]
        sel = np.flatnonzero(codes == code)
        for col_name in ("src", "dst") if _DETAIL[reason][0] is None else (_DETAIL[reason][0],):
            sub = sel if _DETAIL[reason][0] is not None else sel[which[sel] == (col_name == "dst")]
            if not len(sub):
                continue
            if col_name in table.column_names:
                try:
                    col = _array(table.column(table.column_names.index(col_name)))
                    vals = pc.fill_null(pc.cast(col.take(pa.array(idx[sub])), pa.string()), "null")
                    # an excerpt of the value, cut before it becomes a Python string (a 10 MB id was a 10 MB detail)
                    lengths = pc.utf8_length(vals).to_pylist()
                    vals = pc.utf8_slice_codeunits(vals, 0, VALUE_EXCERPT_CHARS + 1).to_pylist()
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                    vals, lengths = ["?"] * len(sub), [1] * len(sub)
            else:
                vals, lengths = ["absent"] * len(sub), [6] * len(sub)
            template = _DETAIL[reason][1]
            label = f"{col_name} " if _DETAIL[reason][0] is None else ""
            out[sub] = [template.format(label + excerpt(v, n)) for v, n in zip(vals, lengths)]
    return pa.array(out.tolist(), pa.string())


def validate_table(table: pa.Table, *, source: str, partition: int | None = None,
                   positions: np.ndarray | None = None,
                   raw: Callable[[np.ndarray], Sequence[str]] | None = None,
                   return_rows: bool = False):
    """:func:`validate` with ``raw(idx) -> texts`` giving the original records of rejected rows.

    With ``return_rows`` also returns the row index (in ``table``) of every valid event
    (a third item), so a caller can tell which record each event came from.
    """
    n = table.num_rows
    positions = np.arange(n, dtype=np.int64) if positions is None else np.asarray(positions, np.int64)
    if len(positions) != n:
        raise ValueError(f"positions has {len(positions)} entries for {n} rows")
    names = table.column_names
    # the first column of a name decides (a table may repeat a name; Table.column(name) would raise)
    get = (lambda name: table.column(names.index(name)) if name in names else None)

    op = parse_op(get("op")) if get("op") is not None else np.zeros(n, dtype=np.int8)
    is_edge = (op == Op.ADD_EDGE) | (op == Op.DELETE_EDGE)
    src, src_st = parse_id(get("src"), n)
    dst, dst_st = parse_id(get("dst"), n)
    w, w_null, w_bad = parse_weight(get("weight"), n)
    ts, ts_null, ts_bad = parse_ts(get("ts"), n)

    reason = np.zeros(n, dtype=np.int8)
    which = np.zeros(n, dtype=bool)         # for bad_id / id_out_of_range: True when dst is at fault
    rules = (
        ("unknown_op", op == 0, False),
        ("null_id", src_st == NULL, False),
        ("bad_id", src_st == BAD, False),
        ("id_out_of_range", src_st == OUT_OF_RANGE, False),
        ("missing_dst", is_edge & (dst_st == NULL), True),
        ("bad_id", is_edge & (dst_st == BAD), True),
        ("id_out_of_range", is_edge & (dst_st == OUT_OF_RANGE), True),
        ("bad_weight", is_edge & w_bad, False),
        ("bad_timestamp", ts_bad, False),
    )
    for name, mask, dst_fault in rules:
        hit = mask & (reason == 0)
        reason[hit] = _REASON_CODE[name]
        which[hit] = dst_fault

    valid = reason == 0
    vi = np.flatnonzero(valid)
    edge_v = is_edge[vi]
    events = pa.Table.from_arrays([
        pa.array(op[vi], pa.int8()),
        pa.array(src[vi], pa.int64()),
        pa.array(dst[vi], pa.int64(), mask=~edge_v),
        pa.array(w[vi], pa.float32(), mask=w_null[vi] | ~edge_v),
        pa.array(ts[vi], pa.timestamp("ms"), mask=ts_null[vi]),
    ], schema=EVENT_SCHEMA)

    di = np.flatnonzero(~valid)
    if di.shape[0]:
        codes = reason[di]
        payloads = raw(di) if raw is not None else _render_rows(table, di)
        dead = dead_letters(source=source, partition=partition, positions=positions[di],
                            reasons=_REASON_NAMES[codes].tolist(),
                            details=_details(table, di, codes, which[di]), payloads=payloads)
    else:           # the usual batch: no rendering (a dozen Arrow calls a column for nothing)
        dead = _no_dead_letters()
    if return_rows:
        return events, dead, vi
    return events, dead


def validate(table: pa.Table, *, source: str, partition: int | None = None,
             positions: Sequence[int] | np.ndarray | None = None) -> tuple[pa.Table, pa.Table]:
    """Split a loosely typed event table into (valid events in EVENT_SCHEMA, dead letters).

    ``positions[i]`` is the source position of row i (file row or Kafka offset; default:
    the row index).  Valid rows keep their input order; see the module docstring for the
    accepted column types and the order of checks.
    """
    return validate_table(table, source=source, partition=partition,
                          positions=None if positions is None else np.asarray(positions, np.int64))


def events(op, src, dst=None, weight=None, ts=None) -> pa.Table:
    """A validated event batch (``EVENT_SCHEMA``) from Python sequences or arrays.

    Parameters
    ----------
    op : sequence
        Op codes (1-4) or names: ``add``/``+``, ``delete``/``del``/``-``, ``add_vertex``,
        ``delete_vertex``/``del_vertex``.
    src, dst : sequence of int
        External vertex ids; ``dst`` is None (or holds None) for vertex ops.
    weight : sequence of float, optional
        Edge weights (None means 1.0).
    ts : sequence of int or datetime, optional
        Event times: milliseconds since the epoch, or ``datetime`` objects.

    Raises
    ------
    ValueError
        Naming the first invalid row and why (an unknown op, a null id, a NaN weight...).

    Examples
    --------
    >>> events(op=["add", "add", "delete_vertex"], src=[1, 2, 1], dst=[2, 3, None]).num_rows
    3
    """
    n = len(src)
    columns = {"op": _column(op), "src": _column(src),
               "dst": _column(dst) if dst is not None else pa.nulls(n, pa.int64())}
    if weight is not None:
        columns["weight"] = _column(weight)
    if ts is not None:
        columns["ts"] = _column(ts)
    lengths = {name: len(col) for name, col in columns.items()}
    if len(set(lengths.values())) > 1:
        sizes = ", ".join(f"{k} {v}" for k, v in lengths.items())
        raise ValueError(f"events(): the columns differ in length ({sizes})")
    good, dead = validate(pa.table(columns), source="events()")
    if dead.num_rows:
        first = dead.slice(0, 1).to_pylist()[0]
        raise ValueError(f"event row {first['position']}: {first['reason']} ({first['detail']})")
    return good


def _column(values) -> pa.Array:
    """A column as Arrow infers it from Python values; where it cannot (an int past 64 bits, mixed types), the
    values as text, which the validation reads exactly (an id past int64 is ``id_out_of_range``, not an
    OverflowError)."""
    values = list(values)
    try:
        return pa.array(values)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return pa.array([None if v is None else str(v) for v in values], pa.string())
