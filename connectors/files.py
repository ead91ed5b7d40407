"""Convert published graph files into the event Parquet format (``EVENT_SCHEMA``) — never guessing silently.

``convert`` says what it read (:meth:`ConvertReport.lines`: the format, the delimiter,
whether there was a header and what each column means) and sends every row it cannot
use to a dead-letter Parquet next to the output (``OUT.dead_letter.parquet``, the
``DEAD_LETTER_SCHEMA``), counted in the report.  A dead letter's ``position`` is the
row's line in a text input, counted from 1 as editors, ``grep -n`` and convert's own
messages count lines, and its row in a Parquet input, counted from 0 as replay counts a
log's rows.  (The readers below number lines from 0, as NumPy does; :func:`convert`
adds the 1, in one place.)

Formats (``fmt``; ``auto`` picks by extension and content and says so):

``snap``    SNAP edge lists: fields separated by blanks or tabs, ``#`` / ``%`` comment lines.
``csv``     comma-separated; ``tsv`` tab-separated.  With a header naming the columns
            (``source,target`` / ``src,dst`` / ``from,to``, plus ``weight`` / ``ts`` /
            ``time`` / ``timestamp`` / ``op``) or without one.
``json``    JSON lines, one object per line, keys named as for CSV headers.
``mtx``     Matrix Market ``coordinate`` (symmetric ones in both directions).
``metis``   METIS / Chaco ``.graph``; a vertex without neighbours becomes an ``add_vertex`` event.
            In both, an id outside the vertices the header declares is a dead letter
            (``id_out_of_range``), as is a line whose fields do not fit the header; a file
            whose entries (mtx) or vertex lines and edges (METIS) are not its header's is refused,
            and a METIS entry without its mirror is a dead letter (:func:`read_metis`).
``signed``  SNAP signed networks ``SRC,DST,RATING,TIME`` (= csv with ``--columns src,dst,weight,ts``).
``events``  the event format itself: lines ``op,src,dst[,weight[,ts]]`` (comma-, tab- or blank-separated; a
            header starting with ``op`` names the fields, times count milliseconds) or an event Parquet log.
``parquet`` a Parquet edge table (columns named as for CSV headers) or event log.

Columns: a file without a header and with more than two fields per line needs ``columns``
(``src,dst,ts``, ``src,dst,weight``, ``src,dst,weight,ts``; ``_`` skips a field) — a third
number is never assumed to be a time or a weight.  ``time_unit`` (s, ms, us, ns) says what
numeric times count; times that land after the year 2200 are an error that names the likely
unit.  Logs with times are sorted stably by time (``sort_by_time``); how many rows moved
is reported.

CSV and TSV (edge lists and event lines) may quote fields as spreadsheets and ``csv`` writers do: a field in
double quotes is its text (:func:`_split_delimited`).

Ids are kept as the file writes them (1-based stays 1-based): they are external ids.
Parsing is vectorised: fields are cut with NumPy over a piece of text and parsed as
Arrow string columns by :func:`~vinestream.stream.events.validate.validate_table`.

Memory: delimited text, Matrix Market and Parquet inputs are read a piece at a time
(:data:`PIECE_BYTES`, a row group) and each piece's events are written at once
(:class:`_EventLogWriter`, into a temporary file that replaces the output at the end); a
log out of time order is sorted a bucket of times at a time (:data:`SORT_BUCKET_ROWS`).
So the memory does not grow with the input.  Event lines are read so too; JSON lines and
METIS are read whole.
"""
from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pjson
import pyarrow.parquet as pq

from vinestream.connectors.base import special_file, table_of_rows
from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA, EVENT_SCHEMA, MAX_TS_MS, Op
from vinestream.stream.events.validate import cast_or_null, dead_letters, parse_ts, validate_table

__all__ = [
    "COLUMN_NAMES",
    "FORMATS",
    "ROW_GROUP_SIZE",
    "ConvertError",
    "ConvertReport",
    "convert",
    "detect_format",
    "has_data_line",
    "read_events",
]

class ConvertError(ValueError):
    """An input that cannot be converted as asked; the message says what would work (the CLI prints it)."""


InputError = ConvertError      # the name used below

FORMATS = ("snap", "csv", "tsv", "json", "mtx", "metis", "signed", "events", "parquet")
ROW_GROUP_SIZE = 262_144
TIME_UNITS = {"s": 1000.0, "ms": 1.0, "us": 1e-3, "ns": 1e-6}
_UNIT_WORDS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}

#: header / JSON key -> column meaning (lower-case, blanks and dashes as underscores)
COLUMN_NAMES = {
    **dict.fromkeys(("src", "source", "from", "u", "node1", "from_node", "fromnodeid", "source_id", "src_id",
                     "sender", "head"), "src"),
    **dict.fromkeys(("dst", "target", "to", "v", "node2", "to_node", "tonodeid", "target_id", "dst_id",
                     "receiver", "tail"), "dst"),
    **dict.fromkeys(("weight", "w", "value", "rating", "sign"), "weight"),
    **dict.fromkeys(("ts", "time", "timestamp", "t", "unixts", "datetime", "date"), "ts"),
    "op": "op",
    **dict.fromkeys(("_", "skip", "-", "ignore"), "_"),
}
_MEANINGS = ("src", "dst", "weight", "ts", "op", "_")
_OP_WORDS = {"add", "+", "delete", "del", "-", "add_vertex", "delete_vertex", "del_vertex", "add_edge",
             "delete_edge", "del_edge", "insert"}
_NUMBER = re.compile(rb"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*$")
_COMMENT = re.compile(rb"(?m)^[ \t]*[#%][^\n]*")
_WS = np.zeros(256, dtype=bool)
_WS[list(b" \t\r\n\f\v")] = True


@dataclass
class ConvertReport:
    """What ``convert`` read and wrote (``lines()`` is what the CLI prints)."""
    input: str
    output: str
    format: str
    rows: int                                  # events written
    has_ts: bool
    rejected: int = 0                          # rows sent to the dead-letter file
    dead: pa.Table | None = None
    dead_letter_path: str | None = None
    layout: str = ""                           # e.g. "comma-separated, header 'source,target'"
    columns: list = field(default_factory=list)   # meaning of each input field
    time_unit: str | None = None
    ts_range: tuple | None = None              # (first, last) as datetimes
    unsorted_why: str | None = None            # why the rows were not sorted by time
    moved: int = 0                             # rows reordered by the time sort
    ops: dict = field(default_factory=dict)    # op name -> events
    position: str = "line"                     # what a dead letter's position is: "line" (from 1) or "row" (from 0)
    late: int = 0                              # rows with a ts before an earlier row's, as read (and written unsorted)
    ts_read: str | None = None                 # how the times were read ("ts read as seconds (--time-unit s)", ...)

    def lines(self) -> list[str]:
        cols = ", ".join(self.columns) if self.columns else "-"
        out = [f"read {self.input} as {self.format}" + (f" ({self.layout})" if self.layout else "")
               + f": columns {cols}"]
        if self.ts_range is not None:
            first, last = (t.strftime("%Y-%m-%d %H:%M:%S") for t in self.ts_range)
            unit = self.ts_read or "ts (milliseconds)"
            if self.unsorted_why:           # the log as read: in time order, or how many rows are not
                late = f"{self.late:,} row{'s' if self.late > 1 else ''}"
                order = f"; not sorted by ts ({self.unsorted_why}): " + (
                    f"{late} out of time order (a ts before an earlier row's)" if self.late else "in time order")
            else:
                order = f"; sorted by ts, {self.moved:,} rows moved" if self.moved else "; already in time order"
            out.append(f"{unit}: {first} .. {last}{order}")
        ops = ", ".join(f"{n:,} {name}" for name, n in self.ops.items())
        rejected = f"{self.rejected:,} row{'s' if self.rejected > 1 else ''} rejected"
        out.append(f"wrote {self.output}: {self.rows:,} events ({ops or 'none'})"
                   + (f"; {rejected} ({_POSITION_WORDS[self.position]}) -> {self.dead_letter_path}" if self.rejected
                      else "; no rows rejected"))
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


#: what a dead letter's position is, as the report says it
_POSITION_WORDS = {"line": "position: line number, from 1", "row": "position: row, from 0"}


# -- reading bytes -------------------------------------------------------------------------------
#: compressed inputs by their magic bytes: gzip, bzip2 and xz are read as they are (Python's own modules)
_OPENERS = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))
_UNREADABLE = ((b"\x28\xb5\x2f\xfd", "zstd-compressed", "zstd -d"), (b"PK\x03\x04", "a zip archive", "unzip"),
               (b"\x04\x22\x4d\x18", "lz4-compressed", "lz4 -d"))


def _opener(path: Path):
    """How to read ``path``'s text: plain, or decompressed by its magic bytes (one line for a compression Python
    cannot read, which was read as text: "column '\ufffd' has no known meaning")."""
    with open(path, "rb") as fh:
        head = fh.read(6)
    for magic, opener in _OPENERS:
        if head.startswith(magic):
            return opener
    for magic, name, command in _UNREADABLE:
        if head.startswith(magic):
            raise InputError(f"{path} is {name}, which convert does not read (gzip, bzip2 and xz it "
                             f"does): decompress it first ({command} {path})")
    return open


def _unpack(path: Path, into: Path) -> None:
    """``path``, compressed (:func:`_opener`), unpacked into the file ``into`` a MiB at a time: a compressed Parquet
    file, which pyarrow reads from its footer, so not as a stream."""
    try:
        with _opener(path)(path, "rb") as fh, open(into, "wb") as out:
            shutil.copyfileobj(fh, out, 1 << 20)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            raise                   # the disk's (no space left writing the copy): the CLI names it
        raise InputError(f"{path}: cannot read ({exc})") from None     # corrupt data


