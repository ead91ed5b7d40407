"""Decoding on the GPU with cuDF: JSON lines and CSV payloads parsed by cuDF's readers, Arrow IPC and
Parquet columns moved to device memory, every batch validated there.

**One outcome per record, whoever decodes it.**  The pyarrow decoders
(``stream/events/decode.py``) define what every record becomes (an event, or a
dead letter with its reason).  cuDF's readers are more lenient than JSON and
than those rules (measured on cuDF 26.10: trailing commas, ``+3``, ``02`` and
``NaN`` are accepted, a repeated key keeps its first value, and ``read_csv``
turns ``NA`` / ``null`` into nulls), so they only ever see input on which both
agree.  A poll takes the device path only when a *screen* proves it *clean*:

1. a fused kernel (:data:`_SCREEN_SOURCE`, one thread per line) checks each line
   against a strict grammar: for JSON, one flat object of valid JSON, ASCII, no
   escapes, each known key at most once, ``op`` a bare code 1-4 or a quoted name,
   ``src`` a bare integer of at most 18 digits, ``dst`` / ``ts`` a bare integer or
   ``null``, ``weight`` a bare JSON number or ``null``, any other key a flat value;
   for CSV, 2-5 comma-separated fields of those shapes (empty = null, no quotes
   or blanks), the same field count on every line;
2. after the parse, on the device: every op is a known code or name, every edge
   op has a ``dst``, every edge weight is a finite float32, one row per line.

A clean poll gives exactly the events the pyarrow path would, and no dead
letters.  Anything else (a payload over the limit, a tombstone, an empty or
blank payload, a single bad record) sends *the whole poll* to the pyarrow path,
which then gives every record its usual outcome; so outcomes never depend on
the decoder, and a hostile message costs a host decode, never a wrong event.
Arrow IPC streams are validated by pyarrow on the host (their framing must be
checked before any kernel reads them) and their columns copied to the device in
one transfer each; a Parquet row group read by ``cudf.read_parquet`` is checked
by :func:`validate_frame` on the device and, when not clean, validated row by
row on the host.

**When the device pays.**  A cuDF read costs a few milliseconds however small
the input, so the ``auto`` decoder uses it only for polls of at least
:data:`AUTO_MIN_BYTES` (JSON / CSV) and leaves smaller polls to pyarrow; see
``vinestream bench decode`` for the measured crossover.
"""
from __future__ import annotations

import io
from collections.abc import Sequence
from functools import partial

import numpy as np
import pyarrow as pa

from vinestream.stream.events.decode import FORMATS, Decoded, decode
from vinestream.stream.events.device import DeviceEvents
from vinestream.stream.events.schema import (
    DEFAULT_MAX_NESTING,
    DEFAULT_MAX_PAYLOAD_BYTES,
    EDGE_OPS,
    MAX_TS_MS,
    OP_NAMES,
    Op,
    empty_dead_letters,
)

__all__ = ["AUTO_MIN_BYTES", "DECODERS", "DecoderUnavailable", "cudf_available", "cudf_decode", "device_readable",
           "make_decoder", "resolve_decoder", "validate_frame"]

DECODERS = ("auto", "pyarrow", "cudf")

#: Smallest JSON / CSV poll (bytes) the ``auto`` decoder sends to the GPU (see the module docstring).
AUTO_MIN_BYTES = 1 << 20

_OP_TEXT = {**{k.lower(): int(v) for k, v in OP_NAMES.items()}, **{str(int(o)): int(o) for o in Op}}


class DecoderUnavailable(RuntimeError):
    """``--decoder cudf`` where cuDF cannot run (not installed, or no GPU backend)."""


def cudf_available() -> tuple[bool, str]:
    """(True, version) when cuDF imports and sees a GPU, else (False, why)."""
    try:
        import cudf
    except Exception as exc:            # ImportError, or a CUDA library that does not load
        return False, f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    return True, str(cudf.__version__)


def resolve_decoder(name: str, *, gpu: bool) -> str:
    """The decoder that runs: ``pyarrow`` or ``cudf``.  ``auto`` picks cuDF on a GPU backend where it
    imports; asking for ``cudf`` where it cannot run raises :class:`DecoderUnavailable` (one line)."""
    if name not in DECODERS:
        raise ValueError(f"unknown decoder {name!r}: choose one of {', '.join(DECODERS)}")
    if name == "pyarrow":
        return "pyarrow"
    if not gpu:
        if name == "cudf":
            raise DecoderUnavailable("--decoder cudf needs the GPU backend (--backend gpu on a machine with "
                                     "an NVIDIA GPU and CuPy)")
        return "pyarrow"
    ok, why = cudf_available()
    if ok:
        return "cudf"
    if name == "cudf":
        raise DecoderUnavailable(f"--decoder cudf needs cuDF (pip install 'vinestream[cudf]'): {why}")
    return "pyarrow"


