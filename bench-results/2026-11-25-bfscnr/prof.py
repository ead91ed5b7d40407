"""Line profile of the forced repair (fallback_fraction=1) over the bench's batch sequence of one graph,
for the batches of one fraction of the reported pass: repair_host, fold_edges, rows_host, _locate."""
import os
import sys

import numpy as np
from line_profiler import LineProfiler

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
sys.path.insert(1, os.path.join(os.path.dirname(__file__), "../2026-11-25-bfscpu"))
from load import load  # noqa: E402
import vinestream.algorithms.bfs as B  # noqa: E402
import vinestream.algorithms.in_edge_log as L  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta  # noqa: E402
from vinestream.structures.delta import apply_delta  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402


def main(name, frac, batches=3, fractions=(1e-4, 1e-3, 1e-2)):
    s, d, n = load(name)
    graph = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    source = int(np.argmax(np.diff(graph.adjacency().offsets)))
    m = int(graph.num_edges)
    job = B.BFS(np, sources=[source], fallback_fraction=1.0)
    job.run_static(graph, vm)
    lp = LineProfiler(B.repair_host, L.InEdgeLog.fold_edges, L.InEdgeLog.rows_host, L.InEdgeLog._locate,
                      B.lowest_offers, B.relax_buckets_host)
    for warm_up in (True, False):
        seed = 0 if warm_up else 1000
        for i, f in enumerate(fractions):
            changes = max(2, int(round(f * m)))
            for b in range(1 if warm_up else batches):
                delta = random_delta(np, graph, changes, seed + 1 + i * 97 + b)
                apply_delta(graph, delta)
                if not warm_up and f == frac:
                    lp.runcall(job.update, graph, delta, vm)
                else:
                    job.update(graph, delta, vm)
    lp.print_stats(output_unit=1e-3, stripzeros=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
