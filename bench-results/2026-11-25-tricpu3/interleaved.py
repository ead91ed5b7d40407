"""Static triangles: this checkout's job against main's (``--before DIR``, holding main's
``algorithms/triangles.py``) and NetworKit's TriangleEdgeScore (the bench's peer call,
``stream.bench.peers.nk_triangles``, on its undirected graph built untimed), interleaved in one
process with the order rotated every repeat; wall and process CPU (all threads) per run, medians,
minima, the per-repeat ratio ours / NetworKit, and the load average before and after.

    git show main:algorithms/triangles.py > /tmp/before/algorithms/triangles.py
    python bench-results/2026-11-25-tricpu3/interleaved.py --before /tmp/before --repeats 9 GRAPH...
"""
import argparse
import importlib.util
import json
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from vinestream.algorithms import triangles as tri
from vinestream.stream.bench import peers as pe
from vinestream.stream.bench.algorithms import IdentityVertexMap, load_edge_list
from vinestream.structures.registry import build


def _module(name, path):
    spec = importlib.util.spec_from_file_location("vinestream.algorithms." + name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_graph(path, before, repeats):
    s, d, n = load_edge_list(np, path)
    graph = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    csr = graph.adjacency()
    gu = pe.nk_graph(csr.row_ids().astype(np.int64), csr.cols.astype(np.int64), n, directed=False)
    jobs = {"before": before.Triangles(np), "after": tri.Triangles(np)}
    for job in jobs.values():
        job.run_static(graph, vm)
    ref = np.asarray(jobs["after"].counts)
    assert (np.asarray(jobs["before"].counts) == ref).all()
    assert jobs["before"].total == jobs["after"].total
    res = {k: [] for k in [*jobs, "networkit"]}
    names = list(res)
    load0 = os.getloadavg()
    for r in range(repeats):
        for k in names[r % len(names):] + names[:r % len(names)]:
            c = cpu_seconds()
            if k == "networkit":
                wall, total = pe.nk_triangles(gu)
                assert total == jobs["after"].total
            else:
                t = time.perf_counter()
                jobs[k].run_static(graph, vm)
                wall = time.perf_counter() - t
            res[k].append((wall * 1e3, (cpu_seconds() - c) * 1e3))
    load1 = os.getloadavg()
    name = os.path.basename(path)
    print(f"{name}: {jobs['after'].total:,} triangles, {repeats} repeats, "
          f"work after {jobs['after'].work['edges_touched']:,} / before {jobs['before'].work['edges_touched']:,}")
    med = {}
    for k, v in res.items():
        v = np.array(v)
        med[k] = float(np.median(v[:, 0]))
        print(f"  {k:9s} wall median {med[k]:6.1f} ms, min {v[:, 0].min():6.1f}; "
              f"cpu median {np.median(v[:, 1]):6.1f} ms, min {v[:, 1].min():6.1f}")
    pair = np.array(res["after"])[:, 0] / np.array(res["networkit"])[:, 0]
    print(f"  ratio of medians to networkit: before {med['before'] / med['networkit']:.2f}, "
          f"after {med['after'] / med['networkit']:.2f}; after / before {med['after'] / med['before']:.2f}; "
          f"median of per-repeat after / networkit {np.median(pair):.2f}")
    print(f"  load average before {' '.join(f'{x:.2f}' for x in load0)}, after {' '.join(f'{x:.2f}' for x in load1)}")
    return {"graph": name, "triangles": int(jobs["after"].total), "repeats": repeats, "runs_ms": res,
            "median_wall_ms": med, "load_before": load0, "load_after": load1,
            "ratio_after_networkit": med["after"] / med["networkit"],
            "ratio_before_networkit": med["before"] / med["networkit"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--before", required=True)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--json")
    args = ap.parse_args()
    before = _module("_triangles_before", os.path.join(args.before, "algorithms", "triangles.py"))
    out = [run_graph(g, before, args.repeats) for g in args.graphs]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
