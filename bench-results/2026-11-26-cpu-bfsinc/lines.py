"""Line timings (line_profiler) of the host update on one batch of the bench's sequence, replayed from copies.

    BATCH=0 python lines.py GRAPH [fraction] [repeats]
"""
import copy
import os
import sys

import numpy as np
from line_profiler import LineProfiler

import prof
from ab import FLUSH, _FLUSH
import vinestream.algorithms.bfs as bfs
import vinestream.algorithms.in_edge_log as iel

name = sys.argv[1]
frac = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 50
graph, vm, job, delta, t_dyn = prof.setup(name, frac, which=int(os.environ.get("BATCH", "0")))
lp = LineProfiler()
for f in (bfs.BFS.update, bfs.BFS._update_host, bfs.repair_host, bfs.relax_rounds_csr, bfs.relax_buckets_host,
          bfs.lowest_offers, bfs._host_rows, iel.InEdgeLog.fold_edges, iel.InEdgeLog._locate,
          iel.InEdgeLog.rows_host, bfs.BFS._flush_backlog, bfs.BFS._in_edge_index):
    lp.add_function(f)
jobs = [copy.deepcopy(job, {id(np): np}) for _ in range(reps)]
for j in jobs:
    if FLUSH:
        np.add(_FLUSH, 1, out=_FLUSH)
    lp.runcall(j.update, graph, delta, vm)
lp.print_stats(output_unit=1e-6, stripzeros=True)