def make_decoder(name: str, *, gpu: bool):
    """The ``decode``-compatible callable for ``name`` (see :func:`resolve_decoder`)."""
    if resolve_decoder(name, gpu=gpu) == "pyarrow":
        return decode
    return partial(cudf_decode, min_bytes=AUTO_MIN_BYTES if name == "auto" else 0)


# ---------------------------------------------------------------------------------------------
# the screen kernel
_SCREEN_SOURCE = r"""
typedef unsigned char u8;

__device__ __forceinline__ long long skip_ws(const u8* b, long long i, long long e) {
    while (i < e && (b[i] == ' ' || b[i] == '\t')) ++i;
    return i;
}
__device__ __forceinline__ bool is_digit(u8 c) { return c >= '0' && c <= '9'; }

// A strict JSON number at b[i..e): returns the end, or -1.  *digits: integer-part digits; *plain: no
// fraction and no exponent.
__device__ long long json_number(const u8* b, long long i, long long e, int* digits, bool* plain) {
    if (i < e && b[i] == '-') ++i;
    if (i >= e || !is_digit(b[i])) return -1;
    long long s = i;
    if (b[i] == '0') ++i; else while (i < e && is_digit(b[i])) ++i;
    *digits = (int)(i - s);
    *plain = true;
    if (i < e && b[i] == '.') {
        ++i; if (i >= e || !is_digit(b[i])) return -1;
        while (i < e && is_digit(b[i])) ++i;
        *plain = false;
    }
    if (i < e && (b[i] == 'e' || b[i] == 'E')) {
        ++i; if (i < e && (b[i] == '+' || b[i] == '-')) ++i;
        if (i >= e || !is_digit(b[i])) return -1;
        while (i < e && is_digit(b[i])) ++i;
        *plain = false;
    }
    return i;
}
__device__ bool op_name_char(u8 c) { return (c >= 'a' && c <= 'z') || c == '_' || c == '+' || c == '-'; }
__device__ bool same(const u8* b, long long s, long long n, const char* w) {
    for (long long k = 0; k < n; ++k) { if (w[k] == 0 || b[s + k] != (u8)w[k]) return false; }
    return w[n] == 0;
}
__device__ int key_of(const u8* b, long long s, long long n) {
    if (same(b, s, n, "op")) return 0;
    if (same(b, s, n, "src")) return 1;
    if (same(b, s, n, "dst")) return 2;
    if (same(b, s, n, "weight")) return 3;
    if (same(b, s, n, "ts")) return 4;
    return -1;
}

// kinds of a value: 0 string, 1 plain integer, 2 other number, 3 null, 4 true/false.
// Returns 0 (not clean), 1 (clean, op a code) or 1 + 16 (clean, op a name).
__device__ int json_line(const u8* b, long long i, long long e) {
    if (e - i < 2 || b[i] != '{' || b[e - 1] != '}') return false;
    i = skip_ws(b, i + 1, e);
    unsigned seen = 0;
    int op_name = 0;
    while (true) {
        if (i >= e || b[i] != '"') return false;
        long long ks = ++i;
        while (i < e && b[i] != '"') { u8 c = b[i]; if (c == '\\' || c < 0x20 || c >= 0x80) return false; ++i; }
        if (i >= e) return false;
        int key = key_of(b, ks, i - ks);
        ++i;
        if (key >= 0) { if (seen & (1u << key)) return false; seen |= 1u << key; }
        i = skip_ws(b, i, e);
        if (i >= e || b[i] != ':') return false;
        i = skip_ws(b, i + 1, e);
        if (i >= e) return false;
        int kind, digits = 0; bool plain = true; bool name = true;
        u8 c = b[i];
        if (c == '"') {
            long long s = ++i;
            while (i < e && b[i] != '"') {
                u8 d = b[i]; if (d == '\\' || d < 0x20 || d >= 0x80) return false;
                name = name && op_name_char(d); ++i;
            }
            if (i >= e) return false;
            name = name && i > s;
            ++i; kind = 0;
        } else if (c == '-' || is_digit(c)) {
            i = json_number(b, i, e, &digits, &plain);
            if (i < 0) return false;
            kind = plain ? 1 : 2;
        } else if (e - i >= 4 && b[i] == 'n' && b[i+1] == 'u' && b[i+2] == 'l' && b[i+3] == 'l') { i += 4; kind = 3; }
        else if (e - i >= 4 && b[i] == 't' && b[i+1] == 'r' && b[i+2] == 'u' && b[i+3] == 'e') { i += 4; kind = 4; }
        else if (e - i >= 5 && b[i] == 'f' && b[i+1] == 'a' && b[i+2] == 'l' && b[i+3] == 's' && b[i+4] == 'e') {
            i += 5; kind = 4;
        } else return false;                     // nested values, NaN, Infinity, anything else
        switch (key) {
            case 0: if (!((kind == 0 && name) || (kind == 1 && digits == 1 && b[i-1] >= '1' && b[i-1] <= '4'
                                                  && (i < 2 || b[i-2] != '-')))) return false;
                    op_name = kind == 0; break;
            case 1: if (!(kind == 1 && digits <= 18)) return false; break;
            case 2: case 4: if (!(kind == 3 || (kind == 1 && digits <= 18))) return false; break;
            case 3: if (!(kind == 3 || kind == 1 || kind == 2)) return false; break;
            default: break;
        }
        i = skip_ws(b, i, e);
        if (i < e - 1 && b[i] == ',') { i = skip_ws(b, i + 1, e); continue; }
        if (i == e - 1) break;                   // the closing brace
        return false;
    }
    if ((seen & 3u) != 3u) return 0;             // op and src present
    return op_name ? 17 : 1;
}

// CSV: op,src[,dst[,weight[,ts]]]; returns 0 when the line is not clean, else the field count, plus 16
// when op is a name.
__device__ int csv_line(const u8* b, long long i, long long e) {
    int field = 0;
    bool op_name = false;
    while (true) {
        long long s = i;
        while (i < e && b[i] != ',') { if (b[i] < 0x21 || b[i] >= 0x7f || b[i] == '"') return 0; ++i; }
        long long n = i - s;
        bool ok;
        int digits = 0; bool plain = true;
        if (field == 0) {
            ok = n > 0;
            bool code = n == 1 && b[s] >= '1' && b[s] <= '4';
            for (long long k = s; k < i && !code; ++k) ok = ok && op_name_char(b[k]);
            op_name = !code;
        } else if (n == 0) {
            ok = field != 1;                     // src may not be empty
        } else {
            long long end = json_number(b, s, i, &digits, &plain);
            ok = end == i && (field == 3 || (plain && digits <= 18));
        }
        if (!ok || field >= 5) return 0;
        ++field;
        if (i >= e) break;
        ++i;                                     // the comma
    }
    return field >= 2 ? field + (op_name ? 16 : 0) : 0;
}

extern "C" __global__ void screen_lines(const u8* buf, const long long* starts, const long long* ends,
                                        long long n, int csv, int* out) {
    long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (line >= n) return;
    long long s = starts[line], e = ends[line];
    for (long long k = s; k < e; ++k) if (buf[k] >= 0x80) { out[line] = 0; return; }
    out[line] = csv ? csv_line(buf, s, e) : json_line(buf, s, e);
}
"""