def _read_bytes(path: str | Path, limit: int = -1) -> bytes:
    """The file's bytes (its first ``limit`` only, when given), decompressed when it is gzip, bzip2 or xz (by its
    magic bytes), without a UTF-8 byte-order mark (spreadsheets write one before a CSV's header)."""
    path = Path(path)
    opener = _opener(path)
    try:
        with opener(path, "rb") as fh:
            data = fh.read(limit)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None
    return data.removeprefix(b"\xef\xbb\xbf")


#: the first bytes of a file that its format is told from
SNIFF_BYTES = 1 << 20


def has_data_line(path: str | Path, sniff_bytes: int = SNIFF_BYTES) -> bool:
    """Whether ``path``, read as :func:`convert` reads it, has a line that is not blank or a comment: decided on
    its first ``sniff_bytes`` (a longer file counts as having one; its reader judges the rest)."""
    data = _read_bytes(path, sniff_bytes + 1)
    return len(data) > sniff_bytes or bool(_blank_comments(data).strip())


def check_head(path: str | Path) -> None:
    """Raise :class:`InputError` for a file whose first bytes cannot start the format :func:`convert` would read it
    as: binary data (:func:`_refuse_binary`; e.g. WebGraph's compressed ``.graph``, which is no METIS file), or a
    METIS file whose header line is no header.  A cheap look ahead, for commands that read several files and should
    refuse a bad one before spending minutes on the others (``bench --real``); :func:`convert` checks the rest."""
    data = _read_bytes(path, SNIFF_BYTES)
    if data[:4] == b"PAR1":
        return
    metis = detect_format(path, data) == "metis"
    _refuse_binary(data, str(path), f"{path} (its first line)", metis=metis)
    if metis:
        lines = _first_lines(data, 1)
        if lines:
            _metis_header(lines[0].decode("utf-8", "replace").split(), f"{path} (its first line)")


def _refuse_binary(data: bytes, where: str, where_line: str, *, metis: bool = False) -> None:
    """Raise :class:`InputError` where ``data``, a file's first bytes, are binary data, not text: a NUL byte in
    them, or a first line (comments aside) with bytes that are no printable UTF-8.  The one test of it, which
    :func:`check_head` and :func:`convert` each run once, on a file's head before reading it; ``where`` names the
    file and ``where_line`` its first line, and a file read as METIS (``metis``) is told that a WebGraph
    ``.graph`` is binary."""
    if b"\x00" in data:
        raise InputError(f"{where}: binary data, not a text edge list (NUL bytes in its first {len(data):,} bytes)")
    lines = _first_lines(data, 1)
    if not lines or all("\ufffd" not in t and t.isprintable() for t in lines[0].decode("utf-8", "replace").split()):
        return
    if metis:
        # a binary file named .graph (LAW's WebGraph BVGraph, beside its .properties): its bytes, quoted, said nothing
        raise InputError(f"{where_line}: binary bytes where a METIS header 'vertices edges [fmt [ncon]]' belongs: not "
                         "a METIS text file (a WebGraph .graph is binary: convert an edge list of it instead)")
    raise InputError(f"{where_line}: binary data, not a text edge list (bytes that are no UTF-8 text)")


def _stem(path: str | Path) -> str:
    name = Path(path).name.lower()
    for suffix in (".gz", ".bz2", ".xz"):
        name = name.removesuffix(suffix)
    return name


def _blank_comments(data: bytes) -> bytes:
    """Comment lines emptied in place (line numbers stay the file's)."""
    return _COMMENT.sub(b"", data)


def _first_lines(data: bytes, n: int = 5) -> list[bytes]:
    body = _blank_comments(data[:65536])
    return [ln.strip() for ln in body.splitlines() if ln.strip()][:n]


def detect_format(path: str | Path, data: bytes | None = None) -> str:
    """The format of ``path`` by extension, then by content (see the module docstring)."""
    stem = _stem(path)
    with open(path, "rb") as fh:
        if fh.read(4) == b"PAR1":
            return "parquet"
    for suffix, fmt in ((".mtx", "mtx"), (".graph", "metis"), (".metis", "metis"), (".jsonl", "json"),
                        (".ndjson", "json"), (".json", "json"), (".parquet", "parquet"), (".tsv", "tsv"),
                        (".csv", "csv")):
        if stem.endswith(suffix):
            return fmt
    data = _read_bytes(path) if data is None else data
    if data[:4] == b"PAR1":                        # a compressed Parquet file (gzip, bzip2, xz) whatever its name
        return "parquet"
    if data.lstrip()[:14].lower() == b"%%matrixmarket":
        return "mtx"
    lines = _first_lines(data)
    if lines and lines[0].startswith(b"{"):
        return "json"
    if lines and b"," in lines[0]:
        return "csv"
    return "snap"


# -- splitting text into fields (NumPy over the whole buffer) -------------------------------------
def _split_delimited(data: bytes, delim: bytes) -> tuple[pa.Array, np.ndarray]:
    """Every field of every line (trimmed text) and its 0-based line number; one delimiter byte.

    Standard CSV quoting, as spreadsheets and ``csv`` / pandas writers quote (all fields, or only the text ones):
    a field in double quotes is its text without them, a doubled quote in it is one quote, and a delimiter
    between quotes is text, not a separator (``"1,5"`` is one field, an id that is no integer).  A quoted field
    never runs on past its line: lines are the records (a line with an unclosed quote keeps the rest of the line
    in its last field, and its fields then do not fit: its own dead letter, never its neighbours')."""
    if not data.endswith(b"\n"):
        data += b"\n"
    buf = np.frombuffer(data, dtype=np.uint8)
    is_nl = buf == 10
    is_sep = buf == delim[0]
    quoted = b'"' in data
    if quoted:
        # inside quotes where an odd number of quotes precede the byte on its line: a running count mod 2 (uint8
        # wraps at 256, which keeps the parity) that each newline brings back to even by adding its line's count
        q = (buf == 34).view(np.uint8)
        nl_at = np.flatnonzero(is_nl)
        per_line = np.add.reduceat(q, np.concatenate([[0], nl_at[:-1] + 1]), dtype=np.uint8)
        q = q.copy()
        q[nl_at] = per_line & 1                     # a newline is no quote: its slot carries the correction
        is_sep &= (np.cumsum(q, dtype=np.uint8) & 1) == 0
    ends = np.flatnonzero(is_nl | is_sep)
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64)
    line = np.cumsum(is_nl)[ends] - is_nl[ends]
    offsets = np.concatenate([starts, [len(buf)]]).astype(np.int64)
    raw = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(starts), [None, pa.py_buffer(offsets),
                                                                             pa.py_buffer(data)])
    fields = pc.binary_slice(raw, 0, -1)                      # drop each field's separator
    text, _ = cast_or_null(fields, pa.large_string())   # invalid UTF-8: null, then rejected as an id
    text = pc.utf8_trim_whitespace(pc.fill_null(text, "\ufffd"))
    if quoted:                                          # "1","2" as 1,2 (the header's too); "" inside as "
        inner = pc.replace_substring(pc.utf8_slice_codeunits(text, 1, -1), '""', '"')
        text = pc.if_else(pc.match_substring_regex(text, r'^".*"$'), inner, text)
    return text.cast(pa.string()), line


def _split_blanks(data: bytes) -> tuple[pa.Array, np.ndarray]:
    """Every blank-separated token and its 0-based line number (runs of blanks/tabs are one separator)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    if not len(buf):
        return pa.array([], pa.string()), np.zeros(0, np.int64)
    ws = _WS[buf]
    start = ~ws & np.concatenate([[True], ws[:-1]])
    end = ~ws & np.concatenate([ws[1:], [True]])
    s_idx = np.flatnonzero(start)
    e_idx = np.flatnonzero(end) + 1
    line = np.searchsorted(np.flatnonzero(buf == 10), s_idx)
    # gather the tokens into one contiguous buffer: token bytes, no separators
    lengths = e_idx - s_idx
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    delta = np.zeros(len(buf) + 1, dtype=np.int8)
    delta[s_idx] = 1                      # token starts and ends are distinct positions
    delta[e_idx] = -1
    packed = buf[np.cumsum(delta[:-1], dtype=np.int64).astype(bool)]
    tokens = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(s_idx), [None, pa.py_buffer(offsets),
                                                                              pa.py_buffer(packed.tobytes())])
    text, _ = cast_or_null(tokens, pa.large_string())
    return pc.fill_null(text, "\ufffd").cast(pa.string()), line


def _is_number(text: str) -> bool:
    return bool(_NUMBER.match(text.encode()))


def _meanings(names: list[str], where: str) -> list[str]:
    out = []
    for name in names:
        key = re.sub(r"[\s\-]+", "_", name.strip().strip('"').lower())
        if key not in COLUMN_NAMES:
            raise InputError(f"{where}: column {name!r} has no known meaning; name the columns with "
                             f"--columns (each one of {', '.join(_MEANINGS)}; _ skips a column)")
        out.append(COLUMN_NAMES[key])
    real = [m for m in out if m != "_"]
    dup = sorted({m for m in real if real.count(m) > 1})
    if dup:
        raise InputError(f"{where}: columns {', '.join(names)} give {', '.join(dup)} twice")
    if "src" not in out or ("dst" not in out and "op" not in out):
        raise InputError(f"{where}: columns {', '.join(names)} lack src and dst (an edge needs both)")
    return out


def parse_columns(text: str | None) -> list[str] | None:
    """``--columns src,dst,ts`` -> meanings, validated (InputError names what is valid)."""
    if text is None:
        return None
    names = [c.strip() for c in str(text).split(",")]
    if any(not n for n in names):
        raise InputError(f"--columns {text!r}: empty column name (use _ to skip a field)")
    return _meanings(names, f"--columns {text}")


def _field_counts(line: np.ndarray, data: bytes, first: int, source: str, meaning, fewest: int):
    """(whether each line of the piece has from ``fewest`` to ``len(meaning)`` fields, by line; the dead letters of
    the lines that do not, malformed, naming the count found).  ``line`` is each field's line in the piece, whose
    first line is the file's line ``first``."""
    k = len(meaning)
    counts = np.bincount(line) if len(line) else np.zeros(0, np.int64)
    present = np.flatnonzero(counts)
    ok_line = (counts >= fewest) & (counts <= k)
    bad_lines = present[~ok_line[present]]
    dead = []
    if len(bad_lines):
        expected = f"{k}" if fewest == k else f"{fewest} to {k}"
        dead.append(dead_letters(source=source, partition=None, positions=bad_lines + first,
                                 reasons=["malformed"] * len(bad_lines),
                                 details=[f"expected {expected} fields ({','.join(meaning)}), found {c}"
                                          for c in counts[bad_lines]],
                                 payloads=_lines_text(data, bad_lines)))
    return ok_line, dead


