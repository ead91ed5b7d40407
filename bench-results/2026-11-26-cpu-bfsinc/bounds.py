"""Upper bounds (results wrong on purpose): the update's flushed time with parts of it switched off."""
import copy
import os
import statistics
import sys
import time

import numpy as np

import prof
from ab import _FLUSH
import vinestream.algorithms.in_edge_log as iel
import vinestream.algorithms.bfs as bfs

graph, vm, job, delta, _ = prof.setup(sys.argv[1], 1e-4, which=int(os.environ.get("BATCH", "0")))
variants = ["normal", "no_logs", "no_fold", "no_bookkeeping", "warm_code"]
res = {k: [] for k in variants}
orig_fold = iel.InEdgeLog.fold_edges
orig_budget, orig_skips, orig_rem, orig_learn = (bfs.BFS._repair_budget, bfs.BFS._skips, bfs.BFS._remember_try,
                                                 bfs.BFS._learn_rate)
for r in range(int(sys.argv[2]) if len(sys.argv) > 2 else 25):
    for v in variants:
        j = copy.deepcopy(job, {id(np): np})
        if v == "no_logs":
            j.in_edges.extra = j.in_edges.extra[:0]
            j.in_edges.has_extra[:] = False
        if v == "no_fold":
            iel.InEdgeLog.fold_edges = lambda self, *a, **k: None
        if v == "no_bookkeeping":
            bfs.BFS._repair_budget = lambda self, m: None
            bfs.BFS._remember_try = lambda self, *a: None
            bfs.BFS._learn_rate = lambda self, *a: None
        np.add(_FLUSH, 1, out=_FLUSH)
        if v == "warm_code":                           # the same update on another copy first: code warm
            copy.deepcopy(job, {id(np): np}).update(graph, delta, vm)
        t0 = time.perf_counter()
        j.update(graph, delta, vm)
        res[v].append(time.perf_counter() - t0)
        iel.InEdgeLog.fold_edges = orig_fold
        bfs.BFS._repair_budget, bfs.BFS._remember_try, bfs.BFS._learn_rate = orig_budget, orig_rem, orig_learn
print({k: round(statistics.median(v) * 1e3, 3) for k, v in res.items()}, os.getloadavg())
