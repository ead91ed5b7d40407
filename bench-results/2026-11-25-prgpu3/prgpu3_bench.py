"""Device driver of branch prgpu3 (issue 12 goal 2, issue 11's GPU incremental PageRank).

Usage: python prgpu3_bench.py OUT.json SCALES [VARIANTS] (run from the worktree's root)

Part A, per R-MAT scale (edge factor 16, tol 1e-6): the library SpMV (the bench's ``_spmv_seconds``: cupyx
``A.T @ x``), the transposes (``pk.in_edges`` atomic / sort, cuSPARSE's ``a.T.tocsr()``), one fused Google sweep
per lanes-per-row width (CUDA events over 30 queued sweeps), the static runs (default = fused Google, the array
program's Google and Jacobi forms) with iterations, their L1 distance to an exact run and to each other.

Part B: incremental updates at 0.01 % / 0.1 % batches (3 batches after a warm-up batch), every variant's job
updated with the same deltas on one graph (``VARIANTS``: name=param:value;... as in prgpu2's driver); the
``prof`` variant (the default with every raw kernel between CUDA events, host and device marks around the
update's phases, and the push's control block copied after every round) says where an update's time goes.
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())                        # the worktree's root: its vinestream and tests
if os.environ.get("DRY_RUN"):                          # NumPy, the kernels' host emulation (a check of this script)
    import dry_cupy as cp
else:
    import cupy as cp

import vinestream.algorithms.pagerank as prmod
from vinestream.algorithms import pagerank_kernels as pk
from vinestream.algorithms.pagerank import PageRank
from vinestream.stream.bench.algorithms import IdentityVertexMap, _spmv_seconds, random_delta, rmat_edges
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build

TOL = 1e-6
out_path, scales = sys.argv[1], [int(s) for s in sys.argv[2].split(",")]
STRINGS, BOOLS = {"push_mode", "sweeps"}, {"fused_push", "push_graph", "fused"}


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


VARIANTS = parse(sys.argv[3] if len(sys.argv) > 3 else "def=,graph=push_graph:1,prof=")


def sync():
    cp.cuda.Device().synchronize()


def timed(fn, reps=1):
    ts = []
    for _ in range(reps):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), ts


def gpu_ms(fn):
    a, b = cp.cuda.Event(), cp.cuda.Event()
    sync()
    a.record()
    fn()
    b.record()
    b.synchronize()
    return cp.cuda.get_elapsed_time(a, b)


class Profiler:
    """Every raw kernel of an update between CUDA events; marks (host time, event) around its phases; the
    push's control block copied (on the device) after every pr_push."""

    def __init__(self, job):
        self.job, self.recs, self.marks, self.snaps = job, [], [], []
        self.inner = pk.launcher

    def __call__(self, xp, name, n, args):
        a = cp.cuda.Event()
        a.record()
        self.inner(xp, name, n, args)
        b = cp.cuda.Event()
        b.record()
        self.recs.append((name, a, b))
        if name == "pr_push":
            self.snaps.append(args[4].copy())

    def mark(self, name):
        e = cp.cuda.Event()
        e.record()
        self.marks.append((name, time.perf_counter(), e))

    def wrap(self, fn, name):
        def inner(*a, **kw):
            self.mark(name + "0")
            res = fn(*a, **kw)
            self.mark(name + "1")
            return res
        return inner

    def update(self, g, delta, vm):
        job = self.job
        saved = (pk.launcher, pk.fused_corrections, prmod.unique_sorted, pk.FusedPush.run, pk.FusedPush.__init__)
        self.recs, self.marks, self.snaps = [], [], []
        self.inner = pk.launcher
        pk.launcher = self
        pk.fused_corrections = self.wrap(saved[1], "corr")
        prmod.unique_sorted = self.wrap(saved[2], "uniq")
        pk.FusedPush.run = self.wrap(saved[3], "run")
        pk.FusedPush.__init__ = self.wrap(saved[4], "init")
        job._follow_live = self.wrap(job._follow_live, "live")
        try:
            sync()
            self.mark("start")
            job.update(g, delta, vm)
            self.mark("end")
            sync()
        finally:
            (pk.launcher, pk.fused_corrections, prmod.unique_sorted, pk.FusedPush.run, pk.FusedPush.__init__) = saved
            del job._follow_live
        t0, e0 = self.marks[0][1], self.marks[0][2]
        marks = [(n, round((t - t0) * 1e3, 4), round(cp.cuda.get_elapsed_time(e0, e), 4)) for n, t, e in self.marks]
        kern = {}
        for name, a, b in self.recs:
            kern.setdefault(name, []).append(cp.cuda.get_elapsed_time(a, b))
        rounds = []
        prev = [0.0] * pk.P_CTL
        sel = [v for n, _, _ in self.recs for v in [n] if n == "pr_push_select"]
        ks, kc, kp = kern.get("pr_push_select", []), kern.get("pr_push_check", []), kern.get("pr_push", [])
        for i, s in enumerate(self.snaps):
            c = cp.asnumpy(s).tolist()
            rounds.append({"select_ms": round(ks[i], 4), "check_ms": round(kc[i], 4), "push_ms": round(kp[i], 4),
                           "edges": c[pk.P_EDGES] - prev[pk.P_EDGES], "pushes": c[pk.P_PUSHES] - prev[pk.P_PUSHES],
                           "R": c[pk.P_RESIDUAL], "theta": c[pk.P_THETA], "done": c[pk.P_DONE]})
            prev = c
        total_kernel = sum(sum(v) for v in kern.values())
        return {"marks_host_ms_gpu_ms": marks, "kernel_ms": {k: [round(sum(v), 4), len(v)] for k, v in kern.items()},
                "kernel_total_ms": round(total_kernel, 4), "rounds": rounds, "n_launches": len(self.recs),
                "n_select": len(sel)}


result = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cupy": cp.__version__,
          "tol": TOL, "variants": VARIANTS, "graphs": []}
print(result["device"], flush=True)


def part_a(scale):
    src, dst = rmat_edges(cp, scale, 16, 0)
    n = 1 << scale
    g = build("csr", cp, src, dst, n)
    del src, dst
    csr = g.adjacency()
    m = int(g.num_edges)
    vm = IdentityVertexMap(cp)
    out = {"scale": scale, "edges": m}
    out["spmv_ms"] = _spmv_seconds(cp, csr, 7) * 1e3
    for method in ("atomic", "sort"):
        pk.in_edges(cp, csr.offsets, csr.cols, n, m, method)
        out[f"transpose_{method}_ms"] = timed(lambda method=method: pk.in_edges(cp, csr.offsets, csr.cols, n, m,
                                                                                 method), 5)[0] * 1e3
    try:
        import cupyx.scipy.sparse as sp
        amat = sp.csr_matrix((cp.ones(m), csr.cols, csr.offsets), shape=(n, n))
        amat.T.tocsr()
        out["transpose_cusparse_ms"] = timed(lambda: amat.T.tocsr(), 5)[0] * 1e3
        amat = None
    except ImportError:                                 # a dry run on NumPy
        out["transpose_cusparse_ms"] = float("nan")
    live = cp.ones(n, dtype=bool)
    out["google_build_ms"] = timed(lambda: pk.GoogleSweep(cp, csr, n, 0.85, live), 3)[0] * 1e3
    sweeps = {}
    for tpr in (2, 4, 8, 16, 32, None):
        sw = pk.GoogleSweep(cp, csr, n, 0.85, live, tpr=tpr)
        sw.run(cp.full(n, 1.0 / n), n, 0.0, 5)
        ms = gpu_ms(lambda sw=sw: sw.run(cp.full(n, 1.0 / n), n, 0.0, 30))
        # kernels only: 20 sweeps queued, no read
        x0, x1, w0, w1 = cp.full(n, 1.0 / n), cp.empty(n), cp.full(n, 1.0 / n) * sw.scale, cp.empty(n)
        sw.ctl[:] = 0
        sw.ctl[pk.LIMIT], sw.ctl[pk.G_LIVE], sw.ctl[pk.G_DAMPING], sw.ctl[pk.G_SPREAD] = 1e9, n, 0.85, 0.15 / n
        kms = gpu_ms(lambda sw=sw, b=(x0, w0, x1, w1): [sw._enqueue(*b) for _ in range(20)])
        sweeps[str(tpr or sw.tpr) + ("(default)" if tpr is None else "")] = {
            "ms_per_sweep_with_reads": ms / 30, "kernels_ms_per_sweep": kms / 20, "reads_30": sw.reads,
            "heavy_rows": int(sw.heavy.shape[0])}
        del sw
    out["google_sweep"] = sweeps
    print(f"rmat{scale}: {m} edges, spmv {out['spmv_ms']:.3f} ms; transposes atomic {out['transpose_atomic_ms']:.2f} "
          f"sort {out['transpose_sort_ms']:.2f} cusparse {out['transpose_cusparse_ms']:.2f}; build "
          f"{out['google_build_ms']:.2f}; sweeps {json.dumps(sweeps)}", flush=True)
    exact = PageRank(cp, tol=1e-12, fused=False)
    exact.run_static(g, vm)
    statics, jobs = {}, {}
    for name, kw in (("fused_google", {}), ("fused_google_sort", {"_transpose": "sort"}),
                     ("fused_google_atomic", {"_transpose": "atomic"}),
                     ("array_google", {"fused": False}), ("jacobi_default", {"sweeps": "jacobi"}),
                     ("fused_jacobi", {"sweeps": "jacobi", "fused": True})):
        kw = dict(kw)
        tr = kw.pop("_transpose", None)
        saved = pk.TRANSPOSE
        if tr:
            pk.TRANSPOSE = tr
        job = jobs[name] = PageRank(cp, tol=TOL, **kw)
        job.run_static(g, vm)
        secs, each = timed(lambda job=job: job.run_static(g, vm), 7)
        pk.TRANSPOSE = saved
        it = int(job.work["iterations"])
        statics[name] = {"ms": secs * 1e3, "each_ms": [t * 1e3 for t in each], "iterations": it,
                         "ms_per_iteration": secs * 1e3 / it, "over_spmv": secs * 1e3 / it / out["spmv_ms"],
                         "l1_to_exact": float(cp.abs(job.ranks() - exact.ranks()).sum()),
                         "error_bound": job.error_bound(),
                         "reads": getattr(job.last_sweep, "reads", None) if job.last_sweep is not None else None}
        if name == "fused_google":
            ref = job
        else:
            statics[name]["l1_to_fused_google"] = float(cp.abs(job.ranks() - ref.ranks()).sum())
        print(f"  static {name}: {json.dumps(statics[name])}", flush=True)
    # the array program's own static run: the same start, rounds and push state as the fused one
    arr = jobs["array_google"]
    out["fused_vs_array"] = {"rounds": arr.work["iterations"], "fused_rounds": ref.work["iterations"],
                             "max_abs_z": float(cp.abs(arr.z - ref.z).max()),
                             "max_abs_r": float(cp.abs(arr.r - ref.r).max()), "max_z": float(cp.abs(arr.z).max()),
                             "l1_ranks": float(cp.abs(arr.ranks() - ref.ranks()).sum())}
    print(f"  fused vs array: {out['fused_vs_array']}", flush=True)
    out["static"] = statics
    return g, out


