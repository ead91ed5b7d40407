#!/usr/bin/env python3
"""The triangles job alone on R-MAT graphs, as `vinestream bench algorithms` times it (stream/bench/algorithms.py:
the static run's median of 5, then per batch fraction a warm-up pass and ``BATCHES`` batches of random deltas, each
job.update timed against a fresh job's run_static, both synchronised).  Run from a tree's root (that tree is measured).

    python3 tri_bench.py LABEL OUT.json SCALES FRACTIONS [JOB-KWARGS-JSON]

e.g. ``tri_bench.py mine out.json 20 1e-4,1e-3,1e-2`` (the bench rows), or with ``{"recount_edges": 0}`` the
incremental path on smaller graphs whatever the recount rule says (the scan behind GPU_RECOUNT_EDGES).
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.getcwd())

if os.environ.get("BACKEND", "gpu") == "gpu":
    import cupy as cp
else:                                      # a smoke test on the CPU
    import numpy as cp

from vinestream.algorithms import create_job
from vinestream.stream.bench.algorithms import IdentityVertexMap, _timed, random_delta, rmat_edges
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build


def main(label, out, scales, fractions, kwargs):
    rows = []
    for scale in scales:
        s, d = rmat_edges(cp, scale, 16, 0)
        n = 1 << scale
        graph = build("csr", cp, s, d, n)
        del s, d
        vm = IdentityVertexMap(cp)
        m = int(graph.num_edges)
        job = create_job("triangles", cp, **kwargs)
        job.run_static(graph, vm)
        t_static, _ = _timed(cp, lambda job=job, graph=graph, vm=vm: job.run_static(graph, vm), 5)
        row = {"tree": label, "scale": scale, "edges": m, "kwargs": kwargs, "static_seconds": t_static,
               "static_edges_per_second": job.work["undirected_edges"] / t_static, "batches": []}
        print(f"{label} scale {scale} edges {m:,} static {t_static * 1e3:.3f} ms", flush=True)
        batches = int(os.environ.get("BATCHES", 3))
        for warm in (True, False):
            for i, f in enumerate(fractions):
                changes = max(2, int(round(f * m)))
                inc, sta, modes, agree = [], [], [], True
                for b in range(1 if warm else batches):
                    delta = random_delta(cp, graph, changes, (0 if warm else 1000) + 1 + i * 97 + b)
                    apply_delta(graph, delta)
                    t_inc, _ = _timed(cp, lambda job=job, graph=graph, delta=delta, vm=vm: job.update(graph, delta, vm))
                    modes.append(job.work["mode"])
                    fresh = create_job("triangles", cp, **kwargs)
                    t_st, _ = _timed(cp, lambda fresh=fresh, graph=graph, vm=vm: fresh.run_static(graph, vm))
                    inc.append(t_inc)
                    sta.append(t_st)
                    agree &= int(job.total) == int(fresh.total)
                if warm:
                    continue
                r = {"fraction": f, "changed_edges": changes, "incremental_seconds": statistics.mean(inc),
                     "incremental_all": inc, "static_seconds": statistics.mean(sta), "modes": modes, "agrees": agree}
                row["batches"].append(r)
                print(f"{label} scale {scale} fraction {f:g} changes {changes:,} incremental "
                      f"{r['incremental_seconds'] * 1e3:.3f} ms {[round(x * 1e3, 3) for x in inc]} static "
                      f"{r['static_seconds'] * 1e3:.3f} ms modes {modes} agrees {agree}", flush=True)
        rows.append(row)
        graph = job = None
        if hasattr(cp, "get_default_memory_pool"):
            cp.get_default_memory_pool().free_all_blocks()
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")],
         [float(x) for x in sys.argv[4].split(",")], json.loads(sys.argv[5]) if len(sys.argv) > 5 else {})