#: added to a line's screen verdict when its op is a name (so the poll reads op as text)
OP_NAME = 16
_kernel_cache: dict = {}


def _screen_kernel():
    import cupy
    if "screen" not in _kernel_cache:
        _kernel_cache["screen"] = cupy.RawKernel(_SCREEN_SOURCE, "screen_lines", options=("-std=c++14",))
    return _kernel_cache["screen"]


def screen(buf, starts, ends, fmt: str):
    """Per line: 0 when not clean; else 1 (JSON) or the field count (CSV), plus :data:`OP_NAME` when ``op``
    is a name rather than a code.  ``buf``, ``starts``, ``ends`` are device arrays."""
    import cupy
    n = int(starts.shape[0])
    out = cupy.zeros(n, dtype=np.int32)
    if n:
        threads = 128
        _screen_kernel()(((n + threads - 1) // threads,), (threads,),
                         (buf, starts, ends, np.int64(n), np.int32(fmt == "csv"), out))
    return out


# ---------------------------------------------------------------------------------------------
# validating a parsed frame on the device
def _op_codes(op):
    """cuDF op column (text or integer) -> (int8 codes, known mask), both CuPy."""
    if op.dtype.kind in "iu":
        codes = op.fillna(0).astype("int64").to_cupy()
        return codes.astype(np.int8), (codes >= 1) & (codes <= 4)
    known = op.isin(list(_OP_TEXT)).fillna(False)
    codes = op.where(known, "0").replace(list(_OP_TEXT), [str(v) for v in _OP_TEXT.values()])
    return codes.astype("int8").to_cupy(), known.to_cupy()


def _ints(col, n):
    """cuDF integer column -> (int64 CuPy values with 0 for null, valid mask)."""
    import cupy
    if col is None:
        return cupy.zeros(n, np.int64), cupy.zeros(n, bool)
    valid = ~col.isna().to_cupy()
    return col.fillna(0).astype("int64").to_cupy(), valid


def device_readable(schema: pa.Schema) -> bool:
    """Whether a Parquet event log's column types are ones :func:`validate_frame` checks on the device
    (op integer or text; src, dst integer; weight a number; ts integer or timestamp[ms])."""
    types = {f.name: f.type for f in schema}
    if "op" not in types or "src" not in types or len(set(schema.names)) != len(schema.names):
        return False
    checks = {"op": lambda t: pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t),
              "src": pa.types.is_integer, "dst": pa.types.is_integer,
              "weight": lambda t: pa.types.is_integer(t) or pa.types.is_floating(t),
              "ts": lambda t: pa.types.is_integer(t) or (pa.types.is_timestamp(t) and t.unit == "ms" and t.tz is None)}
    return all(check(types[name]) for name, check in checks.items() if name in types)


