#!/usr/bin/env python3
"""Warm replays in one process (the tree in the current directory): one cold replay, then N warm ones, all three
jobs, 1e4-event batches, results written; prints each one's events/s and the warm ones' median.

    python3 /path/to/.ci/gpu-warm-replays.py STRUCTURE [N] [LOG]
"""
import statistics
import time

import replay_driver

vinestream, structure, n, log = replay_driver.start(5)
rates = []
for _ in range(n + 1):
    t0 = time.perf_counter()
    report, _ = replay_driver.replay(vinestream, structure, log, f"/tmp/warm-{structure}")
    rates.append(report.events / (time.perf_counter() - t0))
print(f"{structure}: cold {rates[0]:,.0f} events/s; warm {' '.join(f'{r / 1e3:.0f}k' for r in rates[1:])}; "
      f"warm median {statistics.median(rates[1:]) / 1e3:.0f}k")