def part_b(g, out, scale, fractions=(1e-4, 1e-3)):
    vm = IdentityVertexMap(cp)
    m = int(g.num_edges)
    jobs, profs = {}, {}
    for k, kw in VARIANTS.items():
        jobs[k] = PageRank(cp, tol=TOL, **kw)
        jobs[k].run_static(g, vm)
        if k.startswith("prof"):
            profs[k] = Profiler(jobs[k])
    rows = []
    for warm in (True, False):
        for i, f in enumerate(fractions):
            per = {k: [] for k in jobs}
            statics = []
            for b in range(1 if warm else 3):
                delta = random_delta(cp, g, max(2, int(round(f * m))), (0 if warm else 1000) + 1 + i * 97 + b)
                apply_delta(g, delta)
                for k, job in jobs.items():
                    if k in profs:
                        t0 = time.perf_counter()
                        prof = profs[k].update(g, delta, vm)
                        t = time.perf_counter() - t0
                    else:
                        t, prof = timed(lambda job=job, delta=delta: job.update(g, delta, vm))[0], None
                    w = dict(job.work)
                    push = job.last_push
                    w.update(reads=getattr(push, "reads", None), graph_used=getattr(push, "graph_used", None),
                             selects=int(push.ctl[pk.P_SELECTS]) if push is not None else None)
                    per[k].append((t, w, prof))
                fresh = PageRank(cp, tol=TOL)
                statics.append(timed(lambda fresh=fresh: fresh.run_static(g, vm))[0])
                for k, job in jobs.items():
                    per[k][-1][1]["l1_to_static"] = float(cp.abs(job.ranks() - fresh.ranks()).sum())
            if warm:
                continue
            row = {"fraction": f, "static_ms": statistics.mean(statics) * 1e3, "static_each_ms":
                   [s * 1e3 for s in statics], "variants": {}}
            for k in jobs:
                ts = [t for t, _, _ in per[k]]
                row["variants"][k] = v = {"ms": statistics.mean(ts) * 1e3, "each_ms": [t * 1e3 for t in ts],
                                          "speedup": statistics.mean(statics) / statistics.mean(ts),
                                          "work": [w for _, w, _ in per[k]],
                                          "profile": [p for _, _, p in per[k] if p is not None]}
                ws = v["work"]
                print(f"  rmat{scale} {f:.2%} {k:6s} inc {v['ms']:7.3f} ms static {row['static_ms']:6.2f} ms "
                      f"speedup {v['speedup']:5.2f} it {[w['iterations'] for w in ws]} edges/E "
                      f"{[round(w['edges_touched'] / m, 2) for w in ws]} reads {[w['reads'] for w in ws]} graph "
                      f"{[w['graph_used'] for w in ws]} l1 {max(w['l1_to_static'] for w in ws):.2e} bound "
                      f"{max(w['error_bound'] for w in ws):.2e} {ws[-1]['mode']}", flush=True)
                for p in v["profile"]:
                    print(f"    prof: marks {p['marks_host_ms_gpu_ms']}\n    kernels {p['kernel_ms']} total "
                          f"{p['kernel_total_ms']} launches {p['n_launches']}", flush=True)
                    print("    rounds " + " | ".join(f"{r['select_ms']:.3f}/{r['check_ms']:.3f}/{r['push_ms']:.3f} "
                                                     f"e{int(r['edges'])} p{int(r['pushes'])}" for r in p["rounds"]),
                          flush=True)
            rows.append(row)
    out["updates"] = rows


for scale in scales:
    g, out = part_a(scale)
    result["graphs"].append(out)
    json.dump(result, open(out_path, "w"), indent=1)
    part_b(g, out, scale)
    json.dump(result, open(out_path, "w"), indent=1)
    del g
    cp.get_default_memory_pool().free_all_blocks()