def _lines_text(data: bytes, lines: np.ndarray) -> list[str]:
    """The text of the given 0-based lines (dead-letter payloads; only rejected rows come here)."""
    if not len(lines):
        return []
    all_lines = data.split(b"\n")
    return [all_lines[i].decode("utf-8", "replace").rstrip("\r") if i < len(all_lines) else "" for i in lines]


#: a time that is a number (of the unit), not ISO 8601 text
_TIME_NUMBER = r"^\s*[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|nan|inf|infinity)\s*$"


# -- times ----------------------------------------------------------------------------------------
def _times_to_ms(col: pa.Array, unit: str, where: str,
                 times: dict | None = None) -> tuple[pa.Array, np.ndarray, list[str]]:
    """Times -> (int64 ms, null where missing or bad; the bad rows' mask; their details), row by row.

    ``times`` (a dict) counts the times read as numbers of ``unit`` (``"number"``), as ISO 8601 text (``"iso"``)
    and as typed timestamps or dates (``"typed"``): the report names the unit only where it was used.

    A number counts ``unit``; text is an ISO 8601 time (a column may hold both: each row is read as what it
    is).  A row is bad when it is neither, not finite, or after the year 2200 or before 1740 (``MAX_TS_MS``, the
    validation's bound).  When most of the numeric times land after 2200 the unit is wrong, not the rows: that
    refuses the file with the unit that fits."""
    n = len(col)
    null = np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    ms = np.zeros(n, dtype=np.float64)
    numeric = np.ones(n, dtype=bool)
    text_bad = np.zeros(n, dtype=bool)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        null |= np.asarray(pc.fill_null(pc.equal(pc.utf8_length(col), 0), False).to_numpy(zero_copy_only=False),
                           dtype=bool)
        numeric = np.asarray(pc.fill_null(pc.match_substring_regex(col, _TIME_NUMBER, ignore_case=True),
                                          False).to_numpy(zero_copy_only=False), dtype=bool) & ~null
        text = np.flatnonzero(~numeric & ~null)
        if len(text):                                        # ISO 8601 text, parsed as validate parses it
            iso_ms, _, iso_bad = parse_ts(col.take(pa.array(text)), len(text))
            ms[text], text_bad[text] = iso_ms, iso_bad
        values, _ = cast_or_null(pc.if_else(pa.array(numeric), col, pa.scalar(None, pa.string())), pa.float64())
    elif pa.types.is_timestamp(col.type) or pa.types.is_date(col.type):
        if times is not None:
            times["typed"] = times.get("typed", 0) + n - int(null.sum())
        return col, np.zeros(n, bool), []
    else:
        values = pc.cast(col, pa.float64())
    if times is not None:
        times["number"] = times.get("number", 0) + int((numeric & ~null).sum())
        times["iso"] = times.get("iso", 0) + int((~numeric & ~null).sum())
    f = np.asarray(pc.fill_null(values, np.nan).to_numpy(zero_copy_only=False), dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = f * TIME_UNITS[unit]
    not_finite = numeric & ~null & ~np.isfinite(scaled)
    ms = np.where(numeric & ~not_finite & ~null, scaled, ms)
    big = numeric & ~null & ~not_finite & (np.abs(ms) > MAX_TS_MS)
    counted = int((numeric & ~null & ~not_finite).sum())
    if big.any() and 2 * int(big.sum()) > counted:
        worst = float(np.median(np.abs(ms[big])))
        hint = next((u for u, scale in TIME_UNITS.items() if scale < TIME_UNITS[unit]
                     and worst / TIME_UNITS[unit] * scale <= MAX_TS_MS), None)
        year = 1970 + worst / 1000 / 86400 / 365.25
        raise InputError(f"{where}: ts read as {_UNIT_WORDS[unit]} reach the year {year:,.0f} in {int(big.sum()):,} "
                         f"of {counted:,} rows" + (f"; the column is probably in {_UNIT_WORDS[hint]}: pass "
                                                   f"--time-unit {hint}" if hint
                                                   else "; is it a time at all? (--columns names it)"))
    bad = not_finite | big | text_bad
    # the bound is the validation's, both ways: a time before 1740 was said to be "after the year 2200", and an
    # ISO time before 1740 "not an ISO 8601 time" (parse_ts refuses both without saying which)
    details = np.where(text_bad, "ts is not an ISO 8601 time between the years 1740 and 2200, nor a number",
                       np.where(big & (ms > 0), f"ts read as {_UNIT_WORDS[unit]} is after the year 2200",
                                np.where(big, f"ts read as {_UNIT_WORDS[unit]} is before the year 1740",
                                         "ts is not a finite number")))[bad].tolist()
    rounded = np.round(np.where(bad | null, 0.0, ms)).astype(np.int64)
    return pa.array(rounded, pa.int64(), mask=null | bad), bad, details


# -- building the event table --------------------------------------------------------------------
def _table_from_fields(fields: dict[str, pa.Array], n: int) -> pa.Table:
    cols = {"op": fields.get("op", pa.array(np.full(n, int(Op.ADD_EDGE), np.int8)))}
    for name in ("src", "dst", "weight", "ts"):
        if name in fields:
            cols[name] = fields[name]
    return pa.table(cols)


def _validated(table: pa.Table, *, source: str, positions: np.ndarray, raw, time_unit: str,
               where: str, times: dict | None = None) -> tuple[pa.Table, list]:
    """Times converted to ms, then every row through validate_table: (events, dead-letter tables).

    A time that is not a finite number or an ISO 8601 time, or after 2200, is ``bad_timestamp`` (never the
    minimum time)."""
    if raw is None:
        def raw(idx, _t=table):
            return [json.dumps(r, default=str) for r in _t.take(pa.array(idx, pa.int64())).to_pylist()]
    dead = []
    if "ts" in table.column_names:
        ts, ts_bad, ts_details = _times_to_ms(table.column("ts").combine_chunks(), time_unit, where, times)
        table = table.set_column(table.column_names.index("ts"), "ts", ts)
        if ts_bad.any():
            idx = np.flatnonzero(ts_bad)
            dead.append(dead_letters(source=source, partition=None, positions=positions[idx],
                                     reasons=["bad_timestamp"] * len(idx),
                                     details=ts_details, payloads=raw(idx)))
            kept = np.flatnonzero(~ts_bad)
            table, positions = table.filter(pa.array(~ts_bad)), positions[kept]
            outer = raw
            raw = lambda idx: outer(kept[idx])
    events, bad = validate_table(table, source=source, positions=positions, raw=raw)
    return events, [*dead, bad]


def _looks_like_events(data: bytes, delim: bytes | None) -> bool:
    """The event CSV format: a header starting with ``op``, or a first field that is an op name."""
    lines = _first_lines(data, 1)
    if not lines:
        return False
    if delim:               # as the reader splits it: '"op","src"' starts with op (its quotes were not dropped)
        first = _split_delimited(lines[0], delim)[0][0].as_py().lower()
    else:
        first = lines[0].split()[0].decode("utf-8", "replace").lower()
    return first == "op" or first in _OP_WORDS


#: delimited text is parsed a piece of about this many bytes at a time (cut after a newline): the parse's arrays
#: cost about 25 bytes a byte of text, so a file read whole needed 26x its size (a 124 MB SNAP temporal log of
#: 5M lines: 3.25 GB peak, 21.4 s on this project's 2-core machine; a 1 GB log would not fit its 24 GiB).  In
#: pieces of 8 MiB: 0.73 GB, 15.9 s (4 MiB: 0.59 GB, 17.9 s; 32 MiB: 1.49 GB, 20.4 s), the same table
PIECE_BYTES = 8 << 20


def _pieces(data: bytes, size: int):
    """(piece, number of its first line) of consecutive pieces of ``data``, each cut after a newline and about
    ``size`` bytes long (the last one what is left)."""
    start, line = 0, 0
    while start < len(data):
        end = data.find(b"\n", start + size)
        end = len(data) if end < 0 else end + 1
        yield data[start:end], line
        line += data.count(b"\n", start, end)
        start = end


def _file_pieces(path: str | Path, size: int):
    """:func:`_pieces` of a file read as it goes (decompressed as :func:`_opener` says, without a UTF-8
    byte-order mark):
    about ``size`` bytes of it in memory at a time, whatever its length."""
    path = Path(path)
    opener = _opener(path)
    try:
        with opener(path, "rb") as fh:
            held, line = fh.read(max(size, 3)).removeprefix(b"\xef\xbb\xbf"), 0
            while True:
                more = fh.read(size) if held else b""
                end = held.rfind(b"\n") + 1
                if not more:                             # the end of the file: what is held, in pieces
                    for piece, first in _pieces(held, size):
                        yield piece, line + first
                    return
                if end:
                    piece, held = held[:end], held[end:] + more
                    yield piece, line
                    line += piece.count(b"\n")
                else:                                    # no newline yet: a line longer than a piece
                    held += more
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None


def _delimited(pieces, *, delim: bytes | None, columns: list[str] | None, source: str, time_unit: str,
               columns_from: str = "--columns", event_lines: bool = False, times: dict | None = None):
    """CSV / TSV / SNAP text, given as its :func:`_pieces`, -> (events, dead tables, layout, column meanings)
    a piece at a time: the first piece with text decides the header and the columns' meanings, the others are
    read with them.  Yields nothing for a file of blank lines and comments.  ``event_lines``: the lines are event
    lines (:func:`_event_piece`), in any of these separators."""
    sep_name = _SEPARATOR_NAMES[delim]
    layout, meaning = None, None
    for piece, first in pieces:
        if event_lines:
            got = _event_piece(piece, first, delim=delim, meaning=meaning, source=source, sep_name=sep_name,
                               times=times)
        else:
            got = _delimited_piece(piece, first, delim=delim, columns=columns if meaning is None else meaning,
                                   header_here=meaning is None, source=source, time_unit=time_unit,
                                   times=times, sep_name=sep_name, columns_from=columns_from)
        if got is None:                              # blank lines and comments only
            continue
        events, dead, piece_layout, piece_meaning = got
        if meaning is None:
            layout, meaning = piece_layout, piece_meaning
        yield events, dead, layout, meaning


_SEPARATOR_NAMES = {None: "blank/tab-separated", b",": "comma-separated", b"\t": "tab-separated"}
#: the delimited formats' separators (None: runs of blanks or tabs)
_DELIMITERS = {"snap": None, "csv": b",", "tsv": b"\t"}
#: the columns of event lines without a header, in order (a line may stop after src: a vertex op needs no more)
EVENT_FIELDS = ("op", "src", "dst", "weight", "ts")


def _fields(body: bytes, delim: bytes | None) -> tuple[pa.Array, np.ndarray]:
    """The fields of the lines of ``body`` (comments blanked) and their 0-based line numbers, blank lines left
    out (in delimited text a line of one empty field is a blank line)."""
    text, line = _split_blanks(body) if delim is None else _split_delimited(body, delim)
    if delim is not None and len(line):
        counts_all = np.bincount(line)
        empty = ~np.asarray(pc.not_equal(pc.utf8_length(text), 0).to_numpy(zero_copy_only=False), bool)
        blank_line = (counts_all == 1) & (np.bincount(line, weights=empty, minlength=len(counts_all)) == 1)
        keep = ~blank_line[line]
        text, line = text.filter(pa.array(keep)), line[keep]
    return text, line


def _event_piece(data: bytes, first: int, *, delim: bytes | None, meaning: list[str] | None, source: str,
                 sep_name: str, times: dict | None = None):
    """One piece of event lines (``op,src,dst[,weight[,ts]]`` in any separator of :data:`_DELIMITERS`) whose first
    line is line ``first`` of the file: (events, dead tables, layout, meanings), or None when it holds no field.

    ``meaning`` None: this piece may start with the header, a first line whose first field is ``op`` (quoted or
    not); its names say what each field is (``op,src,dst,ts`` has no weight: its fourth field is the time).
    Without a header the fields are :data:`EVENT_FIELDS` in order.  A line may stop after src (a vertex op needs
    no more); fewer than two fields, or more than the columns, is its own dead letter.  Times are the event
    format's: a number counts milliseconds, or ISO 8601 text (``--time-unit`` is for edge lists); ``times`` counts
    them as :func:`_times_to_ms` does."""
    text, line = _fields(_blank_comments(data), delim)
    if not len(text):
        return None
    layout = None
    if meaning is None:
        first_line = line[0]
        head = text.filter(pa.array(line == first_line)).to_pylist()
        if head[0].lower() == "op":
            meaning = _meanings(head, f"{source} header")
            layout = f"{sep_name} event lines, header {','.join(head)!r}"
            keep = line != first_line
            text, line = text.filter(pa.array(keep)), line[keep]
        else:
            meaning, layout = list(EVENT_FIELDS), f"{sep_name} event lines, no header"
    ok_line, dead = _field_counts(line, data, first, source, meaning, fewest=2)
    good = ok_line[line]
    text, line = text.filter(pa.array(good)), line[good]
    opens = np.concatenate([[True], line[1:] != line[:-1]]) if len(line) else np.zeros(0, bool)
    row_lines, row_start = line[opens], np.flatnonzero(opens)
    row = np.cumsum(opens) - 1                          # the row (line) of each field
    within = np.arange(len(line)) - row_start[row]      # and its place on the line
    n = len(row_lines)
    fields = {}
    for j, name in enumerate(meaning):                   # a loop over columns, never over rows
        if name == "_":
            continue
        at = np.flatnonzero(within == j)
        idx, has = np.zeros(n, np.int64), np.zeros(n, bool)
        idx[row[at]], has[row[at]] = at, True
        col = text.take(pa.array(idx, mask=~has))        # null where a line stops before this column
        fields[name] = pc.if_else(pc.equal(pc.utf8_length(col), 0), pa.scalar(None, pa.string()), col)
    if times is not None and "ts" in fields:
        given = np.asarray(fields["ts"].is_valid().to_numpy(zero_copy_only=False), bool)
        number = given & np.asarray(pc.fill_null(pc.match_substring_regex(fields["ts"], _TIME_NUMBER, ignore_case=True),
                                                 False).to_numpy(zero_copy_only=False), bool)
        times["number"] = times.get("number", 0) + int(number.sum())
        times["iso"] = times.get("iso", 0) + int((given & ~number).sum())
    events, bad = validate_table(_table_from_fields(fields, n), source=source, positions=row_lines + first,
                                 raw=lambda idx: _lines_text(data, row_lines[idx]))
    return events, [*dead, bad], layout, meaning


def _delimited_piece(data: bytes, first: int, *, delim: bytes | None, columns: list[str] | None, header_here: bool,
                     source: str, time_unit: str, sep_name: str, columns_from: str = "--columns",
                     times: dict | None = None):
    """One piece of :func:`_delimited`, whose first line is line ``first`` of the file: (events, dead tables,
    layout, meanings), or None when it holds no field.  ``header_here``: the piece may start with the header."""
    text, line = _fields(_blank_comments(data), delim)
    if not len(text):
        return None
    if header_here:
        first_line = line[0]
        head = text.filter(pa.array(line == first_line)).to_pylist()
        header = not all(_is_number(f) for f in head)
    else:
        header = False
    if header:
        names = head
        if columns is not None and len(columns) != len(names):
            raise InputError(f"{columns_from} names {len(columns)} columns, the {sep_name} header of {source} has "
                             f"{len(names)}")
        meaning = columns if columns is not None else _meanings(names, f"{source} header")
        layout = f"{sep_name}, header {','.join(names)!r}"
        keep = line != first_line
        text, line = text.filter(pa.array(keep)), line[keep]
    elif header_here:
        k = len(head)
        if columns is not None:
            meaning = columns
        elif k == 2:
            meaning = ["src", "dst"]
        else:
            raise InputError(f"{source}: {k} fields per line and no header: say what they are with --columns "
                             "(src,dst,ts | src,dst,weight | src,dst,weight,ts; _ skips a field), e.g. "
                             f"--columns {','.join(['src', 'dst', 'ts', 'weight', '_', '_', '_', '_'][:k])}"
                             + (" --time-unit s|ms|us" if k >= 3 else ""))
        layout = f"{sep_name}, no header"
    else:
        meaning, layout = columns, None
    k = len(meaning)
    ok_line, dead = _field_counts(line, data, first, source, meaning, fewest=k)
    good = ok_line[line]
    text, line = text.filter(pa.array(good)), line[good]
    row_lines = line[::k]                              # every kept line has exactly k fields, in order
    n = len(row_lines)
    within = np.tile(np.arange(k), n)
    fields = {}
    for j, name in enumerate(meaning):
        if name == "_":
            continue
        col = text.filter(pa.array(within == j))
        fields[name] = pc.if_else(pc.equal(pc.utf8_length(col), 0), pa.scalar(None, pa.string()), col)
    table = _table_from_fields(fields, n)
    events, more = _validated(table, source=source, positions=row_lines.astype(np.int64) + first,
                              raw=lambda idx: _lines_text(data, row_lines[idx]), time_unit=time_unit,
                              times=times, where=source)
    return events, dead + more, layout, meaning


def _json_lines(data: bytes, *, source: str, time_unit: str,
                times: dict | None = None) -> tuple[pa.Table, list, str, list]:
    """JSON lines: one object per line; keys mapped by COLUMN_NAMES; unparsable lines are dead letters."""
    lines = data.split(b"\n")
    keep = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith((b"#", b"//"))]
    if not keep:                                 # blank lines and comments only: no event, as an empty edge list
        return EVENT_SCHEMA.empty_table(), [], "JSON lines, empty", []
    try:
        table = pjson.read_json(io.BytesIO(b"\n".join(lines[i] for i in keep)),
                                read_options=pjson.ReadOptions(block_size=1 << 24))
        positions = np.asarray(keep, np.int64)
        dead: list = []
    except pa.ArrowInvalid:                     # a malformed line: parse line by line (only on bad files)
        rows, good, bad = [], [], []
        for i in keep:
            try:
                obj = json.loads(lines[i])
                if not isinstance(obj, dict):
                    raise ValueError("not an object")
                rows.append({k: (v if not isinstance(v, (dict, list)) else json.dumps(v)) for k, v in obj.items()})
                good.append(i)
            except ValueError:
                bad.append(i)
        # every key of any line is a column (one malformed line made the first good line's keys the only ones)
        table = table_of_rows([{k: None if v is None else str(v) for k, v in r.items()} for r in rows], pa.string())
        positions = np.asarray(good, np.int64)
        dead = [dead_letters(source=source, partition=None, positions=np.asarray(bad, np.int64),
                             reasons=["malformed"] * len(bad), details=["not a JSON object"] * len(bad),
                             payloads=_lines_text(data, np.asarray(bad)))] if bad else []
    names = table.column_names
    meaning = {}
    ignored = []
    for name in names:
        key = re.sub(r"[\s\-]+", "_", name.strip().lower())
        m = COLUMN_NAMES.get(key)
        if m is None or m == "_" or m in meaning.values():
            ignored.append(name)
        else:
            meaning[name] = m
    if "src" not in meaning.values() or ("dst" not in meaning.values() and "op" not in meaning.values()):
        raise InputError(f"{source}: JSON keys {', '.join(names) or '(none)'} lack a source and a target "
                         "(src/source/from and dst/target/to)")
    fields = {m: table.column(name).combine_chunks() for name, m in meaning.items()}
    table = _table_from_fields(fields, table.num_rows)
    events, more = _validated(table, source=source, positions=positions,
                              raw=lambda idx: _lines_text(data, positions[idx]), time_unit=time_unit,
                              times=times, where=source)
    layout = "JSON lines" + (f", ignored keys {', '.join(ignored)}" if ignored else "")
    return events, dead + more, layout, [f"{k}={v}" for k, v in meaning.items()]


