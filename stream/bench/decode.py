"""pyarrow on the host against cuDF on the device: decoding polls and replaying Parquet logs into graphvine.

``vinestream bench decode`` (issue 17).  For JSON lines, CSV lines and Arrow IPC
payloads (1,000 events per message, as `vinestream produce` writes them), polls
of 1e3..1e6 events are decoded by both decoders (events/s decoded, median of
three), then decoded *and applied* to a graphvine pipeline on the GPU (events/s
end to end, the structure update synced).  The Parquet part replays an R-MAT log
with ``ReplaySource`` both ways: reading alone, and into graphvine.  Every
figure is measured side by side in one process; ratios are cuDF / pyarrow
(> 1: cuDF is faster).
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from vinestream.connectors.kafka import _text_lines
from vinestream.connectors.parquet import ReplaySource
from vinestream.connectors.synthetic import rmat_edges
from vinestream.stream.bench.kafka import synthetic_log
from vinestream.stream.errors import UsageError
from vinestream.stream.events.cudf_decode import AUTO_MIN_BYTES, cudf_available, cudf_decode
from vinestream.stream.events.decode import decode, encode_arrow
from vinestream.stream.events.schema import EVENT_SCHEMA
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures.backend import synchronize

POLL_SIZES = (1_000, 10_000, 100_000, 1_000_000)
EVENTS_PER_MESSAGE = 1_000


def payloads_of(table: pa.Table, fmt: str, per_message: int = EVENTS_PER_MESSAGE) -> list[bytes]:
    """``table`` as wire messages of ``per_message`` events each."""
    out = []
    for lo in range(0, table.num_rows, per_message):
        part = table.slice(lo, per_message)
        if fmt == "arrow":
            out.append(encode_arrow(part))
        else:
            out.append(b"\n".join(v.as_py() for v in _text_lines(part, fmt).cast(pa.binary())))
    return out


def _median_seconds(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _decode_with(decoder, xp):
    def run(polls, fmt):
        for i, poll in enumerate(polls):
            decoder(poll, fmt, source="bench", partition=0, positions=np.arange(len(poll)) + i * len(poll))
        synchronize(xp)
    return run


def _end_to_end(decoder, xp, structure: str):
    def run(polls, fmt):
        pipeline = build_pipeline(structure=structure, backend="gpu" if xp is not np else "cpu")
        t0 = time.perf_counter()
        for i, poll in enumerate(polls):
            decoded = decoder(poll, fmt, source="bench", partition=0,
                              positions=np.arange(len(poll)) + i * len(poll))
            pipeline.apply(decoded.events)
        synchronize(xp)
        return time.perf_counter() - t0
    return run


def bench_polls(xp, *, poll_sizes=POLL_SIZES, formats=("json", "csv", "arrow"), total: int = 1_000_000,
                structure: str = "graphvine") -> list[dict]:
    """Decode and end-to-end events/s per format and poll size, pyarrow against cuDF."""
    rows = []
    log = synthetic_log(total, seed=7)
    for fmt in formats:
        messages = payloads_of(log, fmt)
        for size in poll_sizes:
            per_poll = max(1, size // EVENTS_PER_MESSAGE)
            polls = [messages[i:i + per_poll] for i in range(0, len(messages), per_poll)]
            polls = polls[:max(1, min(total, 100 * size) // size)]        # at most 100 polls per size
            events = sum(len(poll) for poll in polls) * EVENTS_PER_MESSAGE
            nbytes = sum(len(p) for p in polls[0])
            row = {"format": fmt, "poll_events": size, "poll_bytes": nbytes, "polls": len(polls)}
            for name, decoder in (("pyarrow", decode), ("cudf", cudf_decode)):
                _decode_with(decoder, xp)(polls[:2], fmt)                       # warm up
                seconds = _median_seconds(lambda d=decoder, p=polls, f=fmt: _decode_with(d, xp)(p, f))
                row[f"{name}_decode_events_per_s"] = events / seconds
                e2e = statistics.median(_end_to_end(decoder, xp, structure)(polls, fmt) for _ in range(3))
                row[f"{name}_end_to_end_events_per_s"] = events / e2e
            row["decode_ratio"] = row["cudf_decode_events_per_s"] / row["pyarrow_decode_events_per_s"]
            row["end_to_end_ratio"] = row["cudf_end_to_end_events_per_s"] / row["pyarrow_end_to_end_events_per_s"]
            row["auto_picks"] = "cudf" if fmt != "arrow" and nbytes >= AUTO_MIN_BYTES else "pyarrow"
            rows.append(row)
    return rows


def rmat_log(path: str, scale: int, edge_factor: int, row_group: int = 1 << 20) -> int:
    """An R-MAT insert log (scale, edge factor) written to ``path``; returns its events."""
    src, dst = rmat_edges(np, scale, edge_factor, seed=3)
    n = len(src)
    table = pa.table({"op": np.ones(n, np.int8), "src": src, "dst": dst,
                      "weight": pa.nulls(n, pa.float32()),
                      "ts": pa.array(1_700_000_000_000 + np.arange(n, dtype=np.int64), pa.timestamp("ms"))})
    pq.write_table(table.cast(EVENT_SCHEMA), path, row_group_size=row_group)
    return n


def bench_replay(xp, *, scale: int = 22, edge_factor: int = 4, batch_size: int = 1_000_000,
                 structure: str = "graphvine") -> dict:
    """Parquet replay of an R-MAT log: pyarrow against cuDF, reading alone and into graphvine."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"rmat{scale}.parquet")
        events = rmat_log(path, scale, edge_factor)
        out = {"graph": f"rmat{scale}-{edge_factor}", "events": events, "batch_size": batch_size}
        for name, device in (("pyarrow", False), ("cudf", True)):
            def read(device=device):
                for _ in ReplaySource([path], batch_size=batch_size, device=device):
                    pass
                synchronize(xp)
            read()                                                              # warm up (page cache, kernels)
            out[f"{name}_read_events_per_s"] = events / _median_seconds(read)
            pipeline = build_pipeline(structure=structure, backend="gpu" if xp is not np else "cpu")
            t0 = time.perf_counter()
            for batch in ReplaySource([path], batch_size=batch_size, device=device):
                pipeline.apply(batch.events)
            synchronize(xp)
            out[f"{name}_end_to_end_events_per_s"] = events / (time.perf_counter() - t0)
            out[f"{name}_edges"] = int(pipeline.structure.num_edges)
        out["read_ratio"] = out["cudf_read_events_per_s"] / out["pyarrow_read_events_per_s"]
        out["end_to_end_ratio"] = out["cudf_end_to_end_events_per_s"] / out["pyarrow_end_to_end_events_per_s"]
        return out