def validate_frame(df, n: int) -> DeviceEvents | None:
    """A typed cuDF frame (op text or integer; src/dst/ts integer or timestamp[ms]; weight float) as a
    :class:`DeviceEvents`, or None unless every row is a valid event (then the host validator decides)."""
    import cudf
    import cupy
    cols = set(df.columns)
    if "op" not in cols or "src" not in cols or len(df) != n:
        return None
    for name in ("src", "dst", "ts"):
        if name in cols:
            kind = df[name].dtype.kind
            if kind not in "iu" and not (name == "ts" and str(df[name].dtype) == "datetime64[ms]"):
                return None
    if "weight" in cols and df["weight"].dtype.kind not in "fiu":
        return None
    if df["op"].dtype.kind not in "iu" and not cudf.api.types.is_string_dtype(df["op"].dtype):
        return None
    op, known = _op_codes(df["op"])
    src, src_valid = _ints(df["src"], n)
    dst, dst_valid = _ints(df["dst"] if "dst" in cols else None, n)
    ts_col = df["ts"] if "ts" in cols else None
    if ts_col is not None and ts_col.dtype.kind == "M":
        ts_col = ts_col.astype("int64").where(~ts_col.isna())
    ts, ts_valid = _ints(ts_col, n)
    is_edge = (op == int(EDGE_OPS[0])) | (op == int(EDGE_OPS[1]))
    if "weight" in cols:
        w64 = df["weight"].astype("float64")
        weight_valid = ~w64.isna().to_cupy()
        w = w64.fillna(1.0).to_cupy()
    else:
        weight_valid = cupy.zeros(n, bool)
        w = cupy.ones(n, np.float64)
    bad_weight = weight_valid & ~cupy.isfinite(w.astype(np.float32))      # as validate.parse_weight
    bad = ~known | ~src_valid | (is_edge & ~dst_valid) | (is_edge & bad_weight) | (
        ts_valid & (cupy.abs(ts) > MAX_TS_MS))                                 # as validate.parse_ts
    if bool(bad.any()):
        return None
    weight_valid &= is_edge                      # vertex ops: dst and weight come out null
    dst_valid &= is_edge
    return DeviceEvents(op=op, src=src, dst=cupy.where(dst_valid, dst, 0),
                        weight=cupy.where(weight_valid, w, 1.0).astype(np.float32), ts=ts,
                        dst_valid=dst_valid, weight_valid=weight_valid, ts_valid=ts_valid)


# ---------------------------------------------------------------------------------------------
# JSON / CSV polls
_FIELDS = ("op", "src", "dst", "weight", "ts")
_DTYPES = {"src": "int64", "dst": "int64", "weight": "float64", "ts": "int64"}