def _parquet_pieces(path, *, columns: list[str] | None, source: str, time_unit: str, times: dict | None = None):
    """A Parquet edge table or event log -> (layout, column meanings, its (events, dead tables) a record batch of
    :data:`ROW_GROUP_SIZE` rows at a time)."""
    try:
        parquet = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"{source}: not a readable Parquet file ({exc})") from None
    names = parquet.schema_arrow.names
    if columns is not None:
        if len(columns) != len(names):
            raise InputError(f"--columns names {len(columns)} columns, {source} has {len(names)} "
                             f"({', '.join(names)})")
        meaning = columns
    else:
        meaning = _meanings(names, f"{source} columns")

    def pieces():
        offset, batches = 0, parquet.iter_batches(batch_size=ROW_GROUP_SIZE)
        while True:
            try:
                batch = next(batches, None)
            except (OSError, pa.ArrowException) as exc:
                raise InputError(f"{source}: cannot read row {offset:,} on ({exc})") from None
            if batch is None:
                return
            fields = {m: batch.column(n) for n, m in zip(names, meaning) if m != "_"}
            positions = np.arange(offset, offset + batch.num_rows, dtype=np.int64)
            yield _validated(_table_from_fields(fields, batch.num_rows), source=source, positions=positions,
                             raw=None, time_unit=time_unit, times=times, where=source)
            offset += batch.num_rows

    kind = "event log" if "op" in meaning else "edge table"
    return f"Parquet {kind}", [f"{n}={m}" for n, m in zip(names, meaning)], pieces()


