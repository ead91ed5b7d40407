"""Experiment: the update's time with the job's arrays (and the graph's offsets) copied into buffers of at
least 4 MiB, which NumPy backs by transparent huge pages (madvise), against the plain copies."""
import copy
import os
import statistics
import sys
import time

import numpy as np

import prof
from ab import _FLUSH

HUGE = 1 << 22


def huge(a):
    if a is None or not isinstance(a, np.ndarray) or a.nbytes >= HUGE or a.nbytes < 4096:
        return a
    buf = np.empty(HUGE // a.itemsize + 1, dtype=a.dtype)
    out = buf[: a.size].reshape(a.shape)
    out[...] = a
    return out


def hugify(j, graph):
    for k, v in list(vars(j).items()):
        if isinstance(v, np.ndarray):
            setattr(j, k, huge(v))
    ie = j.in_edges
    for k in ("offsets", "alive", "has_extra", "cols"):
        setattr(ie, k, huge(getattr(ie, k)))
    ie.ends = ie.offsets[1:]


name = sys.argv[1]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
graph, vm, job, delta, _ = prof.setup(name, 1e-4, which=int(os.environ.get("BATCH", "0")))
g2 = copy.deepcopy(graph, {id(np): np})
csr = g2.adjacency()
print([ (k, type(v).__name__, getattr(v, 'nbytes', None)) for k, v in vars(g2).items()][:20])
res = {"plain": [], "huge": []}
for r in range(reps):
    for what in ("plain", "huge"):
        j = copy.deepcopy(job, {id(np): np})
        if what == "huge":
            hugify(j, graph)
        np.add(_FLUSH, 1, out=_FLUSH)
        t0 = time.perf_counter()
        j.update(graph, delta, vm)
        res[what].append(time.perf_counter() - t0)
print({k: (round(statistics.median(v) * 1e3, 3), round(min(v) * 1e3, 3)) for k, v in res.items()}, os.getloadavg())
