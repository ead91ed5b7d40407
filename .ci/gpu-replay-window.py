#!/usr/bin/env python3
"""Where a replay's timed window goes: ``vinestream.replay`` in this (fresh) process, then from the results'
wall times: start -> the first epoch's row, the epochs, the last row -> return.

    python3 .ci/gpu-replay-window.py BACKEND STRUCTURE [LOG]
"""
import os
import shutil
import sys
import time

sys.path.insert(0, os.getcwd())

import vinestream

backend, structure = sys.argv[1], sys.argv[2]
log = sys.argv[3] if len(sys.argv) > 3 else ".data/sx-mathoverflow.events.parquet"
out = f"/tmp/window-{structure}"
shutil.rmtree(out, ignore_errors=True)
t0 = time.time()
report, _ = vinestream.replay([log], structure=structure, backend=backend, batch_size=10000,
                              jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1], out=out)
t1 = time.time()
s = vinestream.read_results(out)["summary"].to_pandas().sort_values("epoch")
w = s["wall_time"].to_numpy()
first = {c: round(float(s[c].iloc[0]), 1) for c in s.columns if c.endswith("_ms")}
print(f"{structure}: replay() {1000 * (t1 - t0):.0f} ms, report {1000 * report.seconds:.0f} ms, "
      f"{report.events / report.seconds:,.0f} events/s; start -> first row {1000 * (w[0] - t0):.0f} ms "
      f"(its phases {first}); epochs 2- {1000 * (w[-1] - w[0]):.0f} ms; "
      f"last row -> return {1000 * (t1 - w[-1]):.0f} ms")