# -- Matrix Market and METIS ----------------------------------------------------------------------
def _events(src, dst, weight=None, ts_ms=None, op=None) -> pa.Table:
    n = len(src)
    op = np.full(n, int(Op.ADD_EDGE), dtype=np.int8) if op is None else np.asarray(op, np.int8)
    is_vertex = op >= int(Op.ADD_VERTEX)
    return pa.Table.from_arrays([
        pa.array(op),
        pa.array(np.asarray(src, dtype=np.int64)),
        pa.array(np.asarray(dst, dtype=np.int64), mask=is_vertex),
        pa.nulls(n, pa.float32()) if weight is None else
        pa.array(np.asarray(weight, dtype=np.float32), mask=is_vertex),
        pa.nulls(n, pa.timestamp("ms")) if ts_ms is None else pa.array(ts_ms, pa.timestamp("ms")),
    ], schema=EVENT_SCHEMA)


_COUNT = re.compile(r"\d+")


def _entries(data: bytes, source: str, fields: dict[str, pa.Array], lines: np.ndarray, ranges: dict[str, tuple],
             declared: str, first: int = 0):
    """Rows of a file whose header declares its vertices (Matrix Market, METIS): ``fields`` (name -> a column
    of text or ids, one row per entry, from 0-based line ``lines``) through validate_table, then every id checked
    against the range that ``declared`` (the header) gives it (``ranges``: name -> (high, what)).  Returns the
    valid rows' src, dst and weight (or None) as arrays, the dead-letter tables, and the valid rows' lines (in
    ``data``).  An entry's outcome is its own; its line (``first`` + its line in ``data``, a piece of the file)
    is its position."""
    n = len(lines)
    table = _table_from_fields(fields, n)
    events, bad, rows = validate_table(table, source=source, positions=lines + first,
                                       raw=lambda idx: _lines_text(data, lines[idx]), return_rows=True)
    src = events.column("src").to_numpy()
    dst = events.column("dst").to_numpy()
    outside = np.zeros(len(rows), dtype=bool)
    details = np.full(len(rows), "", dtype=object)
    for name, (high, what) in ranges.items():
        ids = src if name == "src" else dst
        out = ~outside & ((ids < 1) | (ids > high))
        details[out] = [f"{what} {i} outside 1..{high:,} ({declared})" for i in ids[out]]
        outside |= out
    dead = [bad]
    if outside.any():
        at = lines[rows[outside]]
        dead.append(dead_letters(source=source, partition=None, positions=at + first,
                                 reasons=["id_out_of_range"] * len(at), details=list(details[outside]),
                                 payloads=_lines_text(data, at)))
    keep = ~outside
    weight = None if "weight" not in fields else \
        events.column("weight").to_numpy(zero_copy_only=False).astype(np.float64)[keep]
    return src[keep], dst[keep], weight, dead, lines[rows[keep]]


def _malformed(data: bytes, source: str, lines: np.ndarray, details: list[str], first: int = 0) -> list:
    return [dead_letters(source=source, partition=None, positions=lines + first, reasons=["malformed"] * len(lines),
                         details=details, payloads=_lines_text(data, lines))] if len(lines) else []


def _mtx_pieces(head: bytes, pieces, source: str):
    """A Matrix Market coordinate file - its first bytes ``head`` (the banner) and its :func:`_file_pieces` - ->
    (events, dead-letter tables) per piece; symmetric ones in both directions (each entry next to its mirror).

    The banner and the size line ``rows columns entries`` are the file's: one that cannot be read refuses the
    file, and so does a number of entry lines other than the size line's (a file cut short; found at the end,
    so nothing is put in place).  Each entry line is a row with its own outcome: a wrong number of fields, an
    index that is no integer or lies outside the size line's 1..rows / 1..columns, or a value that is no finite
    number makes it a dead letter (with its line), and no mirror is made of it."""
    nl = head.find(b"\n")
    banner = head[:nl if nl >= 0 else len(head)].decode("ascii", "replace").split()
    if len(banner) < 5 or banner[0].lower() != "%%matrixmarket":
        raise InputError(f"{source}: not a Matrix Market file (banner {' '.join(banner)!r}; expected "
                         "'%%MatrixMarket matrix coordinate ...')")
    obj, layout, fld, symmetry = (b.lower() for b in banner[1:5])
    if obj != "matrix" or layout != "coordinate":
        raise InputError(f"{source}: Matrix Market {obj} {layout}: only 'matrix coordinate' is a graph")
    if fld not in ("pattern", "real", "integer", "double"):
        raise InputError(f"{source}: Matrix Market field {fld!r} not supported (pattern, real, integer)")
    k = 2 if fld == "pattern" else 3
    size, entry_lines = None, 0
    for piece, first in pieces:                                # as delimited text: a piece at a time
        tokens, line = _split_blanks(_blank_comments(piece))
        if size is None:
            if not len(tokens):
                continue
            size_line = line[0]
            size = tokens.filter(pa.array(line == size_line)).to_pylist()
            if len(size) != 3 or not all(_COUNT.fullmatch(v) for v in size):
                raise InputError(f"{source} line {first + size_line + 1}: size line {' '.join(size)!r} is not "
                                 "'rows columns entries' (three integers)")
            nrows, ncols, nnz = (int(v) for v in size)
            rest = line != size_line
            tokens, line = tokens.filter(pa.array(rest)), line[rest]
        counts = np.bincount(line) if len(line) else np.zeros(0, np.int64)
        present = np.flatnonzero(counts)
        entry_lines += len(present)
        wrong = present[counts[present] != k]
        dead = _malformed(piece, source, wrong, [f"expected {k} fields (row, column{', value' if k == 3 else ''}), "
                                                 f"found {c}" for c in counts[wrong]], first)
        good = counts[line] == k
        tokens, line = tokens.filter(pa.array(good)), line[good]
        within = np.arange(len(tokens)) % k
        fields = {"src": tokens.filter(pa.array(within == 0)), "dst": tokens.filter(pa.array(within == 1))}
        if k == 3:
            fields["weight"] = tokens.filter(pa.array(within == 2))
        i, j, w, more, _ = _entries(piece, source, fields, line[::k],
                                    {"src": (nrows, "row"), "dst": (ncols, "column")}, "the size line's", first)
        dead += more
        if symmetry in ("symmetric", "skew-symmetric", "hermitian"):
            off = i != j          # the diagonal once
            src = np.concatenate([i, j[off]])
            dst = np.concatenate([j, i[off]])
            order = np.argsort(np.concatenate([np.arange(len(i)) * 2, np.flatnonzero(off) * 2 + 1]), kind="stable")
            if w is not None:
                mw = -w[off] if symmetry == "skew-symmetric" else w[off]
                w = np.concatenate([w, mw])[order]
            i, j = src[order], dst[order]
        yield _events(i, j, w, None), dead
    if size is None:
        raise InputError(f"{source}: Matrix Market file without a size line")
    if entry_lines != nnz:
        raise InputError(f"{source}: Matrix Market size line says {nnz:,} entries, the file has {entry_lines:,} "
                         "entry lines")


