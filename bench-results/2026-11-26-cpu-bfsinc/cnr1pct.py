"""cnr-2000 at 1%: the update (replayed from copies of the job at the bench's first reported 1% batch, caches
flushed) against a fresh job's static run on the same graph (flushed too), interleaved; plus what the update did."""
import copy
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prof  # noqa: E402
from ab import _FLUSH  # noqa: E402
from vinestream.algorithms.bfs import BFS  # noqa: E402

which = int(os.environ.get("BATCH", "0"))
graph, vm, job, delta, _ = prof.setup("cnr-2000", 1e-2, which=which)
src = int(job.sources[0])
inc, sta, works = [], [], []
for r in range(7):
    j = copy.deepcopy(job, {id(np): np})
    np.add(_FLUSH, 1, out=_FLUSH)
    t0 = time.perf_counter(); j.update(graph, delta, vm); inc.append(time.perf_counter() - t0)
    works.append(dict(j.work))
    np.add(_FLUSH, 1, out=_FLUSH)
    t0 = time.perf_counter(); BFS(np, sources=[src]).run_static(graph, vm); sta.append(time.perf_counter() - t0)
print(f"cnr-2000 1% batch {which}: update {statistics.median(inc)*1e3:.2f} ms, fresh static "
      f"{statistics.median(sta)*1e3:.2f} ms (medians of 7, caches flushed before each); update/static "
      f"{statistics.median(inc)/statistics.median(sta):.3f}; work {works[-1]}; skipped tries: {job._tries}")
