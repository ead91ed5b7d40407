"""Device micro-bench of branch princ4: pr_push_select and pr_push alone, by compile-time variant, on R-MAT graphs.

Usage: python kernel_bench.py OUT.json SCALES (from a worktree's root: it imports that tree's vinestream)

State (princ2's select_bench): live rows all 1, r = 0.85 + N(0, 1e-7) (the Google form's shift c = -0.85 with
T = n, D = 0, d = 0.85, kappa 1), the threshold such that about a third of the rows queue.  The select's queue is
checked against a CuPy count of the same criterion (entries).  Each variant: the select timed by CUDA events (20
launches after 4 warm-ups, alternate parities like the rounds), then pr_push on the queue of parity 0 (20 launches;
r drifts, the queue and its edges stay the same).  Registers as CuPy's NVRTC compiled them (num_regs).
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
from vinestream.structures.registry import build

out_path, scales = sys.argv[1], [int(s) for s in sys.argv[2].split(",")]
# (label, defines, select rows per thread, select grid cap, push grid cap)
S18, P18 = pk.FRONTIER_THREADS, pk.PUSH_THREADS
VARIANTS = [          # the tree's defaults: PR_SELECT_PIPE 1, PR_SELECT_MIN_BLOCKS 4, PR_PUSH_SMALL 8 ("small8")
    ("small8", "", 2, S18, P18),
    ("main", "#define PR_SELECT_PIPE 0\n#define PR_SELECT_MIN_BLOCKS 0\n#define PR_PUSH_SMALL -1\n", 2, S18, P18),
    ("call1-pipe", "#define PR_PUSH_SMALL -1\n", 2, S18, P18),
    ("small0", "#define PR_PUSH_SMALL 0\n", 2, S18, P18),
    ("small4", "#define PR_PUSH_SMALL 4\n", 2, S18, P18),
    ("small16", "#define PR_PUSH_SMALL 16\n", 2, S18, P18),
    ("small8-push-mb5", "#define PR_PUSH_MIN_BLOCKS 5\n", 2, S18, P18),
    ("small8-again", "", 2, S18, P18),
]
if os.environ.get("KB_VARIANTS"):
    keep = set(os.environ["KB_VARIANTS"].split(","))
    VARIANTS = [v for v in VARIANTS if v[0] in keep]
kerns = {}
res = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "rows": []}
print(res["device"], flush=True)


def ev_time(fn, reps=20):
    for i in range(4):
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
    src, dst = rmat_edges(cp, scale, 16, 0)
    g = build("csr", cp, src, dst, n)
    del src, dst
    adj = g.adjacency()
    offsets = adj.offsets[: n + 1].astype(cp.int64)
    cols = adj.cols.astype(cp.int32)
    m = int(offsets[-1])
    live = cp.ones(n, dtype=cp.uint8)
    rng = cp.random.default_rng(1)
    noise = rng.standard_normal(n) * 1e-7
    r0 = 0.85 + noise
    R = float(cp.abs(noise).sum())
    tpr = max(1, min(pk.PUSH_LANES, pk.threads_per_row(m / n)))
    chunk = pk.PUSH_CHUNK_LANES * tpr
    cap = n + m // chunk + 1
    ent_v, ent_s = cp.empty(cap, cp.int32), cp.empty(cap, cp.int32)
    ent_val = cp.empty(cap, cp.float64)
    k = (offsets[1:] - offsets[:-1]).astype(cp.float64)
    theta_unit = float(cp.percentile(cp.abs(noise) / (k + 1.0), 66.0))
    sel = cp.abs(noise) > theta_unit * (k + 1.0)

    def expected(small):             # a small entry for a selected row of at most ``small`` out-edges (< 0: none)
        ent = cp.maximum((k + chunk - 1) // chunk, 1)
        if small >= 0:
            ent = cp.where(k <= small, 1, ent)
        return int(cp.where(sel, ent, 0).sum())
    sel_edges = int(k[sel].sum())
    ctl = cp.zeros(pk.P_CTL, cp.float64)
    qn = cp.zeros(4, cp.int32)          # [2 p] chunk entries, [2 p + 1] small entries of parity p
    r = r0.copy()
    z = cp.ones(n, cp.float64)

    def reset():
        ctl.fill(0.0)
        ctl[pk.P_LIMIT] = 1e12
        ctl[pk.P_SCALE] = theta_unit / R
        ctl[pk.P_THETA] = theta_unit
        ctl[pk.P_DAMPING] = 0.85
        ctl[pk.P_OMEGA] = 1.0
        ctl[pk.P_RMIN] = 1e300
        ctl[pk.P_FORM] = 1.0
        ctl[pk.P_ZSUM] = float(n)
        ctl[pk.P_LIVE] = float(n)
        ctl[pk.P_KAPPA] = 1.0
        qn.fill(0)

    print(f"rmat{scale} n={n} E={m} tpr {tpr} chunk {chunk} entries expected {expected(-1)} ({int(sel.sum())} rows, "
          f"{sel_edges} edges)", flush=True)
    for label, defines, rows_pt, scap, pcap in VARIANTS:
        if defines not in kerns:
            kerns[defines] = RawKernels(defines + pk.SOURCE, "PageRank")
        kr = kerns[defines]
        small = int(defines.split("PR_PUSH_SMALL ")[1].split()[0]) if "PR_PUSH_SMALL" in defines else 8
        expect_ent = expected(small)
        items = -(-n // (pk.BLOCK * rows_pt)) * pk.BLOCK
        rows_def = f"#define PR_SELECT_ROWS {rows_pt}\n"
        if rows_pt != 2:
            key = rows_def + defines
            if key not in kerns:
                kerns[key] = RawKernels(key + pk.SOURCE, "PageRank")
            kr = kerns[key]

        def select(i, kr=kr, items=items, scap=scap):
            par = i % 2
            kr.launch(cp, "pr_push_select", min(items, scap),
                      (r, offsets, ctl, ent_v, ent_s, ent_val, qn[2 * par:], np.int64(n), np.int64(items),
                       np.int32(chunk), live, qn, np.int32(par), np.int64(cap)))
        r[...] = r0
        reset()
        select(0)
        got = int(qn[0]) + int(qn[1])
        ok = got == expect_ent and float(ctl[pk.P_RESIDUAL]) > 0 and int(ctl[pk.P_DONE]) == 0
        reset()
        s_med, s_mean = ev_time(select)
        # the push on a queue of parity 0 (the check zeroes the other counter: select twice, parity 1 last)
        r[...] = r0
        reset()
        select(0)
        ctl[pk.P_DONE] = 0.0

        def push(i, kr=kr, pcap=pcap):
            kr.launch(cp, "pr_push", min(-(-(n + m // chunk) * tpr // pk.WARP) * pk.WARP, pcap),
                      (offsets, cols, z, r, ctl, ent_v, ent_s, ent_val, qn, np.int32(tpr), np.int32(chunk),
                       np.int64(cap)))
        edges0 = float(ctl[pk.P_EDGES])
        push(0)
        pushed_edges = float(ctl[pk.P_EDGES]) - edges0
        p_med, p_mean = ev_time(push)
        regs = {nm: int(kr._function(cp, nm).num_regs) for nm in ("pr_push_select", "pr_push")}
        row = {"scale": scale, "variant": label, "defines": defines, "rows_per_thread": rows_pt, "select_cap": scap,
               "push_cap": pcap, "select_us_median": s_med * 1e3, "select_us_mean": s_mean * 1e3,
               "push_us_median": p_med * 1e3, "push_us_mean": p_mean * 1e3, "entries": got,
               "entries_expected": expect_ent, "small": small, "ok": bool(ok), "push_edges": pushed_edges,
               "push_edges_ok": pushed_edges == sel_edges, "regs": regs}
        res["rows"].append(row)
        print(f"rmat{scale} {label:16s} select {s_med * 1e3:6.1f} us (mean {s_mean * 1e3:6.1f}) push {p_med * 1e3:7.1f}"
              f" us (mean {p_mean * 1e3:7.1f}) entries ok {ok} edges ok {row['push_edges_ok']} regs {regs}",
              flush=True)
        json.dump(res, open(out_path, "w"), indent=1)
    del r, r0, z, noise, offsets, cols, ent_v, ent_s, ent_val, k, g, adj
    cp.get_default_memory_pool().free_all_blocks()
json.dump(res, open(out_path, "w"), indent=1)
