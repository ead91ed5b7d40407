"""Breakdown of a forced repair on one graph/fraction: index fold time (folded first, separately), the
repair's time, and how many vertices changed distance against how many the relaxation set (label
correcting: a vertex lowered more than once).  Also the in-rows read for the boundary."""
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


def main(name, f, batches=4):
    s, d, n = load(name)
    graph = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    source = int(np.argmax(np.diff(graph.adjacency().offsets)))
    m = int(graph.num_edges)
    job = B.BFS(np, sources=[source], fallback_fraction=1.0)
    job.run_static(graph, vm)
    job._in_edge_index(graph)
    job._scratch_for(int(graph.vertex_capacity))
    print('bfs from', B.__file__)
    changes = max(2, int(round(f * m)))
    for b in range(batches):
        delta = random_delta(np, graph, changes, 777 + b)
        apply_delta(graph, delta)
        old = job.dist.copy()
        oldp = job.parent.copy()
        job._backlog.append((delta.deleted_src, delta.deleted_dst.astype(np.intp), delta.inserted_src.astype(np.intp), delta.inserted_dst.astype(np.intp)))
        t0 = time.perf_counter()
        job._in_edge_index(graph)
        t1 = time.perf_counter()
        fw = job.in_edges.take_work()
        # repair alone
        dist, parent = job.dist, job.parent
        del_s, del_d = delta.deleted_src, delta.deleted_dst
        cut = del_d[parent[del_d] == del_s]
        info = B.repair_host(dist, parent, graph.adjacency(), lambda: job.in_edges, job._ids, del_s, del_d,
                             delta.inserted_src, delta.inserted_dst, True)
        t2 = time.perf_counter()
        rw = job.in_edges.take_work()
        st = B.BFS(np, sources=[source]); st.run_static(graph, vm)
        assert (st.dist == dist).all()
        changed = int(np.count_nonzero(old != dist))
        up = int(np.count_nonzero((old >= 0) & (dist > old)))
        down = int(np.count_nonzero((dist >= 0) & ((dist < old))))
        print(f"{f:g} #{b}: fold {1e3*(t1-t0):.2f} ms ({fw}), repair {1e3*(t2-t1):.2f} ms; cut {cut.shape[0]} inv {info['invalidated']} "
              f"seeds {info['seeds']} iters {info['iterations']} edges {info['edges']} in-rows {rw} verts {info['vertices']}; "
              f"changed {changed} (up {up}, down {down}), parent changed {int(np.count_nonzero(oldp != parent))}")


if __name__ == "__main__":
    print("load", os.getloadavg())
    main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 4)
