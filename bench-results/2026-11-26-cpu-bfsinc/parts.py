"""Time the in-edge fold of one batch alone against the whole update, on copies (caches flushed before each).

    BATCH=0 python parts.py GRAPH [fraction] [repeats]
"""
import copy
import os
import statistics
import sys
import time

import numpy as np

import prof
from ab import _FLUSH

name = sys.argv[1]
frac = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 40
graph, vm, job, delta, _ = prof.setup(name, frac, which=int(os.environ.get("BATCH", "0")))
d = delta
args = (d.deleted_src, d.deleted_dst.astype(np.intp), d.inserted_src.astype(np.intp), d.inserted_dst.astype(np.intp))
res = {"fold": [], "update": []}
for r in range(reps):
    for what in ("fold", "update"):
        j = copy.deepcopy(job, {id(np): np})
        np.add(_FLUSH, 1, out=_FLUSH)
        t0 = time.perf_counter()
        if what == "fold":
            j._flush_backlog()
            j.in_edges.fold_edges(*args, bound=int(graph.vertex_capacity))
        else:
            j.update(graph, d, vm)
        res[what].append(time.perf_counter() - t0)
print({k: (round(statistics.median(v) * 1e3, 3), round(min(v) * 1e3, 3)) for k, v in res.items()}, os.getloadavg())
