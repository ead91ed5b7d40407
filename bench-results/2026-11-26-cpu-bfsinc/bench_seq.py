"""The bench's batch sequence on one real graph, exactly as `vinestream bench algorithms` runs it after its static
part: the three jobs' static runs, then _bench_batches twice (the warm-up pass, then the reported pass with the
peers: NetworKit's DynBFS, scipy), CLI fractions and batches (stream/bench/runner.py: 0.01/0.1/1 %, 3 batches).
Prints the BFS rows (mean incremental seconds over the 3 batches, DynBFS's mean, the ratio).

    python bench-results/2026-11-26-cpu-bfsinc/bench_seq.py GRAPH [fractions...]

Run from a worktree's root: the code measured is that checkout's (main's at /work/main/.wt/base).
"""
import gc
import json
import resource
import time
import os
import sys

import numpy as np

sys.path.insert(0, os.getcwd())
sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "2026-11-25-bfscpu"))  # its load.py, seq.py
from load import load  # noqa: E402

import vinestream.algorithms.bfs as bfs_mod  # noqa: E402
from vinestream.algorithms import create_job  # noqa: E402
from vinestream.stream.bench import algorithms as ba  # noqa: E402
from vinestream.stream.bench import peers as pe  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402


def main(name, fractions=(1e-4, 1e-3, 1e-2), batches=3):
    s, d, n = load(name)
    xp = np
    graph = build("csr", xp, s, d, n)
    m = graph.num_edges
    source = int(np.argmax(np.diff(graph.adjacency().offsets)))
    vm = ba.IdentityVertexMap(xp)
    params = {"bfs": {"sources": [source]}, "pagerank": {"tol": 1e-6}}
    jobs = {j: create_job(j, xp, **params.get(j, {})) for j in ba.JOB_NAMES}
    for job in jobs.values():
        job.run_static(graph, vm)
        job.run_static(graph, vm)
    have = pe.available()
    per_batch = {"ours": [], "dynbfs": []}             # every timed call of the reported pass, in order
    bfs_job, inner = jobs["bfs"], jobs["bfs"].update

    gcs = []
    gc.callbacks.append(lambda phase, info: gcs.append((phase, info["generation"], time.perf_counter())))

    def timed_update(*a, **k):
        gcs.clear()
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        inner(*a, **k)
        per_batch["ours"].append((time.perf_counter() - t0) * 1e3)
        per_batch.setdefault("minor_faults", []).append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        # garbage collections inside the timed update (generation, ms), triggered by its allocations
        starts = {g: t for ph, g, t in gcs if ph == "start"}
        per_batch.setdefault("gc_ms", []).append(round(sum((t - starts.get(g, t)) * 1e3 for ph, g, t in gcs
                                                           if ph == "stop"), 3))
    bfs_job.update = timed_update
    nk_inner = pe.nk_apply_and_update

    def nk_timed(*a, **k):
        t = nk_inner(*a, **k)
        per_batch["dynbfs"].append(t * 1e3)
        return t
    pe.nk_apply_and_update = nk_timed
    for warm_up in (True, False):
        rows = ba._bench_batches(xp, graph, jobs, params, vm, m, fractions, 0 + (0 if warm_up else 1000),
                                 batches=1 if warm_up else batches, peers=have if not warm_up else {},
                                 source=source, tol=1e-6, num_vertices=int(n))
    out = [{"per_batch": {k: [round(x, 3) for x in v[-len(per_batch["dynbfs"]):]] for k, v in per_batch.items()}}]
    for row in rows:
        b = row["bfs"]
        dyn = (b.get("peers") or {}).get("networkit_dynbfs")
        out.append({"fraction": row["fraction"], "ours_ms": b["incremental_seconds"] * 1e3,
                    "dynbfs_ms": dyn * 1e3 if dyn else None, "over_dynbfs": (b.get("peers") or {}).get("over_dynbfs"),
                    "static_ms": b["static_seconds"] * 1e3, "speedup": b["speedup"], "modes": b["modes"],
                    "agrees": b["agrees"]})
    return out


if __name__ == "__main__":
    name = sys.argv[1]
    fr = tuple(float(x) for x in sys.argv[2:]) or (1e-4, 1e-3, 1e-2)
    print("code:", bfs_mod.__file__, "load:", os.getloadavg())
    for r in main(name, fr):
        print(json.dumps(r))
