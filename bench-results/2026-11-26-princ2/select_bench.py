"""Device micro-bench of branch princ2: pr_push_select alone (the Google form's select, a pass over the rows) on
R-MAT 20 / 22 out-degrees, by rows per thread (PR_SELECT_ROWS), eager loads (PR_SELECT_EAGER) and grid cap.

Usage: python select_bench.py OUT.json SCALES (from a worktree's root: it imports that tree's vinestream)
State: live rows all 1, r = 0.85 + N(0, 1e-7) (the shift c = -0.85 with T = n, D = 0, d = 0.85), the threshold
such that about a third of the rows queue (as in an update's middle rounds); each launch is timed by CUDA events
(20 launches after 3 warm-ups, alternate parities like the rounds); the queue length is checked against a
CuPy count of the same criterion.  Floors: cupy's r.sum() and a diff of the offsets (the select's reads).
"""
import json
import os
import sys

sys.path.insert(0, os.getcwd())
import cupy as cp
import numpy as np

from vinestream.algorithms import pagerank_kernels as pk
from vinestream.stream.bench.algorithms import rmat_edges
from vinestream.structures.raw_kernels import RawKernels

out_path, scales = sys.argv[1], [int(s) for s in sys.argv[2].split(",")]
VARIANTS = [(4, 0, 1 << 18), (4, 1, 1 << 18), (2, 0, 1 << 18), (2, 1, 1 << 18), (1, 1, 1 << 18),
            (4, 0, 1 << 20), (4, 1, 1 << 20), (2, 1, 1 << 20), (1, 1, 1 << 20), (1, 1, 1 << 22)]
kerns = {}
res = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "rows": []}
print(res["device"], flush=True)


def ev_time(fn, reps=20):
    for i in range(4):                        # parities 0, 1, 0, 1: the next select's counter is zeroed
        fn(i)
    cp.cuda.Device().synchronize()
    ts = []
    for i in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn(i)
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b))
    return float(np.median(ts)), float(np.mean(ts))


for scale in scales:
    n = 1 << scale
    src, _ = rmat_edges(cp, scale, 16, 0)
    deg = cp.bincount(src, minlength=n)
    del src
    offsets = cp.zeros(n + 1, dtype=cp.int64)
    cp.cumsum(deg, out=offsets[1:])
    m = int(offsets[-1])
    live = cp.ones(n, dtype=cp.uint8)
    rng = cp.random.default_rng(1)
    noise = rng.standard_normal(n) * 1e-7
    r = 0.85 + noise
    R = float(cp.abs(noise).sum())
    tpr = 4
    chunk = pk.PUSH_CHUNK_LANES * tpr
    cap = n + m // chunk + 1
    ent_v, ent_s = cp.empty(cap, cp.int32), cp.empty(cap, cp.int32)
    ent_val = cp.empty(cap, cp.float64)
    k = (offsets[1:] - offsets[:-1]).astype(cp.float64)
    theta_unit = float(cp.percentile(cp.abs(noise) / (k + 1.0), 66.0))   # a third of the rows above
    scale_p = theta_unit / R
    expect = int((cp.abs(noise) > theta_unit * (k + 1.0)).sum())
    expect_ent = int(cp.where(cp.abs(noise) > theta_unit * (k + 1.0), cp.maximum((k + chunk - 1) // chunk, 1), 0).sum())
    ctl = cp.zeros(pk.P_CTL, cp.float64)
    qn = cp.zeros(2, cp.int32)

    def reset():
        ctl.fill(0.0)
        ctl[pk.P_GOAL] = 0.0
        ctl[pk.P_LIMIT] = 1e12
        ctl[pk.P_SCALE] = scale_p
        ctl[pk.P_THETA] = scale_p * R
        ctl[pk.P_DAMPING] = 0.85
        ctl[pk.P_OMEGA] = 1.0
        ctl[pk.P_RMIN] = 1e300
        ctl[pk.P_FORM] = 1.0
        ctl[pk.P_ZSUM] = float(n)
        ctl[pk.P_LIVE] = float(n)
        ctl[pk.P_KAPPA] = 1.0
        qn.fill(0)

    t_sum = ev_time(lambda i: r.sum())[0]
    t_diff = ev_time(lambda i: offsets[1:] - offsets[:-1])[0]
    print(f"rmat{scale} n={n} E={m} queue expected {expect} ({expect / n:.2f} n) entries {expect_ent}; floors: "
          f"r.sum {t_sum * 1e3:.1f} us, offsets diff {t_diff * 1e3:.1f} us", flush=True)
    for rows_pt, eager, cap_threads in VARIANTS:
        key = (rows_pt, eager)
        if key not in kerns:
            kerns[key] = RawKernels(f"#define PR_SELECT_ROWS {rows_pt}\n#define PR_SELECT_EAGER {eager}\n" + pk.SOURCE,
                                    "PageRank")
        kr = kerns[key]
        items = -(-n // (pk.BLOCK * rows_pt)) * pk.BLOCK

        def launch(i, kr=kr, items=items, cap_threads=cap_threads):
            par = i % 2
            kr.launch(cp, "pr_push_select", min(items, cap_threads),
                      (r, offsets, ctl, ent_v, ent_s, ent_val, qn[par:], np.int64(n), np.int64(items),
                       np.int32(chunk), live, qn, np.int32(par)))
        reset()
        launch(0)
        got = int(qn[0])
        ok = (got == expect_ent and float(ctl[pk.P_RESIDUAL]) > 0 and int(ctl[pk.P_DONE]) == 0)
        reset()
        med, mean = ev_time(launch)
        row = {"scale": scale, "rows_per_thread": rows_pt, "eager": eager, "cap": cap_threads, "us_median": med * 1e3,
               "us_mean": mean * 1e3, "entries": got, "entries_expected": expect_ent, "ok": bool(ok),
               "R": float(ctl[pk.P_RESIDUAL])}
        res["rows"].append(row)
        print(f"rmat{scale} select rows/thread {rows_pt} eager {eager} cap {cap_threads:>8d}: {med * 1e3:7.1f} us "
              f"(mean {mean * 1e3:.1f}) entries {got}/{expect_ent} ok {row['ok']}", flush=True)
    json.dump(res, open(out_path, "w"), indent=1)
    del r, noise, offsets, ent_v, ent_s, ent_val, k
    cp.get_default_memory_pool().free_all_blocks()
json.dump(res, open(out_path, "w"), indent=1)
