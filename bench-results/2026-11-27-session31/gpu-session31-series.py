"""The 1,000-event update's wall time batch by batch (tests.phase_timing's loop, 300 batches), coo and graphvine:
is the 30-batch median of tests.phase_timing a warm-up figure?"""
import json
import os
import statistics
import sys
import time

import numpy as np

import tests.phase_timing as pt
from vinestream.connectors.synthetic import rmat_edges
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures.backend import synchronize, to_numpy

B, N = 1000, int(sys.argv[1]) if len(sys.argv) > 1 else 300
src, dst = (to_numpy(a) for a in rmat_edges(np, 20, 16, seed=3))
init = len(src) - (N + 1) * B
out = {}
for name in ("coo", "graphvine"):
    rng = np.random.default_rng(0)
    p = build_pipeline(structure=name, backend="gpu")
    p.apply(pt._table(np.ones(init, np.int8), src[:init], dst[:init]))
    walls = []
    for t in pt.churn_tables(src, dst, init, N + 1, B, rng):
        p.epoch += 1
        synchronize(p.xp)
        t0 = time.perf_counter()
        p._update_once(t)
        synchronize(p.xp)
        walls.append((time.perf_counter() - t0) * 1e3)
    w = walls[1:]
    out[name] = {f"median_{a}_{b}": round(statistics.median(w[a:b]), 3) for a, b in ((0, 30), (30, 100), (100, 200), (200, N))}
    out[name]["series_first_60"] = [round(x, 3) for x in w[:60]]
print(json.dumps(out))
open(os.path.join(os.environ.get("OUT", "/tmp"), "series.json"), "w").write(json.dumps(out))
