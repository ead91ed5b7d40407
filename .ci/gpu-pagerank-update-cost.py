#!/usr/bin/env python3
"""Where a replay's PageRank update goes, on the apply thread: the whole ``PageRank.update`` against its pushes'
``FusedPush.run`` and, inside that, the one wait for the control block (``ctl.tolist``), with the device's queue
drained before each update (a synchronize, timed apart) so the wait is this update's own; the rounds and reads per
update.  A warm process, coo, two replays.

    python3 .ci/gpu-pagerank-update-cost.py [STRUCTURE] [LOG]
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())
import cupy

import vinestream
from vinestream.algorithms import pagerank, pagerank_kernels

structure = sys.argv[1] if len(sys.argv) > 1 else "coo"
log = sys.argv[2] if len(sys.argv) > 2 else ".data/sx-mathoverflow.events.parquet"
rows = []
real_update, real_run = pagerank.PageRank.update, pagerank_kernels.FusedPush.run
current = {}


def update(self, graph, delta, vertex_map):
    cupy.cuda.get_current_stream().synchronize()
    t0 = time.perf_counter()
    current.clear()
    real_update(self, graph, delta, vertex_map)
    t1 = time.perf_counter()
    cupy.cuda.get_current_stream().synchronize()
    t2 = time.perf_counter()
    rows.append({"update": t1 - t0, "tail": t2 - t1, **current, "mode": self.work.get("mode"),
                 "rounds": self.work.get("iterations", 0)})


def run(self, *args, **kwargs):
    t0 = time.perf_counter()
    try:
        return real_run(self, *args, **kwargs)
    finally:
        current["run"] = time.perf_counter() - t0
        current["reads"] = getattr(self, "reads", None)
        current["first_chunk"] = self.first_chunk


pagerank.PageRank.update = update
pagerank_kernels.FusedPush.run = run
for r in range(2):
    rows.clear()
    report, _ = vinestream.replay([log], structure=structure, backend="gpu", batch_size=10000,
                                  jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1], progress=False)
    steady = rows[5:]
    med = {k: statistics.median(x[k] for x in steady if k in x) for k in ("update", "tail", "run", "rounds")}
    print(f"{structure} replay {r}: {len(rows)} updates, medians from the 6th: update {1e3 * med['update']:.3f} ms "
          f"(of it run {1e3 * med['run']:.3f}), tail after it {1e3 * med['tail']:.3f} ms, rounds {med['rounds']}; "
          f"modes {sorted({x['mode'] for x in steady})}; reads {sorted({x.get('reads') for x in steady})}; "
          f"first chunks {sorted({x.get('first_chunk') for x in steady})}", flush=True)
