"""Per-phase seconds of forced repairs (fallback_fraction=1) on the bench's batch sequence of one graph, for
the reported batches of one fraction: the in-edge index fold (index_of), the relaxation, the rest, against a
static run.  ``python bench-results/2026-11-26-bfscnr/phases.py GRAPH FRACTION [reps]``"""
import os
import resource
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("PHASES_ROOT") or os.path.abspath(os.path.join(HERE, "../..")))  # PHASES_ROOT: another checkout (main)
sys.path.insert(1, os.path.join(HERE, "../2026-11-25-bfscpu"))
from load import load  # noqa: E402
import vinestream.algorithms.bfs as B  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta  # noqa: E402
from vinestream.structures.delta import apply_delta  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402

T = {}


def wrap(mod, name, key):
    f = getattr(mod, name)

    def g(*a, **k):
        t = time.perf_counter()
        r = f(*a, **k)
        T[key] = T.get(key, 0.0) + time.perf_counter() - t
        return r
    setattr(mod, name, g)


wrap(B, "relax_buckets_host", "relax")
wrap(B, "relax_rounds_csr", "relax")
orig_index = B.BFS._in_edge_index


def idx(self, graph):
    t = time.perf_counter()
    r = orig_index(self, graph)
    T["index"] = T.get("index", 0.0) + time.perf_counter() - t
    return r


B.BFS._in_edge_index = idx
B.BOTTOM_UP_REPAIR = os.environ.get("BU", "1") == "1"


def main(name, frac, reps=1, batches=3, fractions=(1e-4, 1e-3, 1e-2)):
    s, d, n = load(name)
    for rep in range(reps):
        graph = build("csr", np, s, d, n)
        vm = IdentityVertexMap(np)
        source = int(np.argmax(np.diff(graph.adjacency().offsets)))
        m = int(graph.num_edges)
        job = B.BFS(np, sources=[source], fallback_fraction=1.0)
        job.run_static(graph, vm)
        for warm_up in (True, False):
            seed = 0 if warm_up else 1000
            for i, f in enumerate(fractions):
                changes = max(2, int(round(f * m)))
                for b in range(1 if warm_up else batches):
                    delta = random_delta(np, graph, changes, seed + 1 + i * 97 + b)
                    apply_delta(graph, delta)
                    T.clear()
                    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                    t0 = time.perf_counter()
                    job.update(graph, delta, vm)
                    tot = time.perf_counter() - t0
                    f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                    st = B.BFS(np, sources=[source])
                    t1 = time.perf_counter()
                    st.run_static(graph, vm)
                    ts = time.perf_counter() - t1
                    f2 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                    assert (st.dist == job.dist).all()
                    if not warm_up and f == frac:
                        w = job.work
                        print(f"rep {rep} #{b}: update {tot*1e3:6.2f} ms = index {T.get('index',0)*1e3:5.2f} "
                              f"relax {T.get('relax',0)*1e3:5.2f} rest {(tot-T.get('index',0)-T.get('relax',0))*1e3:5.2f}"
                              f" | static {ts*1e3:6.2f} | edges {w['edges_touched']} index {w['index_edges']} "
                              f"inv {w.get('invalidated')} seeds {w.get('seeds')} mode {w['mode']}; page faults update {f1 - f0} "
                              f"static {f2 - f1}", flush=True)


if __name__ == "__main__":
    print("load", os.getloadavg())
    main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    print("load", os.getloadavg())
