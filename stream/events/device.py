"""Event batches that live in device memory: the table the cuDF decoders hand to the pipeline.

A validated batch normally travels as an Arrow table in ``EVENT_SCHEMA`` (host
memory).  The cuDF decoders (``stream/events/cudf_decode.py``) and the cuDF
Parquet replay produce the same batch *on the GPU*; moving it back to the host
only for the pipeline to copy it to the GPU again would cost two transfers per
event.  :class:`DeviceEvents` is that batch as ``xp`` arrays (CuPy there; NumPy
works too, which is how the CPU tests exercise it), with the few table
operations the application loop and the partition merge use: ``num_rows``,
``slice``, ``take``, ``filter``, ``column`` (a host copy of one column, for the
merge's event times and the metrics' op counts), ``to_arrow`` (for the rare
consumers that need the whole batch on the host, such as the edge TTL) and
:func:`concat_events`.

Nulls follow ``EVENT_SCHEMA``: ``dst`` is null for vertex ops, ``weight`` null
means 1.0, ``ts`` may be null until the Kafka source fills it with the record
time.  Each nullable column carries a validity mask.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from vinestream.stream.events.schema import EVENT_SCHEMA

__all__ = ["DeviceEvents", "concat_events", "host_events"]


def _host(a) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)


@dataclass
class DeviceEvents:
    """A validated event batch as device arrays (see the module docstring)."""
    op: object                 # int8
    src: object                # int64
    dst: object                # int64 (0 where null)
    weight: object             # float32 (1.0 where null)
    ts: object                 # int64 milliseconds (0 where null)
    dst_valid: object          # bool
    weight_valid: object       # bool
    ts_valid: object           # bool

    _COLUMNS = ("op", "src", "dst", "weight", "ts", "dst_valid", "weight_valid", "ts_valid")

    @property
    def xp(self):
        mod = type(self.op).__module__
        if mod.startswith("cupy"):
            import cupy
            return cupy
        return np

    @property
    def num_rows(self) -> int:
        return int(self.op.shape[0])

    def __len__(self) -> int:
        return self.num_rows

    def _map(self, fn) -> DeviceEvents:
        return DeviceEvents(*(fn(getattr(self, c)) for c in self._COLUMNS))

    # -- the table operations the loop and the merge use -----------------------------------
    def slice(self, offset: int = 0, length: int | None = None) -> DeviceEvents:
        stop = self.num_rows if length is None else min(self.num_rows, offset + length)
        return self._map(lambda a: a[offset:stop])

    def take(self, indices) -> DeviceEvents:
        idx = self.xp.asarray(_host(indices.to_numpy(zero_copy_only=False)) if isinstance(indices, pa.Array)
                              else indices, dtype=np.int64)
        return self._map(lambda a: a[idx])

    def filter(self, mask) -> DeviceEvents:
        keep = self.xp.asarray(_host(mask.to_numpy(zero_copy_only=False)) if isinstance(mask, pa.Array)
                               else mask, dtype=bool)
        return self._map(lambda a: a[keep])

    def column(self, name: str) -> pa.Array:
        """One column as a host Arrow array in ``EVENT_SCHEMA`` (a device-to-host copy of that column)."""
        field = EVENT_SCHEMA.field(name)
        values = _host(getattr(self, name))
        valid = getattr(self, f"{name}_valid", None)
        mask = None if valid is None else ~_host(valid)
        if name == "ts":
            return pa.array(values, pa.int64(), mask=mask).cast(field.type)
        return pa.array(values, field.type, mask=mask)

    def to_arrow(self) -> pa.Table:
        """The whole batch on the host, exactly as the pyarrow decoders would have produced it."""
        return pa.Table.from_arrays([self.column(n) for n in EVENT_SCHEMA.names], schema=EVENT_SCHEMA)

    def with_ts_filled(self, ms: np.ndarray) -> DeviceEvents:
        """Null ``ts`` replaced by ``ms`` (host int64, one per event): the Kafka record time."""
        xp = self.xp
        fill = xp.asarray(ms, dtype=np.int64)
        return DeviceEvents(self.op, self.src, self.dst, self.weight, xp.where(self.ts_valid, self.ts, fill),
                            self.dst_valid, self.weight_valid, xp.ones_like(self.ts_valid))

    # -- to and from the pipeline ----------------------------------------------------------
    def arrays(self, xp) -> tuple:
        """(op, src, dst, weight) as ``xp`` arrays with nulls filled (dst 0, weight 1.0), no copy on the device."""
        if xp is not self.xp:
            return tuple(xp.asarray(_host(a)) for a in (self.op, self.src, self.dst, self.weight))
        return self.op, self.src, self.dst, self.weight

    @classmethod
    def from_arrow(cls, table: pa.Table, xp) -> DeviceEvents:
        """A host batch in ``EVENT_SCHEMA`` moved to ``xp`` (one host-to-device copy per column)."""
        def col(name, dtype, fill):
            arr = table.column(name)
            valid = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
            if name == "ts":
                arr = arr.cast(pa.int64())
            values = np.asarray(arr.fill_null(fill).to_numpy(zero_copy_only=False), dtype=dtype)
            return xp.asarray(values), xp.asarray(valid)
        op, _ = col("op", np.int8, 0)
        src, _ = col("src", np.int64, 0)
        dst, dst_valid = col("dst", np.int64, 0)
        weight, weight_valid = col("weight", np.float32, 1.0)
        ts, ts_valid = col("ts", np.int64, 0)
        return cls(op, src, dst, weight, ts, dst_valid, weight_valid, ts_valid)

    @classmethod
    def empty(cls, xp) -> DeviceEvents:
        z = xp.zeros(0, dtype=np.int64)
        b = xp.zeros(0, dtype=bool)
        return cls(xp.zeros(0, np.int8), z, z, xp.zeros(0, np.float32), z, b, b, b)


def concat_events(parts: list):
    """Concatenate event batches: Arrow tables stay Arrow; any device batch makes the result a device batch."""
    parts = [p for p in parts if p.num_rows] or parts[:1]
    if not parts:
        return EVENT_SCHEMA.empty_table()
    device = [p for p in parts if isinstance(p, DeviceEvents)]
    if not device:
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    xp = device[0].xp
    parts = [p if isinstance(p, DeviceEvents) else DeviceEvents.from_arrow(p, xp) for p in parts]
    if len(parts) == 1:
        return parts[0]
    return DeviceEvents(*(xp.concatenate([getattr(p, c) for p in parts]) for c in DeviceEvents._COLUMNS))


def host_events(events) -> pa.Table:
    """``events`` as an Arrow table (a device batch is copied to the host)."""
    return events.to_arrow() if isinstance(events, DeviceEvents) else events
