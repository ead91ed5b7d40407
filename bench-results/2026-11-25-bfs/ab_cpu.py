"""Same-process A/B of incremental BFS (before = main's algorithms/bfs.py copied to _bfs_before.py; after =
this branch) against NetworKit's DynBFS and our static / scipy BFS on coAuthorsDBLP and cnr-2000.

Per graph: csr structure, source = highest out-degree vertex; both jobs run static and warm up on one batch
per fraction; then per fraction ``batches`` consecutive random deltas (stream.bench.algorithms.random_delta):
the delta is applied once, and per batch, in alternating order, before.update / after.update (each job has
its own state), then our static (after's run_static on a fresh job), DynBFS.updateBatch, scipy's
breadth_first_order.  Every batch checks both jobs against the fresh static distances.  Thread CPU time
(time.thread_time) and wall time; medians.  Usage: python ab_cpu.py dblp,cnr BATCHES out.json
"""
import json, os, statistics, sys, time
import numpy as np
from vinestream.stream.bench.algorithms import load_edge_list, random_delta, IdentityVertexMap, _host_edges
from vinestream.stream.bench import peers as pe
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build
from vinestream.algorithms.bfs import BFS
from vinestream.algorithms._bfs_before import BFS as BFSBefore
PATHS = {"dblp": "../shared/data/static/coAuthorsDBLP.mtx.gz", "cnr": "../shared/data/large/cnr-2000.edges.tsv.gz"}

def load(name):
    s, d, n = load_edge_list(np, PATHS[name]); k = s != d
    return s[k], d[k], n

def timed(fn):
    c, w = time.thread_time(), time.perf_counter()
    fn()
    return time.thread_time() - c, time.perf_counter() - w

def run(name, fractions, batches, seed=0):
    s, d, n = load(name)
    vm = IdentityVertexMap(np)
    g = build("csr", np, s, d, n)
    m = g.num_edges
    src = int(np.argmax(np.diff(g.adjacency().offsets)))
    jobs = {"before": BFSBefore(np, sources=[src]), "after": BFS(np, sources=[src])}
    if os.environ.get("FORCED"):           # the repair at every size (no recompute above 0.5%)
        jobs["forced"] = BFS(np, sources=[src], fallback_fraction=1e9)
    for j in jobs.values():
        j.run_static(g, vm)
    g_nk = pe.nk_graph(*_host_edges(g), n)
    dyn = pe.nk_dynbfs(g_nk, src)
    out = {"graph": name, "edges": int(m), "source": src, "rows": []}
    for warm in (True, False):
        for i, f in enumerate(fractions):
            k = max(2, int(round(f * m)))
            rec = {"fraction": f, "changes": k, "before": [], "after": [], "before_wall": [], "after_wall": [],
                   "forced": [], "forced_wall": [],
                   "static": [], "static_wall": [], "dynbfs": [], "scipy": [], "exact": True, "modes": []}
            for b in range(1 if warm else batches):
                delta = random_delta(np, g, k, seed + (0 if warm else 1000) + 1 + i * 97 + b)
                apply_delta(g, delta)
                order = [j for j in ("before", "after", "forced") if j in jobs]
                order = order if b % 2 == 0 else order[::-1]
                for key in order:
                    c, w = timed(lambda: jobs[key].update(g, delta, vm))
                    rec[key].append(c); rec[key + "_wall"].append(w)
                fresh = BFS(np, sources=[src])
                c, w = timed(lambda: fresh.run_static(g, vm))
                rec["static"].append(c); rec["static_wall"].append(w)
                rec["exact"] &= all(bool((j.dist[: fresh.dist.shape[0]] == fresh.dist).all()) for j in jobs.values())
                rec["modes"].append(jobs["after"].work["mode"])
                rec["dynbfs"].append(pe.nk_apply_and_update(g_nk, dyn, delta.inserted_src, delta.inserted_dst,
                                                            delta.deleted_src, delta.deleted_dst))
                rec["scipy"].append(pe.scipy_bfs(pe.scipy_matrix(*_host_edges(g), n), src)[0])
            if not warm:
                med = {k2: statistics.median(v) for k2, v in rec.items() if isinstance(v, list) and v and k2 != "modes"}
                rec["median"] = med
                rec["after_over_dynbfs"] = med["after_wall"] / med["dynbfs"]
                rec["before_over_dynbfs"] = med["before_wall"] / med["dynbfs"]
                rec["after_over_before_cpu"] = statistics.median(a / b for a, b in zip(rec["after"], rec["before"]))
                rec["static_over_after"] = med["static_wall"] / med["after_wall"]
                rec["static_over_before"] = med["static_wall"] / med["before_wall"]
                if "forced_wall" in med:
                    rec["static_over_forced"] = med["static_wall"] / med["forced_wall"]
                out["rows"].append(rec)
    return out

if __name__ == "__main__":
    names = sys.argv[1].split(","); batches = int(sys.argv[2])
    fr = [float(x) for x in (sys.argv[4].split(",") if len(sys.argv) > 4 else ["1e-4", "1e-3", "1e-2"])]
    res = {"load_before": os.getloadavg(), "graphs": [run(nm, fr, batches) for nm in names]}
    res["load_after"] = os.getloadavg()
    for gr in res["graphs"]:
        for r in gr["rows"]:
            m = r["median"]
            print(f"{gr['graph']:5} {r['fraction']:.4%} k={r['changes']:6d} before {m['before_wall']*1e3:7.2f} after {m['after_wall']*1e3:7.2f} "
                  f"ms  dynbfs {m['dynbfs']*1e3:6.2f}  static {m['static_wall']*1e3:6.2f} scipy {m['scipy']*1e3:6.2f} | after/dyn {r['after_over_dynbfs']:.2f} "
                  f"before/dyn {r['before_over_dynbfs']:.2f} after/before(cpu) {r['after_over_before_cpu']:.2f} static/after {r['static_over_after']:.2f} exact {r['exact']} {set(r['modes'])}"
                  + (f" forced {m['forced_wall']*1e3:.2f} static/forced {r['static_over_forced']:.2f}" if 'static_over_forced' in r else ""))
    json.dump(res, open(sys.argv[3], "w"), indent=1, default=float)
