"""Why cnr-2000's 0.1% / 1% BFS batches recompute: force the repair (fallback_fraction=1) and report, per
batch, the repair's time, cut / lost / invalidated sizes, seeds, rounds and edges, against a static run.

    python bench-results/2026-11-25-bfscnr/diag.py GRAPH FRACTION [batches]
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
sys.path.insert(1, os.path.join(os.path.dirname(__file__), "../2026-11-25-bfscpu"))
from load import load  # noqa: E402
from vinestream.algorithms.bfs import BFS  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta  # noqa: E402
from vinestream.structures.delta import apply_delta  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402


def main(name, f, batches=4):
    s, d, n = load(name)
    graph = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    source = int(np.argmax(np.diff(graph.adjacency().offsets)))
    m = int(graph.num_edges)
    job = BFS(np, sources=[source], fallback_fraction=1.0)
    job.run_static(graph, vm)
    print("levels", job.work["iterations"], "reached", job.reached())
    changes = max(2, int(round(f * m)))
    for b in range(batches):
        delta = random_delta(np, graph, changes, 777 + b)
        apply_delta(graph, delta)
        job._in_edge_index(graph)         # the index built (first batch) untimed; this batch is folded in the update
        t0 = time.perf_counter()
        job.update(graph, delta, vm)
        t1 = time.perf_counter()
        st = BFS(np, sources=[source])
        st.run_static(graph, vm)
        t2 = time.perf_counter()
        assert (st.dist == job.dist[: st.dist.shape[0]]).all()
        w = job.work
        print(f"{f:g} #{b}: k={changes} repair {1e3*(t1-t0):.2f} ms static {1e3*(t2-t1):.2f} ms "
              f"inv {w['invalidated']} seeds {w['seeds']} iters {w['iterations']} edges {w['edges_touched']} "
              f"index {w['index_edges']} verts {w['vertices_touched']}")


if __name__ == "__main__":
    print("load", os.getloadavg())
    main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 4)
