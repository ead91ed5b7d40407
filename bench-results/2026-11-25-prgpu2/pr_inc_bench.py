"""Incremental vs static PageRank on the GPU, as `vinestream bench algorithms` measures it (copied from
bench-results/2026-11-25-prgpu and extended): per batch fraction, random deltas (half deletions, half insertions:
stream.bench.algorithms.random_delta) applied to a "csr" R-MAT graph, each variant's ``update`` timed
(synchronised) against a fresh job's ``run_static`` on the updated graph; speedup = mean static / mean
incremental over the reported batches (after a warm-up pass that compiles).

Usage: python pr_inc_bench.py ROOT OUT.json SCALES VARIANTS
  ROOT: the checkout whose vinestream is imported (main's root or a worktree);
  VARIANTS: comma list of name=param:value;param:value (e.g. main=, sel=push_mode:select, f4=frontier_scale:4).
  Driver-only params: phases:1 - CUDA events around the update's phases (corrections, push), which adds a few
  event records to that variant's time; push_trace:1 (a PageRank param) - the frontier push's per-round trace
  and an event per round (rounds launched one by one), kept for the last batch of each fraction.
All variants keep their own job on the same graph sequence (interleaved), so their ratios share the static times.
"""
import json
import statistics
import sys
import time

root, out_path, scales = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3].split(",")]
sys.path.insert(0, root)
import cupy as cp  # noqa: E402

from vinestream.algorithms import pagerank_kernels as pk  # noqa: E402
from vinestream.algorithms.pagerank import PageRank  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta, rmat_edges  # noqa: E402
from vinestream.structures.delta import apply_delta  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402

STRINGS = {"push_mode"}
BOOLS = {"fused_push", "push_graph", "push_trace", "phases"}


def parse(spec):
    out = {}
    for item in filter(None, spec.split(",")):
        name, _, params = item.partition("=")
        kw = {}
        for p in filter(None, params.split(";")):
            k, _, v = p.partition(":")
            kw[k] = v if k in STRINGS else bool(int(v)) if k in BOOLS else float(v)
        out[name] = kw
    return out


def timed(fn):
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    fn()
    cp.cuda.Device().synchronize()
    return time.perf_counter() - t


class Phases:
    """CUDA events around one job's update phases: start, corrections (pk.fused_corrections), push, end."""

    def __init__(self, job):
        self.job = job
        self.marks = []
        orig_push = job._fused_push

        def push(*a, **kw):
            self.mark("push0")
            res = orig_push(*a, **kw)
            self.mark("push1")
            return res
        job._fused_push = push

    def mark(self, name):
        e = cp.cuda.Event()
        e.record()
        self.marks.append((name, e))

    def update(self, g, delta, vm):
        import vinestream.algorithms.pagerank as prmod
        orig, orig_uniq, orig_live = pk.fused_corrections, prmod.unique_sorted, self.job._follow_live

        def wrap(fn, name):
            def inner(*a, **kw):
                self.mark(name + "0")
                res = fn(*a, **kw)
                self.mark(name + "1")
                return res
            return inner
        pk.fused_corrections = wrap(orig, "corr")
        prmod.unique_sorted = wrap(orig_uniq, "uniq")
        self.job._follow_live = wrap(orig_live, "live")
        self.marks = []
        try:
            self.mark("start")
            self.job.update(g, delta, vm)
            self.mark("end")
        finally:
            pk.fused_corrections, prmod.unique_sorted = orig, orig_uniq
            del self.job._follow_live

    def read(self):
        self.marks[-1][1].synchronize()
        out, (prev_name, prev) = {}, self.marks[0]
        for name, e in self.marks[1:]:
            out[f"{prev_name}->{name}"] = cp.cuda.get_elapsed_time(prev, e)
            prev_name, prev = name, e
        return out


variants = parse(sys.argv[4])
TOL = 1e-6
result = {"root": root, "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "tol": TOL,
          "cupy": cp.__version__, "variants": variants, "graphs": []}