def bench_decode(xp, *, scale: int = 22) -> dict:
    ok, version = cudf_available()
    if not ok:                  # a user's choice of bench, not a bug: one line, exit 2
        raise UsageError(f"bench decode compares cuDF's decoder with pyarrow's and needs cuDF on a GPU "
                         f"(--backend gpu; pip install \".[cudf]\" for CUDA 12, \".[cudf-cu13]\" for CUDA 13): "
                         f"{version}")
    return {"cudf": version, "host_cpus": os.cpu_count(), "polls": bench_polls(xp),
            "replay": bench_replay(xp, scale=scale)}


def format_table(result: dict) -> str:
    lines = [f"decode: pyarrow (host, {result['host_cpus']} CPUs) vs cuDF {result['cudf']} (device); events/s",
             f"{'format':>7} {'poll':>9} {'bytes':>11} | {'pyarrow dec':>12} {'cudf dec':>12} {'ratio':>6} | "
             f"{'pyarrow e2e':>12} {'cudf e2e':>12} {'ratio':>6} | auto"]
    for r in result["polls"]:
        lines.append(f"{r['format']:>7} {r['poll_events']:>9,} {r['poll_bytes']:>11,} | "
                     f"{r['pyarrow_decode_events_per_s']:>12.3g} {r['cudf_decode_events_per_s']:>12.3g} "
                     f"{r['decode_ratio']:>6.2f} | {r['pyarrow_end_to_end_events_per_s']:>12.3g} "
                     f"{r['cudf_end_to_end_events_per_s']:>12.3g} {r['end_to_end_ratio']:>6.2f} | {r['auto_picks']}")
    rp = result["replay"]
    lines.append(f"replay {rp['graph']} ({rp['events']:,} events, batches of {rp['batch_size']:,}): read "
                 f"pyarrow {rp['pyarrow_read_events_per_s']:.3g} / cudf {rp['cudf_read_events_per_s']:.3g} "
                 f"({rp['read_ratio']:.2f}x); into graphvine pyarrow {rp['pyarrow_end_to_end_events_per_s']:.3g} / "
                 f"cudf {rp['cudf_end_to_end_events_per_s']:.3g} ({rp['end_to_end_ratio']:.2f}x)")
    return "\n".join(lines)
