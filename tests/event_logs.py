"""Small recorded event logs (Parquet, EVENT_SCHEMA) for the Kafka tests, and their oracle graphs."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tests.oracle import Oracle
from vinestream.stream.events.schema import EVENT_SCHEMA, Op


def random_events(n: int, *, vertices: int = 200, seed: int = 0, vertex_ops: bool = True) -> pa.Table:
    """Mostly edge inserts, some edge deletes, and (optionally) vertex adds/deletes; a few self-loops.

    With ``vertex_ops=False`` every event only touches edges keyed by their source,
    so the final graph does not depend on how partitions interleave.
    """
    rng = np.random.default_rng(seed)
    p = [0.75, 0.2, 0.03, 0.02] if vertex_ops else [0.78, 0.22, 0.0, 0.0]
    op = rng.choice(np.array([1, 2, 3, 4], dtype=np.int8), size=n, p=p)
    src = rng.integers(0, vertices, n).astype(np.int64) * 1_000_003 - 7   # sparse, some negative ids
    dst = rng.integers(0, vertices, n).astype(np.int64) * 1_000_003 - 7
    weight = rng.random(n).astype(np.float32)
    is_vertex = op >= Op.ADD_VERTEX
    ts = 1_700_000_000_000 + np.arange(n, dtype=np.int64)
    return pa.table({
        "op": op, "src": src,
        "dst": pa.array(dst, mask=is_vertex),
        "weight": pa.array(weight, mask=is_vertex | (rng.random(n) < 0.1)),
        "ts": pa.array(ts, pa.timestamp("ms")),
    }).cast(EVENT_SCHEMA)


def write_log(path, table: pa.Table) -> str:
    pq.write_table(table, path)
    return str(path)


def oracle_of(table: pa.Table, **kw) -> Oracle:
    o = Oracle(**kw)
    for op, s, d, w in zip(*(table.column(c).to_pylist() for c in ("op", "src", "dst", "weight"))):
        o.apply(op, s, d, w)
    return o