for scale in scales:
    src, dst = rmat_edges(cp, scale, 16, 0)
    n = 1 << scale
    g = build("csr", cp, src, dst, n)
    del src, dst
    m = int(g.num_edges)
    vm = IdentityVertexMap(cp)
    jobs, phases = {}, {}
    for k, kw in variants.items():
        kw = dict(kw)
        want_phases = kw.pop("phases", False)
        jobs[k] = PageRank(cp, tol=TOL, **kw)
        jobs[k].run_static(g, vm)
        if want_phases:
            phases[k] = Phases(jobs[k])
    st = PageRank(cp, tol=TOL)
    st.run_static(g, vm)
    static0 = statistics.median([timed(lambda: PageRank(cp, tol=TOL).run_static(g, vm)) for _ in range(3)])
    gr = {"scale": scale, "edges": m, "rows": n, "static_seconds": static0,
          "static_iterations": st.work["iterations"], "rows_by_fraction": []}
    print(f"rmat{scale}: {m} edges, static {static0 * 1e3:.2f} ms, {st.work['iterations']} it", flush=True)
    for warm in (True, False):
        for i, f in enumerate((1e-4, 1e-3, 1e-2)):
            batches = 1 if warm else 3
            per = {k: [] for k in jobs}
            statics = []
            traces = {}
            for b in range(batches):
                delta = random_delta(cp, g, max(2, int(round(f * m))), (0 if warm else 1000) + 1 + i * 97 + b)
                apply_delta(g, delta)
                for k, job in jobs.items():
                    if k in phases:
                        t = timed(lambda k=k: phases[k].update(g, delta, vm))
                        extra = {"phases_ms": phases[k].read()}
                    else:
                        t = timed(lambda job=job: job.update(g, delta, vm))
                        extra = {}
                    push = getattr(job, "last_push", None)
                    if push is not None and hasattr(push, "graph_used"):
                        extra.update(graph_used=bool(push.graph_used), reads=int(push.reads),
                                     scans=int(push.ctl[pk.F_SCANS]) if hasattr(pk, "F_SCANS") else None)
                        if getattr(push, "trace_on", False) and job.work.get("iterations"):
                            rows = push.trace_rows().tolist()
                            times = []
                            if push.events:
                                push.events[-1].synchronize()
                                times = [cp.cuda.get_elapsed_time(a, c) for a, c in zip(push.events, push.events[1:])]
                            traces[k] = {"rows": rows, "round_ms_from_2nd": times}
                    per[k].append((t, dict(job.work, **extra)))
                fresh = PageRank(cp, tol=TOL)
                statics.append(timed(lambda: fresh.run_static(g, vm)))
                for k, job in jobs.items():
                    w = per[k][-1][1]
                    w["l1_to_static"] = float(cp.abs(job.ranks() - fresh.ranks()).sum())
                    w["static_error_bound"] = fresh.error_bound()
            if warm:
                continue
            row = {"fraction": f, "changed": max(2, int(round(f * m))), "static_seconds": statistics.mean(statics),
                   "static_each": statics, "variants": {}, "traces": traces}
            for k in jobs:
                ts = [t for t, _ in per[k]]
                ws = [w for _, w in per[k]]
                row["variants"][k] = v = {
                    "incremental_seconds": statistics.mean(ts), "each": ts,
                    "speedup": statistics.mean(statics) / statistics.mean(ts),
                    "l1_to_static": max(w["l1_to_static"] for w in ws),
                    "error_bound": max(float(w.get("error_bound", 0)) for w in ws),
                    "static_error_bound": max(w["static_error_bound"] for w in ws),
                    "work": ws}
                ph = [w["phases_ms"] for w in ws if "phases_ms" in w]
                phs = ({key: round(statistics.mean(p[key] for p in ph), 3) for key in ph[0]} if ph else "")
                print(f"  {f:.2%} {k:9s} inc {v['incremental_seconds'] * 1e3:7.2f} ms  static "
                      f"{row['static_seconds'] * 1e3:7.2f} ms  speedup {v['speedup']:5.2f}  it "
                      f"{[int(w.get('iterations', 0)) for w in ws]} edges/E "
                      f"{[round(int(w.get('edges_touched', 0)) / m, 2) for w in ws]} scans "
                      f"{[w.get('scans') for w in ws]} reads {[w.get('reads') for w in ws]} graph "
                      f"{ws[-1].get('graph_used')} l1 {v['l1_to_static']:.2e} bound {v['error_bound']:.2e} "
                      f"{ws[-1].get('mode')} {phs}", flush=True)
            gr["rows_by_fraction"].append(row)
            json.dump(result | {"graphs": result["graphs"] + [gr]}, open(out_path, "w"))
    result["graphs"].append(gr)
    del g, jobs, phases
    cp.get_default_memory_pool().free_all_blocks()
    json.dump(result, open(out_path, "w"))
json.dump(result, open(out_path, "w"))
