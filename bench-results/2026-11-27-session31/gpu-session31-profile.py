"""cProfile of Pipeline._update_once over 1,000-event batches (R-MAT 20), coo and graphvine, on the GPU."""
import cProfile
import io
import os
import pstats
import statistics
import sys
import time

import numpy as np

sys.argv = ["x"]
import tests.phase_timing as pt
from vinestream.connectors.synthetic import rmat_edges
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures.backend import synchronize, to_numpy

src, dst = (to_numpy(a) for a in rmat_edges(np, 20, 16, seed=3))
B, N = 1000, 300
init = len(src) - (N + 1) * B
for name in ("coo", "graphvine"):
    rng = np.random.default_rng(0)
    p = build_pipeline(structure=name, backend="gpu")
    p.apply(pt._table(np.ones(init, np.int8), src[:init], dst[:init]))
    tables = list(pt.churn_tables(src, dst, init, N + 1, B, rng))
    walls = []
    for t in tables[:100]:
        p.epoch += 1
        synchronize(p.xp)
        t0 = time.perf_counter()
        p._update_once(t)
        synchronize(p.xp)
        walls.append(time.perf_counter() - t0)
    print(name, "median wall ms (100, unprofiled)", round(statistics.median(walls[1:]) * 1e3, 3))
    pr = cProfile.Profile()
    for t in tables[100:]:
        p.epoch += 1
        synchronize(p.xp)
        pr.enable()
        p._update_once(t)
        synchronize(p.xp)
        pr.disable()
    s = io.StringIO()
    st = pstats.Stats(pr, stream=s)
    st.sort_stats("tottime").print_stats(45)
    s2 = io.StringIO()
    st2 = pstats.Stats(pr, stream=s2)
    st2.sort_stats("cumulative").print_stats(60)
    open(os.path.join(os.environ.get("OUT", "/tmp"), f"prof_{name}.txt"), "w").write(s.getvalue() + "\n\n" + s2.getvalue())
    print(name, "profiled", file=sys.stderr)
