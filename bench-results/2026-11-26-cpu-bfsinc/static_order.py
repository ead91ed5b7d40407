"""cnr-2000's static BFS (a fresh job's run_static, as the bench times it) with the caches flushed before it
against right after another static run on the same graph (the bench times the fresh static run right after the
update, which at 1% is itself a static run: its caches warm for the second)."""
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab import _FLUSH  # noqa: E402
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "2026-11-25-bfscpu"))  # its load.py, seq.py
from load import load  # noqa: E402
from vinestream.algorithms.bfs import BFS  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402

s, d, n = load(sys.argv[1] if len(sys.argv) > 1 else "cnr-2000")
g = build("csr", np, s, d, n)
vm = IdentityVertexMap(np)
src = int(np.argmax(np.diff(g.adjacency().offsets)))
cold, warm = [], []
for _ in range(9):
    np.add(_FLUSH, 1, out=_FLUSH)
    t0 = time.perf_counter(); BFS(np, sources=[src]).run_static(g, vm); cold.append(time.perf_counter() - t0)
    t0 = time.perf_counter(); BFS(np, sources=[src]).run_static(g, vm); warm.append(time.perf_counter() - t0)
print(f"static BFS: after a flush {statistics.median(cold)*1e3:.2f} ms, right after another static run "
      f"{statistics.median(warm)*1e3:.2f} ms (medians of 9); load {os.getloadavg()}")
