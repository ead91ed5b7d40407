"""Hypothesis strategies for event streams: small id ranges so that keys, vertices and deletions collide."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import strategies as st

from vinestream.stream.events.schema import EVENT_SCHEMA

OPS = st.sampled_from([1, 1, 1, 1, 2, 2, 3, 4])   # mostly edge adds, some deletes and vertex ops


def events(max_id: int = 12, max_size: int = 60, ids=None):
    """Lists of (op, src, dst, weight) tuples; dst/weight None for vertex ops."""
    id_st = ids if ids is not None else st.integers(0, max_id)
    weight_st = st.one_of(st.none(), st.sampled_from([0.5, 1.0, 2.0, 3.25, -1.5]))

    @st.composite
    def one(draw):
        op = draw(OPS)
        src = draw(id_st)
        if op in (3, 4):
            return (op, src, None, None)
        return (op, src, draw(id_st), draw(weight_st) if op == 1 else None)

    return st.lists(one(), max_size=max_size)


def batches(max_batches: int = 6, **kw):
    return st.lists(events(**kw), min_size=1, max_size=max_batches)


def to_table(evs) -> pa.Table:
    """Events (op, src, dst, weight) as an EVENT_SCHEMA table."""
    return pa.table({
        "op": pa.array([e[0] for e in evs], pa.int8()),
        "src": pa.array([e[1] for e in evs], pa.int64()),
        "dst": pa.array([e[2] for e in evs], pa.int64()),
        "weight": pa.array([e[3] for e in evs], pa.float32()),
        "ts": pa.array([None] * len(evs), pa.timestamp("ms")),
    }, schema=EVENT_SCHEMA)


def f32(x: float) -> float:
    return float(np.float32(x))
