"""Convert published graph files into the event Parquet format (``EVENT_SCHEMA``).

Every output row is one event; static graphs and edge logs become ``op = add edge``
events, which ``vinestream replay`` then streams.  Formats (``fmt``):

``snap``    SNAP edge lists ``SRC DST [TIME ...]`` (``.txt``/``.tsv``/``.gz``), blanks or tabs,
            ``#`` / ``%`` comment lines.  A third column is a time in seconds (``time_unit``)
            and the log is sorted stably by it (several real logs are not sorted).
``signed``  SNAP signed networks ``SRC,DST,RATING,TIME`` (rating -> weight, TIME seconds).
``mtx``     Matrix Market ``coordinate`` ``pattern``/``real``/``integer``; ``symmetric`` and
            ``skew-symmetric`` matrices emit both directions (the graph is undirected), the
            diagonal once.  Values become weights (negated on the mirrored half when skew).
``metis``   METIS / Chaco ``.graph``: header ``n m [fmt [ncon]]``, line i+1 the 1-based
            neighbours of vertex i, each edge once per direction as stored; edge weights
            when fmt says so.
``events``  plain CSV event files ``op,src,dst[,weight[,ts]]`` (decoded and validated by
            :func:`stream.decode.decode`; rejected lines are reported, not written).

Ids are kept as the file writes them (1-based stays 1-based): they are external ids.
Parsing is vectorised: whitespace is normalised with NumPy and tokens are read as one
column by ``pyarrow.csv``; comma files go straight through ``pyarrow.csv``.
"""
from __future__ import annotations

import gzip
import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from vinestream.stream.events.decode import decode
from vinestream.stream.events.schema import EVENT_SCHEMA, Op

__all__ = ["FORMATS", "ROW_GROUP_SIZE", "ConvertReport", "convert", "detect_format", "read_events"]

FORMATS = ("snap", "signed", "mtx", "metis", "events")
ROW_GROUP_SIZE = 262_144
_TIME_UNITS = {"s": 1000.0, "ms": 1.0, "us": 1e-3}

_WS = np.zeros(256, dtype=bool)
_WS[list(b" \t\r\n\f\v")] = True
_COMMENT = re.compile(rb"(?m)^[ \t]*[#%][^\n]*(\n|$)")


@dataclass
class ConvertReport:
    input: str
    output: str
    format: str
    rows: int
    has_ts: bool
    rejected: int = 0                 # events format only: dead letters
    dead: pa.Table | None = None


# ---------------------------------------------------------------------------------------------
def _read_bytes(path: str | Path) -> bytes:
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as fh:
        return fh.read()


def _stem(path: str | Path) -> str:
    name = Path(path).name.lower()
    return name.removesuffix(".gz")


def detect_format(path: str | Path, data: bytes | None = None) -> str:
    """Guess the format from the file name, and for ``.csv`` from the first data line."""
    stem = _stem(path)
    if stem.endswith(".mtx"):
        return "mtx"
    if stem.endswith(".graph") or stem.endswith(".metis"):
        return "metis"
    if stem.endswith(".csv"):
        data = _read_bytes(path) if data is None else data
        body = _COMMENT.sub(b"", data[:65536])
        first = next((line for line in body.splitlines() if line.strip()), b"")
        fields = [f.strip() for f in first.split(b",")]
        numeric = all(re.fullmatch(rb"[+-]?[0-9.eE+-]+", f) for f in fields)
        return "signed" if numeric and len(fields) == 4 else "events"
    return "snap"


def _tokens(data: bytes, kind: pa.DataType | None = None) -> tuple[pa.Array, np.ndarray, int]:
    """All whitespace-separated tokens as one column, the line of each token, and the line count.

    Every blank byte becomes a newline (NumPy), then ``pyarrow.csv`` reads one token per row.
    """
    kind = kind if kind is not None else pa.string()
    buf = np.frombuffer(data, dtype=np.uint8)
    ws = _WS[buf]
    start = ~ws & np.concatenate([[True], ws[:-1]])
    token_start = np.flatnonzero(start)
    nl = np.flatnonzero(buf == 10)
    line = np.searchsorted(nl, token_start)          # tokens before the first newline: line 0
    nlines = len(nl) + (1 if len(buf) and buf[-1] != 10 else 0)
    if not len(token_start):
        return pa.array([], kind), line, nlines
    flat = buf.copy()
    flat[ws] = 10
    table = pcsv.read_csv(
        io.BytesIO(flat.tobytes()),
        read_options=pcsv.ReadOptions(column_names=["t"], block_size=1 << 24),
        parse_options=pcsv.ParseOptions(delimiter="\x01", quote_char=False, ignore_empty_lines=True),
        convert_options=pcsv.ConvertOptions(column_types={"t": kind}, quoted_strings_can_be_null=False,
                                            strings_can_be_null=False))
    tokens = table.column("t").combine_chunks()
    if len(tokens) != len(token_start):
        raise ValueError("tokenizer lost tokens (a control character \\x01 in the file?)")
    return tokens, line, nlines


