"""Static triangle counts side by side in one process, interleaved: vinestream's job (this checkout),
the same job as it stands on another checkout (``--before DIR``, e.g. /work/main), NetworKit's
TriangleEdgeScore (the bench's peer, on its own undirected graph built untimed) and scipy's
``(U @ U) .* U`` (``--scipy``; slow on graphs with hubs).

    python bench-results/2026-11-25-tricpu2/side_by_side.py --repeats 7 --before DIR \
        ../shared/data/large/cnr-2000.edges.tsv.gz ../shared/data/static/coAuthorsDBLP.mtx.gz

(DIR holding ``algorithms/triangles.py`` as main has it: ``git show main:algorithms/triangles.py``.
A copy of the 2026-11-25-tricpu driver; only this docstring differs.)

Each repeat runs every contender once, in an order rotated every repeat (whatever ran first
after an idle moment was slower here); medians are
reported with the load average (the machine's 2 cores are shared with other sessions, so only
ratios within one run mean anything).  scipy is skipped where its product needs more than
``--scipy-max-flops`` multiply-adds (cnr-2000: 1.6e10, with an output that does not fit in memory here).
Every run's per-vertex counts are checked against the first contender's (and NetworKit's total).
"""
import argparse
import importlib.util
import json
import os
import resource
import statistics
import sys
import time

import numpy as np

# this checkout's code, not whichever vinestream is installed (a script's sys.path starts at its folder)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from vinestream.algorithms import create_job
from vinestream.algorithms import triangles as tri
from vinestream.stream.bench import peers as pe
from vinestream.stream.bench.algorithms import IdentityVertexMap, load_edge_list
from vinestream.structures.registry import build


def cpu_seconds():
    """User + system CPU seconds of this process (all threads: NetworKit's OpenMP workers included)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _job_from(root):
    """The Triangles class of another checkout's algorithms/triangles.py (its package imports stay ours)."""
    spec = importlib.util.spec_from_file_location("vinestream.algorithms._triangles_before",
                                                  os.path.join(root, "algorithms", "triangles.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.Triangles


def _measure(path, args, before):
    """One graph: every contender interleaved ``args.repeats`` times; the row of medians and ratios."""
    s, d, n = load_edge_list(np, path)
    graph = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    csr = graph.adjacency()
    src, dst = csr.row_ids().astype(np.int64), csr.cols.astype(np.int64)
    gu = pe.nk_graph(src, dst, n, directed=False)
    contenders = {"ours": create_job("triangles", np)}
    if before is not None:
        contenders["before"] = before(np)
    times = {k: [] for k in contenders}
    times["networkit"] = []
    cpu = {k: [] for k in times}
    deg = np.diff(tri.symmetric_csr(csr, int(graph.vertex_capacity))[0].indptr).astype(np.int64)
    flops = int((deg * deg).sum())
    run_scipy_ok = args.scipy and flops <= args.scipy_max_flops
    if run_scipy_ok:
        times["scipy"] = []
    totals = {}
    for job in contenders.values():
        job.run_static(graph, vm)                 # warm-up
    ref = np.asarray(contenders["ours"].counts)

    def run_job(name):
        job = contenders[name]
        c = cpu_seconds()
        t = time.perf_counter()
        job.run_static(graph, vm)
        times[name].append(time.perf_counter() - t)
        cpu[name].append(cpu_seconds() - c)
        assert (np.asarray(job.counts) == ref).all(), name
        totals[name] = int(job.total)

    def run_networkit(_):
        c = cpu_seconds()
        secs, totals["networkit"] = pe.nk_triangles(gu)
        times["networkit"].append(secs)
        cpu["networkit"].append(cpu_seconds() - c)

    def run_scipy(_):
        secs, totals["scipy"] = pe.scipy_triangles(src, dst, n)
        times["scipy"].append(secs)

    order = [(run_job, k) for k in contenders] + [(run_networkit, None)]
    order += [(run_scipy, None)] if run_scipy_ok else []
    for r in range(args.repeats):
        for fn, arg in order[r % len(order):] + order[: r % len(order)]:      # each goes first in turn
            fn(arg)
            time.sleep(args.pause)
    assert len(set(totals.values())) == 1, totals
    med = {k: statistics.median(v) for k, v in times.items()}
    row = {"graph": os.path.basename(path), "vertices": int(n), "arcs": int(src.shape[0]),
           "triangles": totals["ours"], "repeats": args.repeats, "seconds": times, "median": med,
           "cpu_seconds": cpu, "median_cpu": {k: statistics.median(v) for k, v in cpu.items()},
           "ratio_networkit": med["ours"] / med["networkit"],
           "ratio_scipy": med["ours"] / med["scipy"] if "scipy" in med else None,
           "scipy_flops": flops, "scipy_skipped": bool(args.scipy and not run_scipy_ok),
           "loadavg": os.getloadavg(), "work": contenders["ours"].work}
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--before", default=None)
    ap.add_argument("--scipy", action="store_true", help="time scipy's (U @ U) .* U in every repeat too")
    ap.add_argument("--scipy-max-flops", type=float, default=2e9,
                    help="skip scipy where its product's multiply-adds (sum of squared degrees) pass this")
    ap.add_argument("--json", default=None)
    ap.add_argument("--pause", type=float, default=0.0, help="seconds of idle after each contender's run")
    args = ap.parse_args()
    before = _job_from(args.before) if args.before else None
    print(f"ours: {tri.__file__}" + (f"; before: {args.before}" if args.before else ""), flush=True)
    out = []
    for path in args.graphs:
        row = _measure(path, args, before)
        out.append(row)
        print(f"{row['graph']}: {row['triangles']:,} triangles; " + ", ".join(
            f"{k} {1e3 * v:.1f} ms" + (f" (cpu {1e3 * row['median_cpu'][k]:.0f})" if k in row["median_cpu"] else "")
            for k, v in row["median"].items()) + f"; ours/networkit {row['ratio_networkit']:.2f}"
            + (f", ours/scipy {row['ratio_scipy']:.3f}" if row["ratio_scipy"] else "")
            + f"; load {' '.join(f'{x:.2f}' for x in row['loadavg'])}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main()
