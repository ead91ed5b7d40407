"""The bench's batch sequence (warm-up one batch per fraction, seed 0; then ``batches`` per fraction, seed
1000; stream/bench/algorithms.py) for BFS alone: per batch the default job's update (mode), a forced
repair (fallback_fraction=1) and a static run, with the vertices whose distance went down / up.

    python bench-results/2026-11-25-bfscnr/seq.py GRAPH [batches]
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
sys.path.insert(1, os.path.join(os.path.dirname(__file__), "../2026-11-25-bfscpu"))
from load import load  # noqa: E402
import vinestream.algorithms.bfs as B  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta  # noqa: E402
from vinestream.structures.delta import apply_delta  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402


def main(name, batches=3, fractions=(1e-4, 1e-3, 1e-2)):
    if name.startswith("rmat"):                   # the bench's R-MAT graph: rmat14 = scale 14, edge factor 16
        from vinestream.stream.bench.algorithms import rmat_edges
        s, d = rmat_edges(np, int(name[4:]), 16, 0)
        n = 1 << int(name[4:])
    else:
        s, d, n = load(name)
    graph = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    source = int(np.argmax(np.diff(graph.adjacency().offsets)))
    m = int(graph.num_edges)
    jobs = {"default": B.BFS(np, sources=[source]), "forced": B.BFS(np, sources=[source], fallback_fraction=1.0)}
    for j in jobs.values():
        j.run_static(graph, vm)
    for warm_up in (True, False):
        seed = 0 if warm_up else 1000
        for i, f in enumerate(fractions):
            changes = max(2, int(round(f * m)))
            for b in range(1 if warm_up else batches):
                delta = random_delta(np, graph, changes, seed + 1 + i * 97 + b)
                apply_delta(graph, delta)
                old = jobs["forced"].dist.copy()
                t = {}
                for who, job in jobs.items():
                    t0 = time.perf_counter()
                    job.update(graph, delta, vm)
                    t[who] = time.perf_counter() - t0
                st = B.BFS(np, sources=[source])
                t0 = time.perf_counter()
                st.run_static(graph, vm)
                t["static"] = time.perf_counter() - t0
                new = jobs["forced"].dist
                assert (st.dist == new).all() and (st.dist == jobs["default"].dist).all()
                w = jobs["forced"].work
                down = int(np.count_nonzero((new >= 0) & (new < old)))
                up = int(np.count_nonzero(new > old))
                print(f"{'warm' if warm_up else 'pass'} {f:g} #{b}: default {1e3*t['default']:6.2f} ms "
                      f"({jobs['default'].work['mode'][:6]}{'*' if 'aborted_repair_edges' in jobs['default'].work else ''}) forced {1e3*t['forced']:6.2f} static {1e3*t['static']:6.2f}; "
                      f"levels {st.work['iterations']}, down {down} up {up} inv {w['invalidated']} seeds {w['seeds']} "
                      f"edges {w['edges_touched']} (index {w['index_edges']})", flush=True)
                dj = jobs["default"]
                if os.environ.get("BFSCNR_DEBUG"):
                    print("   budget %.3g edge_ns %s static_ms %s tries %s" % (
                        dj._repair_budget(m), dj._edge_seconds and round(min(dj._edge_seconds) * 1e9, 2),
                        [round(x * 1e3, 1) for x in dj._static_seconds], [(t[0], t[1] if t[1] == float("inf") else round(t[1]), t[2], t[3]) for t in dj._tries]))


if __name__ == "__main__":
    print("load", os.getloadavg())
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
    print("load", os.getloadavg())
