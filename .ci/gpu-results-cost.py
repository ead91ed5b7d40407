#!/usr/bin/env python3
"""What writing results costs a warm replay, step by step: wall time on the apply thread inside the results sink's
``write`` (the outputs' snapshot, the summary row, the resident-memory read, the hand-off to the writer thread with
its back-pressure) and on the writer thread (the job tables and files, the flush's syncs), against the same replay
without results; variants alternating, three rounds.

    python3 .ci/gpu-results-cost.py [STRUCTURE] [LOG]
"""
import collections
import os
import shutil
import sys
import threading

sys.path.insert(0, os.getcwd())
import replay_driver

import vinestream
from vinestream.connectors import parquet
from vinestream.stream.pipeline import pipeline

structure = sys.argv[1] if len(sys.argv) > 1 else "coo"
log = sys.argv[2] if len(sys.argv) > 2 else ".data/sx-mathoverflow.events.parquet"
OUT = "/tmp/results-cost"
SPENT = collections.defaultdict(float)
CALLS = collections.Counter()


def timed(name, fn):
    def record(seconds, start, args):
        SPENT[(threading.current_thread().name, name)] += seconds
        CALLS[(threading.current_thread().name, name)] += 1
    return replay_driver.timed(fn, record)


parquet.ParquetResultsSink.write = timed("sink.write", parquet.ParquetResultsSink.write)
parquet.ParquetResultsSink._submit = timed("sink._submit", parquet.ParquetResultsSink._submit)
parquet.ParquetResultsSink._flush = timed("sink._flush", parquet.ParquetResultsSink._flush)
parquet.ParquetResultsSink.close = timed("sink.close", parquet.ParquetResultsSink.close)
parquet._write_output = timed("_write_output", parquet._write_output)
parquet.write_atomic = timed("write_atomic", parquet.write_atomic)
parquet.fsync_paths = timed("fsync_paths", parquet.fsync_paths)
parquet._rss_bytes = timed("_rss_bytes", parquet._rss_bytes)
pipeline.JobOutputs.snapshot = timed("JobOutputs.snapshot", pipeline.JobOutputs.snapshot)
pipeline.BatchResult.summary_row = timed("summary_row", pipeline.BatchResult.summary_row)


def once(out):
    shutil.rmtree(OUT, ignore_errors=True)
    return vinestream.replay([log], structure=structure, backend="gpu", batch_size=10000,
                             jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1], progress=False,
                             out=OUT if out else None, overwrite=True)


once(True)
for r in range(3):
    for out in (True, False):
        SPENT.clear()
        CALLS.clear()
        report, _ = once(out)
        print(f"{structure} results {'on ' if out else 'off'} round {r}: window {1e3 * report.seconds:.0f} ms, "
              f"{report.events / report.seconds:,.0f} events/s", flush=True)
        for (thread, name), s in sorted(SPENT.items(), key=lambda kv: -kv[1]):
            print(f"    {thread:28s} {name:22s} {CALLS[(thread, name)]:4d} calls {1e3 * s:8.1f} ms", flush=True)
