#!/usr/bin/env python3
"""Warm replays in one process (the tree in the current directory): one cold replay, then N warm ones, all three
jobs, 1e4-event batches, results written; prints each one's events/s and the warm ones' median.

    python3 /path/to/.ci/gpu-warm-replays.py STRUCTURE [N] [LOG]
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())

from vinestream.structures.backend import defer_numpy_extras, start_primary_context

defer_numpy_extras()
start_primary_context("gpu")
import vinestream  # noqa: E402

structure = sys.argv[1] if len(sys.argv) > 1 else "coo"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 5
log = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("LOG", ".data/sx-mathoverflow.events.parquet")
rates = []
for _ in range(n + 1):
    t0 = time.perf_counter()
    report, _ = vinestream.replay([log], structure=structure, backend="gpu", batch_size=10000,
                                  out=f"/tmp/warm-{structure}", overwrite=True,
                                  jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1])
    rates.append(report.events / (time.perf_counter() - t0))
print(f"{structure}: cold {rates[0]:,.0f} events/s; warm {' '.join(f'{r / 1e3:.0f}k' for r in rates[1:])}; "
      f"warm median {statistics.median(rates[1:]) / 1e3:.0f}k")
