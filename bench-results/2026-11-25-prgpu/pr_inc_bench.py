"""Incremental vs static PageRank on the GPU, as `vinestream bench algorithms` measures it: per batch fraction,
random deltas (half deletions, half insertions: stream.bench.algorithms.random_delta) applied to a "csr" R-MAT
graph, each variant's ``update`` timed (synchronised) against a fresh job's ``run_static`` on the updated graph;
speedup = mean static / mean incremental over the reported batches (after a warm-up pass that compiles).

Usage: python pr_inc_bench.py ROOT OUT.json SCALES VARIANTS
  ROOT: the checkout whose vinestream is imported (main's root or a worktree);
  VARIANTS: comma list of name=param:value;param:value (e.g. main=, push1=push_scale:1, array=fused_push:0).
All variants keep their own job on the same graph sequence (interleaved), so their ratios share the static times.
"""
import json
import statistics
import sys
import time

root, out_path, scales = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3].split(",")]
sys.path.insert(0, root)
import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402

from vinestream.algorithms.pagerank import PageRank  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta, rmat_edges  # noqa: E402
from vinestream.structures.delta import apply_delta  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402


def parse(spec):
    out = {}
    for item in spec.split(","):
        name, _, params = item.partition("=")
        kw = {}
        for p in filter(None, params.split(";")):
            k, _, v = p.partition(":")
            kw[k] = bool(int(v)) if k == "fused_push" else float(v)
        out[name] = kw
    return out


def timed(fn):
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    fn()
    cp.cuda.Device().synchronize()
    return time.perf_counter() - t


variants = parse(sys.argv[4])
TOL = 1e-6
result = {"root": root, "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "tol": TOL,
          "variants": variants, "graphs": []}
for scale in scales:
    src, dst = rmat_edges(cp, scale, 16, 0)
    n = 1 << scale
    g = build("csr", cp, src, dst, n)
    del src, dst
    m = int(g.num_edges)
    vm = IdentityVertexMap(cp)
    jobs = {k: PageRank(cp, tol=TOL, **kw) for k, kw in variants.items()}
    for j in jobs.values():
        j.run_static(g, vm)
        if hasattr(j, "_fused_push"):          # the propagation's share of an update (one sync more)
            def wrapped(*a, _orig=j._fused_push, _job=j, **kw):
                cp.cuda.Device().synchronize()
                t0 = time.perf_counter()
                res = _orig(*a, **kw)
                cp.cuda.Device().synchronize()
                _job._push_seconds = time.perf_counter() - t0
                return res
            j._fused_push = wrapped
    st = PageRank(cp, tol=TOL)
    st.run_static(g, vm)
    static0 = statistics.median([timed(lambda: PageRank(cp, tol=TOL).run_static(g, vm)) for _ in range(3)])
    gr = {"scale": scale, "edges": m, "static_seconds": static0, "static_iterations": st.work["iterations"],
          "rows": []}
    print(f"rmat{scale}: {m} edges, static {static0 * 1e3:.2f} ms, {st.work['iterations']} it", flush=True)
    for warm in (True, False):
        for i, f in enumerate((1e-4, 1e-3, 1e-2)):
            batches = 1 if warm else 3
            per = {k: [] for k in jobs}
            statics = []
            for b in range(batches):
                delta = random_delta(cp, g, max(2, int(round(f * m))), (0 if warm else 1000) + 1 + i * 97 + b)
                apply_delta(g, delta)
                for k, job in jobs.items():
                    job._push_seconds = None
                    t = timed(lambda job=job: job.update(g, delta, vm))
                    per[k].append((t, dict(job.work, push_seconds=job._push_seconds)))
                fresh = PageRank(cp, tol=TOL)
                statics.append(timed(lambda: fresh.run_static(g, vm)))
                for k, job in jobs.items():
                    w = per[k][-1][1]
                    w["l1_to_static"] = float(cp.abs(job.ranks() - fresh.ranks()).sum())
                    w["static_error_bound"] = fresh.error_bound()
            if warm:
                continue
            row = {"fraction": f, "changed": max(2, int(round(f * m))), "static_seconds": statistics.mean(statics),
                   "static_each": statics, "variants": {}}
            for k in jobs:
                ts = [t for t, _ in per[k]]
                ws = [w for _, w in per[k]]
                row["variants"][k] = {
                    "incremental_seconds": statistics.mean(ts), "each": ts,
                    "speedup": statistics.mean(statics) / statistics.mean(ts),
                    "iterations": [int(w.get("iterations", 0)) for w in ws],
                    "modes": [w.get("mode") for w in ws],
                    "edges_touched": [int(w.get("edges_touched", 0)) for w in ws],
                    "vertices_touched": [int(w.get("vertices_touched", 0)) for w in ws],
                    "push_seconds": [w.get("push_seconds") for w in ws],
                    "frontier": [int(w.get("frontier", 0)) for w in ws],
                    "l1_to_static": max(w["l1_to_static"] for w in ws),
                    "error_bound": max(float(w.get("error_bound", 0)) for w in ws),
                    "static_error_bound": max(w["static_error_bound"] for w in ws)}
                v = row["variants"][k]
                print(f"  {f:.2%} {k:8s} inc {v['incremental_seconds'] * 1e3:7.2f} ms  static "
                      f"{row['static_seconds'] * 1e3:7.2f} ms  speedup {v['speedup']:5.2f}  it {v['iterations']} "
                      f"edges/E {[round(e / m, 2) for e in v['edges_touched']]}  l1 {v['l1_to_static']:.2e} "
                      f"bound {v['error_bound']:.2e} {v['modes'][-1]} push_ms "
                      f"{[round(s * 1e3, 2) if s else None for s in v['push_seconds']]}", flush=True)
            gr["rows"].append(row)
    result["graphs"].append(gr)
    del g, jobs
    cp.get_default_memory_pool().free_all_blocks()
    json.dump(result, open(out_path, "w"), indent=1)
json.dump(result, open(out_path, "w"), indent=1)