def _ints(tokens: pa.Array, what: str) -> np.ndarray:
    try:
        return np.asarray(pc.cast(tokens, pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)
    except pa.ArrowInvalid as exc:
        raise ValueError(f"{what}: {exc}") from None


def _numbers(tokens: pa.Array, what: str) -> np.ndarray:
    """Integers stay exact; anything else goes through float64."""
    try:
        return _ints(tokens, what)
    except ValueError:
        try:
            return np.asarray(pc.cast(tokens, pa.float64()).to_numpy(zero_copy_only=False))
        except pa.ArrowInvalid as exc:
            raise ValueError(f"{what}: {exc}") from None


def _to_ms(seconds: np.ndarray, unit: str) -> np.ndarray:
    scale = _TIME_UNITS[unit]
    if seconds.dtype.kind in "iu" and scale >= 1:
        return seconds.astype(np.int64) * int(scale)
    return np.round(seconds.astype(np.float64) * scale).astype(np.int64)


def _events(src, dst, weight=None, ts_ms=None) -> pa.Table:
    n = len(src)
    return pa.Table.from_arrays([
        pa.array(np.full(n, int(Op.ADD_EDGE), dtype=np.int8)),
        pa.array(np.asarray(src, dtype=np.int64)),
        pa.array(np.asarray(dst, dtype=np.int64)),
        pa.nulls(n, pa.float32()) if weight is None else pa.array(np.asarray(weight, dtype=np.float32)),
        pa.nulls(n, pa.timestamp("ms")) if ts_ms is None else pa.array(ts_ms, pa.timestamp("ms")),
    ], schema=EVENT_SCHEMA)


def _sorted_by_time(table: pa.Table, ts_ms: np.ndarray | None, sort: bool) -> pa.Table:
    if ts_ms is None or not sort:
        return table
    order = np.argsort(ts_ms, kind="stable")
    if np.array_equal(order, np.arange(len(order))):
        return table
    return table.take(pa.array(order))


# ---------------------------------------------------------------------------------------------
def read_snap(data: bytes, *, has_time: bool | None = None, time_unit: str = "s",
              sort_by_time: bool = True) -> pa.Table:
    """SNAP edge list: SRC DST [TIME [...]] per line, comments removed."""
    body = _COMMENT.sub(b"", data)
    tokens, line, _ = _tokens(body)
    if not len(tokens):
        return _events([], [])
    counts = np.bincount(line)
    counts = counts[counts > 0]
    k = int(counts[0])
    if (counts != k).any() or k < 2:
        bad = int(np.flatnonzero(counts != k)[0]) if (counts != k).any() else 0
        raise ValueError(f"SNAP edge list: data line {bad + 1} has {counts[bad]} fields, expected {k}")
    src = _ints(tokens.take(pa.array(np.arange(0, len(tokens), k))), "SNAP src")
    dst = _ints(tokens.take(pa.array(np.arange(1, len(tokens), k))), "SNAP dst")
    ts = None
    if k >= 3 and has_time is not False:
        ts = _to_ms(_numbers(tokens.take(pa.array(np.arange(2, len(tokens), k))), "SNAP time"), time_unit)
    return _sorted_by_time(_events(src, dst, None, ts), ts, sort_by_time)


def read_signed(data: bytes, *, time_unit: str = "s", sort_by_time: bool = True) -> pa.Table:
    """SNAP signed network CSV: SRC,DST,RATING,TIME (no header)."""
    table = pcsv.read_csv(
        io.BytesIO(_COMMENT.sub(b"", data)),
        read_options=pcsv.ReadOptions(column_names=["src", "dst", "rating", "time"]),
        convert_options=pcsv.ConvertOptions(column_types={
            "src": pa.int64(), "dst": pa.int64(), "rating": pa.float64(), "time": pa.float64()}))
    t = np.asarray(table.column("time").to_numpy())
    ts = _to_ms(t.astype(np.int64) if np.all(t == np.floor(t)) else t, time_unit)
    events = _events(table.column("src").to_numpy(), table.column("dst").to_numpy(),
                     table.column("rating").to_numpy(), ts)
    return _sorted_by_time(events, ts, sort_by_time)


def read_mtx(data: bytes) -> pa.Table:
    """Matrix Market coordinate file; symmetric ones in both directions."""
    nl = data.find(b"\n")
    banner = data[:nl if nl >= 0 else len(data)].decode("ascii", "replace").split()
    if len(banner) < 5 or banner[0].lower() != "%%matrixmarket":
        raise ValueError(f"not a Matrix Market file (banner {' '.join(banner)!r})")
    obj, layout, field, symmetry = (b.lower() for b in banner[1:5])
    if obj != "matrix" or layout != "coordinate":
        raise ValueError(f"Matrix Market {obj} {layout}: only 'matrix coordinate' is a graph")
    if field not in ("pattern", "real", "integer", "double"):
        raise ValueError(f"Matrix Market field {field!r} not supported (pattern, real, integer)")
    body = _COMMENT.sub(b"", data)
    size_end = body.find(b"\n")
    size = body[:size_end].split()
    nnz = int(size[2])
    tokens, _, _ = _tokens(body[size_end + 1:])
    k = 2 if field == "pattern" else 3
    if len(tokens) != k * nnz:
        raise ValueError(f"Matrix Market: {len(tokens)} numbers for {nnz} entries of {k}")
    i = _ints(tokens.take(pa.array(np.arange(0, len(tokens), k))), "row")
    j = _ints(tokens.take(pa.array(np.arange(1, len(tokens), k))), "col")
    w = None if k == 2 else _numbers(tokens.take(pa.array(np.arange(2, len(tokens), k))), "value") \
        .astype(np.float64)
    if symmetry in ("symmetric", "skew-symmetric", "hermitian"):
        off = i != j          # the diagonal once
        mi, mj = j[off], i[off]
        # interleave each entry with its mirror: (i,j),(j,i) adjacent in the log
        src = np.concatenate([i, mi])
        dst = np.concatenate([j, mj])
        order_key = np.concatenate([np.arange(len(i)) * 2, np.flatnonzero(off) * 2 + 1])
        order = np.argsort(order_key, kind="stable")
        src, dst = src[order], dst[order]
        if w is not None:
            mw = -w[off] if symmetry == "skew-symmetric" else w[off]
            w = np.concatenate([w, mw])[order]
        i, j = src, dst
    return _events(i, j, w, None)


def read_metis(data: bytes) -> pa.Table:
    """METIS / Chaco adjacency file (1-based ids, each stored edge emitted as stored)."""
    body = _COMMENT.sub(b"", data)
    head_end = body.find(b"\n")
    head = body[:head_end if head_end >= 0 else len(body)].split()
    n = int(head[0])
    fmt = head[2].decode().zfill(3) if len(head) > 2 else "000"
    ncon = int(head[3]) if len(head) > 3 else 1
    has_size, has_vweight, has_eweight = (c == "1" for c in fmt[-3:])
    rest = body[head_end + 1:] if head_end >= 0 else b""
    tokens, line, _nlines = _tokens(rest)
    if len(tokens) and line.max() >= n:
        raise ValueError(f"METIS: adjacency lines beyond the {n} vertices in the header")
    first = np.searchsorted(line, np.arange(max(n, 1)))       # first token of each line
    j = np.arange(len(tokens)) - first[line]                  # index of each token in its line
    skip = int(has_size) + (ncon if has_vweight else 0)
    stride = 2 if has_eweight else 1
    rel = j - skip
    nbr = (rel >= 0) & (rel % stride == 0)
    values = _numbers(tokens, "METIS")
    src = line[nbr] + 1
    dst = values[nbr].astype(np.int64)
    w = None
    if has_eweight:
        wmask = (rel >= 0) & (rel % stride == 1)
        w = values[wmask].astype(np.float64)
    return _events(src, dst, w, None)


def read_events(data: bytes, *, source: str = "<bytes>"):
    """Plain CSV event file ``op,src,dst[,weight[,ts]]``; returns stream.decode.Decoded."""
    return decode([data], "csv", source=source, line_positions=True)


# ---------------------------------------------------------------------------------------------
def convert(input_path: str | Path, output_path: str | Path, *, fmt: str = "auto",
            time_unit: str = "s", sort_by_time: bool = True, has_time: bool | None = None,
            row_group_size: int = ROW_GROUP_SIZE, compression: str = "zstd") -> ConvertReport:
    """Convert ``input_path`` into an event Parquet log at ``output_path`` (see module docstring).

    ``fmt``: auto (from the name; ``.csv`` sniffed: four numeric fields = ``signed``, else
    ``events``), or one of ``FORMATS``.  ``time_unit`` of SNAP / signed times (s, ms, us).
    """
    if time_unit not in _TIME_UNITS:
        raise ValueError(f"time_unit must be one of {', '.join(_TIME_UNITS)}")
    data = _read_bytes(input_path)
    fmt = detect_format(input_path, data) if fmt == "auto" else fmt
    dead = None
    if fmt == "snap":
        table = read_snap(data, has_time=has_time, time_unit=time_unit, sort_by_time=sort_by_time)
    elif fmt == "signed":
        table = read_signed(data, time_unit=time_unit, sort_by_time=sort_by_time)
    elif fmt == "mtx":
        table = read_mtx(data)
    elif fmt == "metis":
        table = read_metis(data)
    elif fmt == "events":
        decoded = read_events(data, source=str(input_path))
        table, dead = decoded.events, decoded.dead
    else:
        raise ValueError(f"unknown input format {fmt!r}: choose auto or one of {', '.join(FORMATS)}")
    output_path = Path(output_path)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    table = table.replace_schema_metadata({b"vinestream.source": str(input_path).encode(),
                                           b"vinestream.format": fmt.encode()})
    pq.write_table(table, output_path, row_group_size=row_group_size, compression=compression)
    has_ts = table.num_rows > 0 and table.column("ts").null_count < table.num_rows
    return ConvertReport(str(input_path), str(output_path), fmt, table.num_rows, bool(has_ts),
                         0 if dead is None else dead.num_rows, dead)
