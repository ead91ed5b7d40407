"""Arrow schemas: event batches, dead letters.  Schemas first; everything else conforms."""
from __future__ import annotations

import enum

import numpy as np
import pyarrow as pa


class Op(enum.IntEnum):
    """Event operation codes (the ``op`` column)."""
    ADD_EDGE = 1
    DELETE_EDGE = 2
    ADD_VERTEX = 3
    DELETE_VERTEX = 4


#: Names accepted on the wire for each op (case-insensitive), besides the numeric code.
OP_NAMES: dict[str, Op] = {
    "add": Op.ADD_EDGE, "+": Op.ADD_EDGE, "add_edge": Op.ADD_EDGE, "insert": Op.ADD_EDGE,
    "delete": Op.DELETE_EDGE, "del": Op.DELETE_EDGE, "-": Op.DELETE_EDGE, "delete_edge": Op.DELETE_EDGE,
    "del_edge": Op.DELETE_EDGE,
    "add_vertex": Op.ADD_VERTEX,
    "delete_vertex": Op.DELETE_VERTEX, "del_vertex": Op.DELETE_VERTEX,
}

EDGE_OPS = (Op.ADD_EDGE, Op.DELETE_EDGE)
VERTEX_OPS = (Op.ADD_VERTEX, Op.DELETE_VERTEX)

EVENT_SCHEMA = pa.schema([
    pa.field("op", pa.int8(), nullable=False),
    pa.field("src", pa.int64(), nullable=False),
    pa.field("dst", pa.int64(), nullable=True),        # null for vertex ops
    pa.field("weight", pa.float32(), nullable=True),   # null means 1.0
    pa.field("ts", pa.timestamp("ms"), nullable=True),
])

#: Where a rejected record came from: a file and row, or a topic, partition and offset.
DEAD_LETTER_SCHEMA = pa.schema([
    pa.field("source", pa.string()),          # file path or Kafka topic
    pa.field("partition", pa.int32()),        # Kafka partition; null for files
    pa.field("position", pa.int64()),         # row of a Parquet log (0-based), Kafka offset, or (`convert`) the line
                                              # of a text file (1-based, as editors count) / row of a Parquet one
    pa.field("reason", pa.string()),          # one of REASONS
    pa.field("detail", pa.string()),          # human-readable explanation
    pa.field("payload", pa.string()),         # the offending record as text (truncated)
])

#: Dead-letter reasons (also the ``reason`` label of vinestream_invalid_events_total).
REASONS = (
    "malformed",        # record does not parse (bad JSON / CSV / IPC)
    "unknown_op",       # op not a known code or name
    "null_id",          # src (or dst of an edge op) missing
    "bad_id",           # id is not an integer
    "id_out_of_range",  # id outside int64, or outside the vertices a file declares (Matrix Market, METIS)
    "missing_dst",      # edge op without dst
    "bad_weight",       # weight not a number, or NaN / inf
    "bad_timestamp",    # ts not a valid time
    "self_loop",        # src == dst with keep_self_loops = false (counted, not dead-lettered)
    "tombstone",        # a Kafka record with a null value
    "too_large",        # a payload over the configured size limit (or more rows than bytes)
    "too_deep",         # a JSON record nested deeper than the configured limit
)

#: Safe defaults of the payload limits (``max_payload_bytes`` / ``max_nesting`` config keys).
DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_NESTING = 32

PAYLOAD_MAX_CHARS = 1000
#: the most characters of one value that a dead letter's detail or an error line quotes: a 10 MB id made a 10 MB
#: detail, and a 10 MB error line where `convert` quotes the first rejected row
VALUE_EXCERPT_CHARS = 100


def excerpt(value, length: int | None = None) -> str:
    """``repr(value)`` cut to :data:`VALUE_EXCERPT_CHARS` characters, saying how long it was when it was longer.

    ``length``: the full length of a text ``value`` that the caller has cut already (Arrow's
    ``utf8_slice_codeunits``: a huge value is never a Python string).
    """
    text = value if isinstance(value, str) else repr(value)
    length = len(text) if length is None else length
    if length <= VALUE_EXCERPT_CHARS:
        return repr(value)
    cut = text[:VALUE_EXCERPT_CHARS]
    return f"{cut!r}... ({length:,} characters)" if isinstance(value, str) else f"{cut}... ({length:,} characters)"


def is_vertex_id(value) -> bool:
    """Whether ``value`` (a Python or NumPy scalar) is an external vertex id: an int64, not a bool."""
    return (isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
            and -2 ** 63 <= int(value) < 2 ** 63)


#: an event time (ms since 1970) further than this from 1970 - past the year 2200, or before 1740 - is a
#: ``bad_timestamp``: one far-future time would move the event-time watermark past every edge's --edge-ttl for
#: good (each edge expiring as it arrives), and a mistaken unit (ns read as ms) lands there.  ``convert`` holds
#: its times to the same bound
MAX_TS_MS = 7_258_118_400_000


def empty_events() -> pa.Table:
    return EVENT_SCHEMA.empty_table()


def empty_dead_letters() -> pa.Table:
    return DEAD_LETTER_SCHEMA.empty_table()