def _metis_header(head: list[str], where: str) -> tuple[int, bool, bool, bool, int]:
    """(vertices, vertex sizes?, vertex weights?, edge weights?, weights per vertex) of a METIS header
    ``n m [fmt [ncon]]``."""
    ok = 2 <= len(head) <= 4 and all(_COUNT.fullmatch(h) for h in head[:2])
    fmt = head[2] if len(head) > 2 else "0"
    ok = ok and re.fullmatch(r"[01]{1,3}", fmt) is not None
    ok = ok and (len(head) < 4 or re.fullmatch(r"[1-9]\d*", head[3]) is not None)
    if not ok:
        raise InputError(f"{where}: METIS header {' '.join(head)!r} is not 'vertices edges [fmt [ncon]]' "
                         "(counts, fmt of up to three 0/1 digits, ncon >= 1)")
    has_size, has_vweight, has_eweight = (c == "1" for c in fmt.zfill(3))
    return int(head[0]), has_size, has_vweight, has_eweight, int(head[3]) if len(head) > 3 else 1


def _line_starts(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The byte offset where each line of ``data`` starts and where it ends (its newline, or the end of the data);
    a final newline ends the last line (no empty line after it)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == 10)
    if len(data) and data[-1:] != b"\n":
        ends = np.concatenate([ends, [len(data)]])
    return np.concatenate([[0], ends[:-1] + 1]).astype(np.int64), ends.astype(np.int64)


