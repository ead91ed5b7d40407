"""Device driver of branch princ4 (princ3's, renamed), from princ, princ2 and princ3 (issue 11: GPU incremental PageRank >= 5x / 3x static).

Usage: python princ_bench.py OUT.json SCALES LABEL (run from a worktree's root: it imports that tree's vinestream)

Per R-MAT scale (edge factor 16, tol 1e-6), as ``vinestream bench algorithms`` measures PageRank
(stream/bench/algorithms.py ``_bench_batches``: the same ``random_delta``, synchronize + perf_counter around
``job.update`` and around a fresh job's ``run_static`` on the updated graph, a warm-up pass first): static runs
(median of 5) and 3 batches per fraction at 0.01 / 0.1 / 1 %; then one more batch per fraction profiled: every
raw kernel between CUDA events (per-kernel device ms and launch counts), the update's host ms, the push's
control-block reads, rounds and edges pushed; and (princ3) the host's own timeline: when each raw kernel was first
launched and the host ms spent in each stage of the update (``host_stages``: functions wrapped, no syncs added).
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())                        # the tree's root: its vinestream
if os.environ.get("DRY_RUN"):                          # NumPy posing as CuPy (a check of this script)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import dry_cupy as cp
else:
    import cupy as cp

from vinestream.algorithms import create_job
from vinestream.algorithms import pagerank_kernels as pk
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta, rmat_edges
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build

if os.environ.get("PRINC_DEFINES", "0") not in ("", "0"):   # compile-time macros: NAME=VALUE+NAME=VALUE...
    from vinestream.structures.raw_kernels import RawKernels
    defs = dict(d.split("=") for d in os.environ["PRINC_DEFINES"].split("+"))
    if "PR_SELECT_ROWS" in defs:                       # the host's tiles follow the select's rows per thread
        pk.SELECT_ROWS = int(defs["PR_SELECT_ROWS"])
    pk._kernels = RawKernels("".join(f"#define {k} {v}\n" for k, v in defs.items()) + pk.SOURCE, "PageRank")
    print("defines", defs, flush=True)

for item in filter(None, os.environ.get("PRINC_SET", "0").split("+")):   # module ints: NAME=VALUE+NAME=VALUE...
    if item != "0":
        name, _, value = item.partition("=")
        setattr(pk, name, int(value))
        print("set", name, value, flush=True)

TOL = 1e-6
FRACTIONS = tuple(float(f) for f in os.environ.get("PRINC_FRACTIONS", "1e-4,1e-3,1e-2").split(","))
out_path, scales, label = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], sys.argv[3]
# more PageRank jobs updated with the same deltas (this tree's parameters): "name=param:value;param:value,..."
VARIANTS = {}
for item in filter(None, (sys.argv[4] if len(sys.argv) > 4 else "").split(",")):
    vname, _, params = item.partition("=")
    VARIANTS[vname] = {k: (v if k == "push_form" else float(v)) for k, _, v in
                       (p.partition(":") for p in filter(None, params.split(";")))}
    for k in ("push_lanes",):
        if k in VARIANTS[vname]:
            VARIANTS[vname][k] = int(VARIANTS[vname][k])


def sync():
    cp.cuda.Device().synchronize()


def timed(fn, *args):
    sync()
    t = time.perf_counter()
    fn(*args)
    sync()
    return time.perf_counter() - t


class Profiler:
    """Every raw kernel of an update between CUDA events (pk.launcher wrapped)."""

    def __init__(self):
        self.recs = []
        self.inner = pk.launcher

    def __call__(self, xp, name, n, args):
        self.host_first.setdefault(name, (time.perf_counter() - self.t0) * 1e3)
        a = cp.cuda.Event()
        a.record()
        self.inner(xp, name, n, args)
        b = cp.cuda.Event()
        b.record()
        self.recs.append((name, a, b))

    def _wrap(self, fn, stage):
        def wrapped(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                rec = self.stages.setdefault(stage, [0.0, 0, None])
                rec[0] += (time.perf_counter() - t) * 1e3
                rec[1] += 1
                if rec[2] is None:
                    rec[2] = round((t - self.t0) * 1e3, 4)
        return wrapped

    def update(self, job, g, delta, vm):
        self.recs = []
        self.host_first, self.stages = {}, {}
        self.inner = pk.launcher
        pk.launcher = self
        # host stages (no syncs): [host ms, calls, first start ms after the update's start]
        saved = [(pk, "fused_corrections"), (pk.FusedPush, "__init__"), (pk.FusedPush, "run"), (cp, "sort"),
                 (cp, "cumsum"), (cp, "concatenate")]
        saved = [(o, k, getattr(o, k)) for o, k in saved if hasattr(o, k)]
        for o, k, f in saved:
            setattr(o, k, self._wrap(f, k))
        job._follow_live = self._wrap(job._follow_live, "_follow_live")
        g.adjacency = self._wrap(g.adjacency, "adjacency")
        try:
            sync()
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            t0 = self.t0 = time.perf_counter()
            e0.record()
            job.update(g, delta, vm)
            e1.record()
            t1 = time.perf_counter()
            sync()
            t2 = time.perf_counter()
        finally:
            pk.launcher = self.inner
            for o, k, f in saved:
                setattr(o, k, f)
            del job._follow_live, g.adjacency
        kern = {}
        for name, a, b in self.recs:
            kern.setdefault(name, []).append(cp.cuda.get_elapsed_time(a, b))
        # the timeline: the first raw kernel's start and the last one's end after the update's start, and the device
        # time between consecutive raw kernels (CuPy's own kernels, launch gaps, host reads)
        timeline = {}
        if self.recs:
            timeline = {"first_kernel_ms": cp.cuda.get_elapsed_time(e0, self.recs[0][1]),
                        "after_last_kernel_ms": cp.cuda.get_elapsed_time(self.recs[-1][2], e1),
                        "between_kernels_ms": sum(cp.cuda.get_elapsed_time(self.recs[i][2], self.recs[i + 1][1])
                                                  for i in range(len(self.recs) - 1)),
                        "first_push_ms": next((cp.cuda.get_elapsed_time(e0, a) for nm, a, _ in self.recs
                                               if nm == "pr_push_select"), None)}
        push = job.last_push
        return {"host_ms_until_return": (t1 - t0) * 1e3, "wall_ms_synced": (t2 - t0) * 1e3,
                "gpu_span_ms": cp.cuda.get_elapsed_time(e0, e1),
                "kernel_ms": {k: [round(sum(v), 4), len(v)] for k, v in kern.items()},
                "kernel_total_ms": round(sum(sum(v) for v in kern.values()), 4), "launches": len(self.recs),
                "push_reads": getattr(push, "reads", None), "work": dict(job.work), "timeline": timeline,
                "host_first_launch_ms": {k: round(v, 4) for k, v in self.host_first.items()},
                "host_stages": {k: [round(v[0], 4), v[1], v[2]] for k, v in self.stages.items()}}


result = {"label": label, "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cupy": cp.__version__,
          "tol": TOL, "graphs": []}
print(label, result["device"], flush=True)
prof = Profiler()
for scale in scales:
    src, dst = rmat_edges(cp, scale, 16, 0)
    n = 1 << scale
    g = build("csr", cp, src, dst, n)
    del src, dst
    m = int(g.num_edges)
    vm = IdentityVertexMap(cp)
    job = create_job("pagerank", cp, tol=TOL)
    job.run_static(g, vm)
    others = {}
    for vname, kw in VARIANTS.items():
        from vinestream.algorithms.pagerank import PageRank
        others[vname] = PageRank(cp, tol=TOL, **kw)
        others[vname].run_static(g, vm)
    vrows = {vname: [] for vname in others}
    st = [timed(job.run_static, g, vm) for _ in range(5)]
    out = {"scale": scale, "edges": m, "static_ms": statistics.median(st) * 1e3,
           "static_iterations": int(job.work["iterations"]),
           "push_form": getattr(job, "push_form", "residual"), "push_omega": job.push_omega, "rows": []}
    print(f"{label} rmat{scale} E={m} static {out['static_ms']:.3f} ms it {out['static_iterations']}", flush=True)
    for warm in (True, False):
        for i, f in enumerate(FRACTIONS):
            changes = max(2, int(round(f * m)))
            inc, stat, works, l1s = [], [], [], []
            for b in range(1 if warm else 3):
                delta = random_delta(cp, g, changes, (0 if warm else 1000) + 1 + i * 97 + b)
                apply_delta(g, delta)
                inc.append(timed(job.update, g, delta, vm))
                w = dict(job.work)
                w["push_reads"] = getattr(job.last_push, "reads", None)
                works.append(w)
                vt = {}
                for vname, vjob in others.items():          # every batch: a job must see every delta
                    vt[vname] = (timed(vjob.update, g, delta, vm), dict(vjob.work))
                fresh = create_job("pagerank", cp, tol=TOL)
                stat.append(timed(fresh.run_static, g, vm))
                l1s.append(float(cp.abs(job.ranks() - fresh.ranks()).sum()))
                for vname, (t, vw) in vt.items():
                    vw["l1_to_static"] = float(cp.abs(others[vname].ranks() - fresh.ranks()).sum())
                    vw["ms"], vw["static_ms"] = t * 1e3, stat[-1] * 1e3
                    if not warm:
                        vrows[vname].append({"fraction": f, **vw})
            if warm:
                continue
            row = {"fraction": f, "changes": changes, "incremental_ms": [t * 1e3 for t in inc],
                   "static_ms": [t * 1e3 for t in stat], "mean_incremental_ms": statistics.mean(inc) * 1e3,
                   "mean_static_ms": statistics.mean(stat) * 1e3,
                   "speedup": statistics.mean(stat) / statistics.mean(inc), "l1_to_static": max(l1s),
                   "error_bound": max(w["error_bound"] for w in works),
                   "iterations": [w["iterations"] for w in works], "modes": [w["mode"] for w in works],
                   "edges_over_E": [round(w["edges_touched"] / m, 3) for w in works],
                   "push_reads": [w["push_reads"] for w in works]}
            delta = random_delta(cp, g, changes, 5000 + i)
            apply_delta(g, delta)
            row["profile"] = prof.update(job, g, delta, vm)
            for vjob in others.values():
                vjob.update(g, delta, vm)
            out["rows"].append(row)
            p = row["profile"]
            print(f"{label} rmat{scale} {f:.2%} inc {row['mean_incremental_ms']:.3f} ms static "
                  f"{row['mean_static_ms']:.3f} ms speedup {row['speedup']:.2f} it {row['iterations']} edges/E "
                  f"{row['edges_over_E']} reads {row['push_reads']} l1 {row['l1_to_static']:.2e} bound "
                  f"{row['error_bound']:.2e} {row['modes'][-1]}", flush=True)
            print(f"   prof: host {p['host_ms_until_return']:.3f} wall {p['wall_ms_synced']:.3f} gpu "
                  f"{p['gpu_span_ms']:.3f} kernels {p['kernel_total_ms']} launches {p['launches']} reads "
                  f"{p['push_reads']} it {p['work']['iterations']} {json.dumps(p['kernel_ms'])} "
                  f"{json.dumps({k: round(v, 4) for k, v in p['timeline'].items() if v is not None})}", flush=True)
            print(f"   host: first launches {json.dumps(p['host_first_launch_ms'])} stages "
                  f"{json.dumps(p['host_stages'])}", flush=True)
    for vname, rs in vrows.items():
        out.setdefault("variants", {})[vname] = {"params": VARIANTS[vname], "batches": rs}
        for f in FRACTIONS:
            b = [x for x in rs if x["fraction"] == f]
            if b:
                ms, sm = statistics.mean(x["ms"] for x in b), statistics.mean(x["static_ms"] for x in b)
                print(f"{label} rmat{scale} {f:.2%} variant {vname:14s} inc {ms:.3f} ms static {sm:.3f} speedup "
                      f"{sm / ms:.2f} it {[x['iterations'] for x in b]} edges/E "
                      f"{[round(x['edges_touched'] / m, 3) for x in b]} pushes/n "
                      f"{[round(x['frontier'] / n, 2) for x in b]} l1 {max(x['l1_to_static'] for x in b):.2e} "
                      f"bound {max(x['error_bound'] for x in b):.2e}", flush=True)
    result["graphs"].append(out)
    json.dump(result, open(out_path, "w"), indent=1)
    g = job = others = None
    cp.get_default_memory_pool().free_all_blocks()
json.dump(result, open(out_path, "w"), indent=1)