def _joined(payloads: Sequence[bytes]) -> tuple[bytes, np.ndarray]:
    """The payloads as one buffer of lines (one trailing newline of a payload dropped), and each
    payload's end offset in it (exclusive, before its separator)."""
    trimmed = [p[:-1] if p[-1:] == b"\n" else p for p in payloads]
    data = b"\n".join(trimmed) + b"\n"
    lengths = np.fromiter(map(len, trimmed), dtype=np.int64, count=len(trimmed))
    ends = np.cumsum(lengths + 1) - 1
    return data, ends


def _clean_poll(payloads, fmt: str, positions: np.ndarray, line_positions: bool) -> Decoded | None:
    """The device decode of a poll, or None when it is not clean (see the module docstring)."""
    import cudf
    import cupy
    data, pend = _joined(payloads)
    buf = cupy.asarray(np.frombuffer(data, dtype=np.uint8))
    nl = cupy.flatnonzero(buf == 10)
    n = int(nl.shape[0])                          # one line per newline (the buffer ends with one)
    starts = cupy.concatenate([cupy.zeros(1, np.int64), nl[:-1] + 1]).astype(np.int64)
    ends = nl.astype(np.int64)
    flags = screen(buf, starts, ends, fmt)
    lines_per_payload = cupy.diff(cupy.searchsorted(nl, cupy.asarray(pend), side="right"), prepend=0)
    shape = flags % OP_NAME
    summary = cupy.concatenate([cupy.stack([shape.min(), shape.max(), flags.max()]).astype(np.int64),
                                lines_per_payload.astype(np.int64)]).get()     # one transfer
    low, high, names, per_payload = int(summary[0]), int(summary[1]), int(summary[2]) >= OP_NAME, summary[3:]
    if n == 0 or low == 0 or (fmt == "csv" and low != high) or (per_payload == 0).any():
        return None
    dtypes = {**_DTYPES, "op": "str" if names else "int64"}       # op codes only: read as integers
    reader = io.BytesIO(data)
    try:
        if fmt == "json":
            df = cudf.read_json(reader, lines=True, engine="cudf", dtype=dtypes, prune_columns=True)
        else:
            columns = list(_FIELDS[:high])
            df = cudf.read_csv(reader, header=None, names=columns, dtype={c: dtypes[c] for c in columns},
                               skip_blank_lines=False)
    except Exception:                             # cuDF refused the poll: the host decoders decide
        return None
    events = validate_frame(df, n)
    if events is None:
        return None
    pos = np.repeat(positions, per_payload)
    if line_positions:
        first = np.repeat(np.cumsum(per_payload) - per_payload, per_payload)
        pos = pos + (np.arange(n, dtype=np.int64) - first)
    return Decoded(events, empty_dead_letters(), pos.astype(np.int64))


def cudf_decode(payloads: Sequence[bytes | None], fmt: str, *, source: str, partition: int | None = None,
                positions: Sequence[int] | None = None, line_positions: bool = False,
                max_payload_bytes: int | None = DEFAULT_MAX_PAYLOAD_BYTES,
                max_nesting: int = DEFAULT_MAX_NESTING, min_bytes: int = 0) -> Decoded:
    """:func:`~vinestream.stream.events.decode.decode` with the parse on the GPU (module docstring).

    Same arguments and the same outcome for every record; the events of a clean JSON / CSV
    poll of at least ``min_bytes`` come back as :class:`DeviceEvents`, everything else as
    the pyarrow decoder returns it (Arrow IPC events moved to the device).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown wire format {fmt!r}: choose one of {', '.join(FORMATS)}")
    positions = np.arange(len(payloads), dtype=np.int64) if positions is None \
        else np.asarray(positions, dtype=np.int64)
    host = partial(decode, payloads, fmt, source=source, partition=partition, positions=positions,
                   line_positions=line_positions, max_payload_bytes=max_payload_bytes, max_nesting=max_nesting)
    if not len(payloads) or any(p is None for p in payloads):
        return host()
    if fmt == "arrow":
        decoded = host()
        if decoded.events.num_rows:
            import cupy
            decoded.events = DeviceEvents.from_arrow(decoded.events, cupy)
        return decoded
    sizes = np.fromiter(map(len, payloads), dtype=np.int64, count=len(payloads))
    if (max_payload_bytes and (sizes > max_payload_bytes).any()) or int(sizes.sum()) < max(min_bytes, 1):
        return host()
    decoded = _clean_poll(payloads, fmt, positions, line_positions)
    return decoded if decoded is not None else host()