def _comment_lines(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which lines are comments (``%`` or ``#`` first, after blanks: :data:`_COMMENT`'s rule), vectorised: the first
    byte of each line that is no blank or tab."""
    buf = np.frombuffer(data, dtype=np.uint8)
    solid = np.flatnonzero((buf != 32) & (buf != 9))
    at = np.searchsorted(solid, starts)
    found = at < len(solid)
    first = solid[np.minimum(at, len(solid) - 1)] if len(solid) else np.zeros(len(starts), np.int64)
    found &= first < ends
    byte = buf[first] if len(buf) else np.zeros(len(starts), np.uint8)
    return found & ((byte == ord("%")) | (byte == ord("#")))


def _metis_asymmetric(src: np.ndarray, dst: np.ndarray, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Which entries (``src`` lists ``dst``) have no mirror (``dst`` listing ``src``) among the valid entries, and
    which have one of another weight: (no mirror, other weight), boolean masks.  Ids ranked densely first, so the
    pair keys fit int64 whatever the ids; one sort (``np.isin``, ``searchsorted``), no loop."""
    k = len(src)
    if not k:
        return np.zeros(0, bool), np.zeros(0, bool)
    uniq, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
    a, b, r = inv[:k].astype(np.int64), inv[k:].astype(np.int64), len(uniq)
    key, mirror = a * r + b, b * r + a
    lonely = ~np.isin(mirror, key)
    if w is None:
        return lonely, np.zeros(k, bool)
    order = np.argsort(key, kind="stable")
    at = order[np.minimum(np.searchsorted(key[order], mirror), k - 1)]
    return lonely, ~lonely & (w[at] != w)


def read_metis(data: bytes, source: str = "<metis>") -> tuple[pa.Table, list]:
    """METIS / Chaco adjacency file -> (events, dead-letter tables): 1-based ids; each stored edge as stored; a
    vertex without neighbours becomes an ``add_vertex`` event (in vertex order with the edges).

    The header ``n m [fmt [ncon]]`` is the file's, as METIS's own reader holds it: one that cannot be read refuses
    the file, and so do fewer vertex lines than its ``n`` vertices (a file cut short: each vertex has its line,
    an empty one without neighbours; comment lines are none), a line with fields after the ``n``-th, and
    neighbour entries other than ``2 m`` (each undirected edge is on both its vertices' lines; the entries are
    counted after ``fmt``'s vertex fields, and a line whose fields do not fit may hold anywhere from none to all
    of its fields).  A line whose fields do not fit the header's format is a dead letter (its vertex stays,
    without edges); so is each neighbour that is no integer in 1..vertices or whose weight is no finite number,
    and each entry the graph's other direction does not confirm: ``u`` lists ``v`` but ``v``'s line has no valid
    ``u``, or has it with another edge weight (a METIS graph is undirected; ``malformed``, naming the other
    line).  ``data`` is text: :func:`convert` refused binary data on the file's head before reading it whole (it
    was tested a second time here)."""
    body = _blank_comments(data)
    tokens, line = _split_blanks(body)
    if not len(tokens):
        raise InputError(f"{source}: empty METIS file (expected a header 'n m [fmt [ncon]]')")
    head_line = line[0]
    head = tokens.filter(pa.array(line == head_line)).to_pylist()
    header = f"the METIS header (line {head_line + 1})"
    n, has_size, has_vweight, has_eweight, ncon = _metis_header(head, f"{source} line {head_line + 1}")
    m = int(head[1])
    rest = line != head_line
    tokens, line = tokens.filter(pa.array(rest)), line[rest]
    # vertex i (0-based) is the i-th line after the header, blank ones too, comment lines not (METIS skips them)
    starts, ends = _line_starts(data)
    is_vertex = ~_comment_lines(data, starts, ends) & (np.arange(len(starts)) > head_line)
    vertex_of_line = np.cumsum(is_vertex) - 1
    vertex_line = np.flatnonzero(is_vertex)           # the 0-based file line of each vertex
    if len(vertex_line) < n:
        raise InputError(f"{source}: {header} says {n:,} vertices, the file has {len(vertex_line):,} vertex lines "
                         "after it (cut short? a vertex without neighbours has an empty line)")
    vline = vertex_of_line[line]
    if len(vline) and vline.max() >= n:
        raise InputError(f"{source}: adjacency lines beyond the {n} vertices in the METIS header")
    skip = int(has_size) + (ncon if has_vweight else 0)
    stride = 2 if has_eweight else 1
    counts = np.bincount(vline, minlength=n)[:n] if n else np.zeros(0, np.int64)
    wrong = np.flatnonzero((counts > 0) & ((counts < skip) | ((counts - skip) % stride != 0)))
    # the neighbour entries, which the header's m must account for (checked once the entries are read, so that the
    # error can say which ones have no mirror); a line that does not fit holds from none to all of its fields
    entries = int(((counts - skip) // stride).clip(0).sum() - ((counts[wrong] - skip) // stride).clip(0).sum())
    unsure = int((-(-counts[wrong] // stride)).sum())
    fields_of = f"{skip} vertex field(s), then " if skip else ""
    dead = _malformed(data, source, vertex_line[wrong],
                      [f"expected {fields_of}{'neighbour-weight pairs' if has_eweight else 'neighbours'}, "
                       f"found {c} fields" for c in counts[wrong]])
    rel = np.arange(len(tokens)) - np.searchsorted(vline, vline) - skip    # the field's place after the skipped
    ok = np.ones(n, dtype=bool)
    ok[wrong] = False
    usable = ok[vline] & (rel >= 0) if len(vline) else np.zeros(0, dtype=bool)
    nbr = usable & (rel % stride == 0)
    fields = {"src": pa.array(vline[nbr] + 1), "dst": tokens.filter(pa.array(nbr))}
    if has_eweight:
        fields["weight"] = tokens.filter(pa.array(usable & (rel % stride == 1)))
    src, dst, w, more, at = _entries(data, source, fields, line[nbr], {"dst": (n, "neighbour")}, "the header's")
    dead += more
    lonely, other_weight = _metis_asymmetric(src, dst, w)
    if not entries <= 2 * m <= entries + unsure:
        held = f"{entries:,}" + (f" (and up to {unsure:,} more on {len(wrong):,} line{'s' if len(wrong) > 1 else ''} "
                                 "whose fields do not fit)" if len(wrong) else "")
        if lonely.any():
            u, v = int(src[lonely][0]), int(dst[lonely][0])
            held += (f"; {int(lonely.sum()):,} of them without their mirror (the first on line {at[lonely][0] + 1}: "
                     f"vertex {u} lists {v}, vertex {v}'s line has no {u}"
                     + (": a directed graph? METIS's are undirected)" if 2 * lonely.sum() > len(src) else ")"))
        raise InputError(f"{source}: {header} says {m:,} edges, which the adjacency lists hold twice ({2 * m:,} "
                         f"neighbour entries: each edge is on both its vertices' lines); they hold {held}")
    odd = lonely | other_weight
    if odd.any():
        where = vertex_line[dst[odd] - 1] + 1
        details = [f"vertex {u} lists {v}" + (f" with weight {a:g}, vertex {v}'s line (line {ln}) lists {u} with "
                                              "another" if other else
                                              f", but vertex {v}'s line (line {ln}) has no valid {u}")
                   + ": a METIS graph is undirected, each edge on both its vertices' lines"
                   + (" with one weight" if other else "")
                   for u, v, a, ln, other in zip(src[odd].tolist(), dst[odd].tolist(),
                                                 (w[odd] if w is not None else np.ones(int(odd.sum()))).tolist(),
                                                 where.tolist(), other_weight[odd].tolist())]
        dead += _malformed(data, source, at[odd], details)
        keep = ~odd
        src, dst, w = src[keep], dst[keep], None if w is None else w[keep]
    isolated = np.flatnonzero(np.bincount(src - 1, minlength=n)[:n] == 0) + 1 if n else np.zeros(0, np.int64)
    if not len(isolated):
        return _events(src, dst, w, None), dead
    all_src = np.concatenate([src, isolated])
    all_dst = np.concatenate([dst, np.zeros(len(isolated), np.int64)])
    ops = np.concatenate([np.full(len(src), int(Op.ADD_EDGE)), np.full(len(isolated), int(Op.ADD_VERTEX))])
    all_w = None if w is None else np.concatenate([w, np.zeros(len(isolated))])
    order = np.argsort(all_src, kind="stable")
    return _events(all_src[order], all_dst[order], None if all_w is None else all_w[order], None, ops[order]), dead


def read_events(data: bytes, *, source: str = "<bytes>", delim: bytes | None = b","):
    """Event lines ``op,src,dst[,weight[,ts]]`` (a header naming them, or none; see :func:`_event_piece`) ->
    (events, dead-letter tables), as :func:`read_metis`.  Dead letters carry 0-based line numbers."""
    got = _event_piece(data, 0, delim=delim, meaning=None, source=source, sep_name=_SEPARATOR_NAMES[delim])
    return (EVENT_SCHEMA.empty_table(), []) if got is None else got[:2]


# -- convert ----------------------------------------------------------------------------------------
#: the time sort of a log that is not in time order sorts buckets of about this many rows (ranges of ts), one
#: at a time in memory (~40 bytes a row, three times over): the memory of a conversion does not grow with its
#: input, up to :data:`_MAX_BUCKETS` buckets (files open at once), beyond which the buckets grow
SORT_BUCKET_ROWS = 1 << 20
_MAX_BUCKETS = 256
#: one time in this many is kept to place the buckets' bounds
_SAMPLE_EVERY = 16


def _time_sorted(table: pa.Table, rows: np.ndarray, start: int) -> tuple[pa.Table, int]:
    """``table`` sorted stably by ts, and how many of its rows moved: ``rows`` are their places in the log as
    read, ``start`` the first place they take in the sorted log."""
    order = np.argsort(pc.cast(table.column("ts"), pa.int64()).to_numpy(zero_copy_only=False), kind="stable")
    moved = int((rows[order] != np.arange(start, start + len(order))).sum())
    return table.take(pa.array(order)), moved


class _RowGroups:
    """A Parquet writer fed tables of any length that writes row groups of exactly ``size`` rows (the last one
    what is left), as one ``pq.write_table`` of the whole would."""

    def __init__(self, path: Path, schema: pa.Schema, size: int, compression: str):
        self.writer = pq.ParquetWriter(path, schema, compression=compression)
        self.size, self.held, self.rows = size, [], 0

    def write(self, table: pa.Table) -> None:
        if self.rows:                                    # first the held rows, topped up to a row group
            top = table.slice(0, self.size - self.rows)
            self.held.append(top)
            self.rows += top.num_rows
            table = table.slice(top.num_rows)
            if self.rows < self.size:
                return
            self.writer.write_table(pa.concat_tables(self.held), row_group_size=self.size)
            self.held, self.rows = [], 0
        whole = table.num_rows - table.num_rows % self.size
        if whole:                                        # whole row groups straight from the table, no copy
            self.writer.write_table(table.slice(0, whole), row_group_size=self.size)
        if whole < table.num_rows:
            self.held, self.rows = [table.slice(whole)], table.num_rows - whole

    def close(self) -> None:
        if self.rows:
            self.writer.write_table(pa.concat_tables(self.held), row_group_size=self.size)
        self.writer.close()


class _EventLogWriter:
    """A conversion's events, written as they are parsed into a temporary file beside the output that replaces
    it at the end (a refused or interrupted conversion leaves an earlier output as it was).

    It keeps what the report needs - rows, op counts, the ts range, nulls, whether ts never decreased - and one
    time in :data:`_SAMPLE_EVERY`.  A log of at most :data:`SORT_BUCKET_ROWS` rows is held in memory and written
    once, sorted when it must be (no second pass over a file).  A longer one is written as it comes, and when it
    must be sorted and is not in time order it is sorted in buckets (:meth:`_sort`): the sample places bounds of
    ts that cut it into buckets of about :data:`SORT_BUCKET_ROWS` rows, one pass over the file writes each row to
    its bucket (in file order), and each bucket is sorted stably in memory and written, in order.  Equal times
    fall in one bucket, so the whole is a stable sort."""

    def __init__(self, output: Path, metadata: dict, row_group_size: int, compression: str):
        self.output, self.row_group_size, self.compression = output, row_group_size, compression
        self.schema = EVENT_SCHEMA.with_metadata(metadata)
        self.temps: list[Path] = []
        self.path = self._temp("events")
        self.groups: _RowGroups | None = None           # opened once the log outgrows memory (``held``)
        self.held: list[pa.Table] = []
        self.rows, self.ts_nulls, self.late = 0, 0, 0     # late: rows with a ts before an earlier row's
        self.ops: dict[int, int] = {}
        self.ts_min = self.ts_max = None
        self.sample: list[np.ndarray] = []

    def _temp(self, what: str) -> Path:
        path = self.output.with_name(f".{self.output.name}.{what}-{os.getpid()}.tmp")
        self.temps.append(path)
        return path

    def write(self, events: pa.Table) -> None:
        if not events.num_rows:
            return
        events = events.cast(self.schema)
        for c in pc.value_counts(events.column("op")).to_pylist():
            self.ops[c["values"]] = self.ops.get(c["values"], 0) + c["counts"]
        ts = events.column("ts")
        self.ts_nulls += ts.null_count
        t = np.asarray(pc.cast(pc.drop_null(ts), pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)
        if len(t):
            # the largest ts before each row (a running maximum, carried over from the pieces before)
            before = np.maximum.accumulate(np.concatenate([[np.iinfo(np.int64).min if self.ts_max is None
                                                            else self.ts_max], t[:-1]]))
            self.late += int((t < before).sum())
            low, high = int(t.min()), int(t.max())
            self.ts_min = low if self.ts_min is None else min(self.ts_min, low)
            self.ts_max = high if self.ts_max is None else max(self.ts_max, high)
            self.sample.append(t[::_SAMPLE_EVERY].copy())
        self.rows += events.num_rows
        if self.groups is not None:
            self.groups.write(events)
            return
        self.held.append(events)
        if self.rows > SORT_BUCKET_ROWS:                 # too long to hold: written as it comes from now on
            self.groups = _RowGroups(self.path, self.schema, self.row_group_size, self.compression)
            for table in self.held:
                self.groups.write(table)
            self.held = []

    @property
    def in_order(self) -> bool:
        return self.late == 0

    def finish(self, sort: bool) -> int:
        """Close the log, sort it by time when ``sort`` and it is not in order, and put it in place; returns the
        rows the sort moved."""
        moved = 0
        if self.groups is None:                          # held whole: sorted here, written once
            table = pa.concat_tables(self.held) if self.held else self.schema.empty_table()
            self.held = []
            if sort and not self.in_order:
                table, moved = _time_sorted(table, np.arange(table.num_rows), 0)
            self.groups = _RowGroups(self.path, self.schema, self.row_group_size, self.compression)
            self.groups.write(table)
            self.groups.close()
        else:
            self.groups.close()
            moved = self._sort() if sort and not self.in_order else 0
        os.replace(self.path, self.output)
        self.temps.remove(self.path)
        return moved

    def discard(self) -> None:
        if self.groups is not None:
            with contextlib.suppress(Exception):
                self.groups.writer.close()
        for path in self.temps:
            path.unlink(missing_ok=True)

    def _sort(self) -> int:
        sample = np.sort(np.concatenate(self.sample))
        buckets = min(-(-self.rows // SORT_BUCKET_ROWS), _MAX_BUCKETS)
        bounds = np.unique(sample[np.arange(1, buckets) * len(sample) // buckets])
        if len(bounds):
            parts = self._distribute(bounds)
        else:                                            # one bucket: the log itself, rows numbered as read
            table = pq.read_table(self.path)
            parts = [table.append_column("row", pa.array(np.arange(table.num_rows, dtype=np.int64)))]
        out_path = self._temp("sorted")
        out = _RowGroups(out_path, self.schema, self.row_group_size, self.compression)
        moved = start = 0
        for part in parts:
            table = part if isinstance(part, pa.Table) else pq.read_table(part)
            rows = table.column("row").to_numpy()
            table, bucket_moved = _time_sorted(table.drop_columns(["row"]), rows, start)
            moved += bucket_moved
            start += len(rows)
            out.write(table)
            if not isinstance(part, pa.Table):
                part.unlink()
        out.close()
        os.replace(out_path, self.path)
        self.temps.remove(out_path)
        return moved

    def _distribute(self, bounds: np.ndarray) -> list[Path]:
        """One pass over the log: each row, numbered, to the file of its bucket (ts between two bounds)."""
        paths = [self._temp(f"bucket{j}") for j in range(len(bounds) + 1)]
        writers: dict[int, pq.ParquetWriter] = {}
        offset = 0
        try:
            for batch in pq.ParquetFile(self.path).iter_batches(batch_size=self.row_group_size):
                n = batch.num_rows
                ts = pc.cast(batch.column("ts"), pa.int64()).to_numpy(zero_copy_only=False)
                bucket = np.searchsorted(bounds, ts, side="right")
                order = np.argsort(bucket, kind="stable")      # grouped by bucket, in file order within each
                table = pa.Table.from_batches([batch]).append_column(
                    "row", pa.array(np.arange(offset, offset + n, dtype=np.int64))).take(pa.array(order))
                counts = np.bincount(bucket, minlength=len(paths))
                at = 0
                for j in np.flatnonzero(counts):               # a loop over buckets, never over rows
                    if j not in writers:
                        writers[j] = pq.ParquetWriter(paths[j], table.schema, compression="lz4")
                    writers[j].write_table(table.slice(at, int(counts[j])))
                    at += int(counts[j])
                offset += n
        finally:
            for writer in writers.values():
                writer.close()
        return [paths[j] for j in sorted(writers)]


#: the formats whose columns are fixed or named in the file, and how
_NAMED_COLUMNS = {"mtx": "row, column, value", "metis": "a vertex's neighbours on its line",
                  "json": "its keys: src/source/from, dst/target/to, weight, ts, op",
                  "events": "op,src,dst[,weight[,ts]]"}


def _convert_into(log: _EventLogWriter, path: Path, head: bytes, fmt: str, *, columns, source: str,
                  time_unit: str, columns_from: str = "--columns", delim: bytes | None = b",",
                  times: dict | None = None) -> tuple[str, list, list]:
    """Read ``path`` as ``fmt`` into ``log``, a piece at a time where the format allows (delimited text and event
    lines, Matrix Market, Parquet); returns (layout, column meanings, dead-letter tables).  ``delim``: the
    separator of event lines (their text format's); ``times`` counts how the times were read
    (:func:`_times_to_ms`)."""
    dead: list = []
    if columns is not None and fmt in _NAMED_COLUMNS and head[:4] != b"PAR1":        # a Parquet table takes them
        # these formats name their own columns: --columns was taken and ignored (JSON keys a, b: "lack a source
        # and a target", with --columns src,dst given)
        raise InputError(f"{columns_from} {','.join(columns)}: {fmt} input names its own columns "
                         f"({_NAMED_COLUMNS[fmt]}); --columns maps the fields of delimited edge lists and Parquet "
                         "tables")
    events_text = fmt == "events" and head[:4] != b"PAR1"
    if fmt in _DELIMITERS or events_text:
        delim = delim if events_text else _DELIMITERS[fmt]
        layout, meaning = f"{_SEPARATOR_NAMES[delim]}, empty", columns or []
        for events, more, piece_layout, piece_meaning in _delimited(
                _file_pieces(path, PIECE_BYTES), delim=delim, columns=columns, source=source, time_unit=time_unit,
                times=times, columns_from=columns_from, event_lines=events_text):
            layout, meaning = piece_layout, piece_meaning
            log.write(events)
            dead += more
        return layout, meaning, dead
    if fmt == "mtx":
        for events, more in _mtx_pieces(head, _file_pieces(path, PIECE_BYTES), source):
            log.write(events)
            dead += more
        return "Matrix Market coordinate", ["src", "dst", "weight"], dead
    if fmt == "parquet" or (fmt == "events" and head[:4] == b"PAR1"):
        layout, meaning, pieces = _parquet_pieces(path, columns=columns, source=source, time_unit=time_unit,
                                                  times=times)
        for events, more in pieces:
            log.write(events)
            dead += more
        return layout, meaning, dead
    data = _read_bytes(path)                     # JSON lines and METIS files are read whole
    if fmt == "json":
        events, dead, layout, meaning = _json_lines(data, source=source, time_unit=time_unit, times=times)
    else:
        (events, dead), layout, meaning = read_metis(data, source), "METIS adjacency", ["vertex: neighbours"]
    log.write(events)
    return layout, meaning, dead


def dead_letter_path_for(output_path: str | Path) -> Path:
    """Where convert puts the rows it rejects: ``X.parquet`` -> ``X.dead_letter.parquet``."""
    out = Path(output_path)
    return out.with_name(out.name.removesuffix(".parquet") + ".dead_letter.parquet")


def convert(input_path: str | Path, output_path: str | Path, *, fmt: str = "auto", columns=None,
            time_unit: str = "s", sort_by_time: bool = True, row_group_size: int = ROW_GROUP_SIZE,
            compression: str = "zstd", dead_letter_path: str | Path | None = None) -> ConvertReport:
    """Convert ``input_path`` into an event Parquet log at ``output_path`` (see the module docstring).

    ``columns``: the meaning of each field (a list or ``"src,dst,ts"``), required for headerless
    files with more than two fields.  Rejected rows go to ``dead_letter_path`` (default
    ``X.dead_letter.parquet`` beside an output ``X.parquet``).  Raises :class:`ConvertError` for a file that
    cannot be read as asked (with what would work), and for one with no event to write: no rows, or every row
    rejected (nothing is written then).
    """
    if time_unit not in TIME_UNITS:
        raise InputError(f"--time-unit {time_unit!r}: choose one of {', '.join(TIME_UNITS)}")
    if fmt != "auto" and fmt not in FORMATS:
        raise InputError(f"--format {fmt!r}: choose auto or one of {', '.join(FORMATS)}")
    if isinstance(columns, str):
        columns = parse_columns(columns)
    input_path, output_path = Path(input_path), Path(output_path)
    kind = special_file(input_path)
    if kind:                    # before it is opened: a FIFO blocks there, and its head, once read, is gone
        raise InputError(f"{input_path}: is {kind}, not a regular file: convert reads a graph file")
    if not input_path.is_file():
        raise InputError(f"{input_path}: no such file" if not input_path.exists() else
                         f"{input_path}: a directory: give a file (an edge list or event log in it)")
    if input_path.resolve() == output_path.resolve():
        raise InputError(f"the output {output_path} is the input: choose another output path")
    source = str(input_path)
    times: dict = {}                    # how the times were read: numbers of the unit, ISO text, typed
    head = _read_bytes(input_path, SNIFF_BYTES)
    detected = detect_format(input_path, head) if fmt == "auto" else fmt
    columns_from = "--columns"
    if detected == "signed":
        if columns is None:
            columns_from = "--format signed (SRC,DST,RATING,TIME, comma-separated)"
        detected, columns = "csv", columns or ["src", "dst", "weight", "ts"]
    dl_path = Path(dead_letter_path) if dead_letter_path else dead_letter_path_for(output_path)
    if dl_path.resolve() in (input_path.resolve(), output_path.resolve()):
        raise InputError(f"the rows rejected from {input_path} would go to {dl_path}, which is the "
                         f"{'input' if dl_path.resolve() == input_path.resolve() else 'output'}: name the output "
                         "otherwise")
    if head[:4] == b"PAR1" and detected not in ("parquet", "events"):
        # read as text, its bytes made a header of mojibake: "column '\ufffd' has no known meaning"
        raise InputError(f"--format {fmt}: {source} is a Parquet file, not {fmt} text: convert reads it with "
                         "--format parquet (or auto)")
    if head[:4] != b"PAR1":         # refused as binary here as bench --real's check_head refuses it
        _refuse_binary(head, source, f"{source} (its first line)", metis=detected == "metis")
    # event lines are read in their text format's separator (tab- or blank-separated ones were split on commas)
    delim = _DELIMITERS.get(detected if detected != "events" else detect_format(input_path, head), b",")
    if detected in _DELIMITERS and columns is None and _looks_like_events(head, delim):
        detected = "events"
    output_path.parent.mkdir(parents=True, exist_ok=True)
    log = _EventLogWriter(output_path, {b"vinestream.source": source.encode(),
                                        b"vinestream.format": detected.encode()}, row_group_size, compression)
    try:
        read_path = input_path
        if head[:4] == b"PAR1" and _opener(input_path) is not open:
            # pyarrow reads Parquet from its footer, not as a stream: unpacked beside the output first (on disk, so
            # the memory stays flat), and removed with the other temporary files
            read_path = log._temp("input")
            _unpack(input_path, read_path)
        layout, meaning, dead = _convert_into(log, read_path, head, detected, columns=columns, source=source,
                                              time_unit=time_unit, times=times, columns_from=columns_from,
                                              delim=delim)
        dead_table = pa.concat_tables([d.select(DEAD_LETTER_SCHEMA.names).cast(DEAD_LETTER_SCHEMA) for d in dead]) \
            if dead else DEAD_LETTER_SCHEMA.empty_table()
        position = "row" if head[:4] == b"PAR1" else "line"
        if dead_table.num_rows:
            dead_table = dead_table.sort_by("position")
            if position == "line":      # the readers' 0-based lines as the file's line numbers, which count from 1
                at = dead_table.schema.get_field_index("position")
                dead_table = dead_table.set_column(at, DEAD_LETTER_SCHEMA.field("position"),
                                                   pc.add(dead_table.column(at), 1))
        if log.rows == 0 and dead_table.num_rows:
            first = dead_table.slice(0, 1).to_pylist()[0]
            where = f"line {first['position']}" if position == "line" else f"row {first['position']}, counting from 0"
            raise InputError(f"{source}: every one of {dead_table.num_rows:,} rows was rejected ({where}: "
                             f"{first['reason']}: {first['detail']}); nothing written")
        if log.rows == 0:
            # as an input whose every row is rejected: an empty log replays nothing, so an empty download or the
            # wrong file was reported as a success (a 0-event log and exit 0)
            raise InputError(f"{source}: no rows to convert (the file holds no edge or event, only a header, "
                             "comments or nothing); nothing written")
        has_ts = log.ts_max is not None
        unsorted_why = None
        if has_ts and not sort_by_time:
            unsorted_why = "--no-sort"                 # said so, with the rows out of order: never "in time order"
        elif has_ts:
            if any(m == "op" or m.endswith("=op") for m in meaning) or detected == "events":
                unsorted_why = "event logs keep their order"           # the order is their meaning
            elif log.ts_nulls:
                unsorted_why = f"{log.ts_nulls:,} rows have no ts"
        moved = log.finish(sort=has_ts and sort_by_time and unsorted_why is None)
    finally:
        log.discard()
    if dead_table.num_rows:
        pq.write_table(dead_table, dl_path)
    elif dl_path.exists():
        dl_path.unlink()                      # from an earlier conversion of another input
    ts_range = None
    if has_ts:
        ts_range = tuple(pa.scalar(t, pa.timestamp("ms")).as_py() for t in (log.ts_min, log.ts_max))
    # the unit is named only where it read numbers: ISO text and typed timestamps were "read as seconds" too
    event_lines = detected == "events" and head[:4] != b"PAR1"
    numbers = bool(times.get("number")) and has_ts
    read_as = ([("milliseconds (the event format's unit)" if event_lines else
                 f"{_UNIT_WORDS[time_unit]} (--time-unit {time_unit})")] if numbers else []) \
        + (["ISO 8601 times"] if times.get("iso") else [])
    ts_read = None
    if has_ts and read_as:
        ts_read = "ts read as " + " and ".join(read_as)
    elif has_ts and times.get("typed"):
        ts_read = "ts read as timestamps (--time-unit does not apply)"
    names = {int(o): o.name.lower() for o in Op}
    ops = {names.get(op, str(op)): n for op, n in sorted(log.ops.items())}
    return ConvertReport(source, str(output_path), detected, log.rows, bool(has_ts), dead_table.num_rows,
                         dead_table, str(dl_path) if dead_table.num_rows else None, layout, list(meaning),
                         time_unit if numbers and not event_lines else None, ts_range, unsorted_why, moved, ops,
                         position, log.late, ts_read)
