#!/usr/bin/env python3
"""GraphVine's copy-on-write large batches (``large="rewrite"``) against the rows' side on a GPU, one process.

``python3 PATH/cow_bench.py --scale 22 --big 1000000 --rounds 5 --out DIR`` from a checkout's root.
R-MAT ``--scale`` (ef 16, seed 0, self-loops dropped, shuffled: big_bench.py's stream of 2026-11-25-gv4), all
but ``--big`` edges loaded into three structures: ``rows`` (main's default), ``rewrite`` (copy-on-write rows,
waves when the pops do not fit) and ``rewrite-grow`` (copy-on-write, the pool grown to fit every pop).
1. Correctness at scale: the held-out edges inserted, half of them upserted again with new weights, then
   deleted, into all three; masks and the LOGICAL state (every per-vertex array but the block ids, and the
   adjacency: offsets, columns, weights) equal to the rows' side's after each, compared on the device.
2. Timing, interleaved: per round, per variant, the held-out edges inserted then deleted (device synchronised
   around each call); medians.  Then 1,000-edge batches (the one-sync path, which the option leaves alone).
3. Profile: one insert and one delete per variant with a CUDA event pair around every launch (each queued
   behind a spin kernel: device time per kernel), and the device span of a whole call against its wall.
4. Queries (half live, half random) against csr's, and memory after 50% churn (half the loaded edges deleted
   then inserted again in --big batches, as ``bench structures`` does) for each variant.
Writes DIR/cow-SCALE.json and prints a summary.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())

import numpy as np

import vinestream
from vinestream.stream.bench.structures import rmat_edges
from vinestream.structures import backend
from vinestream.structures import graphvine_kernels as gk
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

STRUCTURES = {"rows": {}, "rewrite": {"large": "rewrite"}, "rewrite-grow": {"large": "rewrite", "rewrite_waves": False}}
# timed variants: (structure, attributes set before each call) - gv_cow_copy's lanes per old block switched per call
# (run 2 of this folder timed "rewrite" and "rewrite-grow" at 32 lanes, and "-l16" / "-l8"; the default is now 8:
# its cow-22.json records the variants it ran)
VARIANTS = {"rows": ("rows", {}), "rewrite": ("rewrite", {"rewrite_lanes": 8}),
            "rewrite-grow": ("rewrite-grow", {"rewrite_lanes": 8}),
            "rewrite-grow-l16": ("rewrite-grow", {"rewrite_lanes": 16}),
            "rewrite-grow-l32": ("rewrite-grow", {"rewrite_lanes": 32})}


def logical_equal(cp, a, b) -> bool:
    for k in ("alive", "edge_count", "num_blocks", "last_offset", "in_degree", "block_class"):
        if not bool(cp.array_equal(getattr(a, k), getattr(b, k))):
            print("differs:", k, flush=True)
            return False
    if a.num_edges != b.num_edges or a.num_vertices != b.num_vertices or a.stats["rehomed"] != b.stats["rehomed"]:
        print("differs: counters", a.num_edges, b.num_edges, a.stats, b.stats, flush=True)
        return False
    x, y = a.adjacency(), b.adjacency()
    ok = all(bool(cp.array_equal(getattr(x, k), getattr(y, k))) for k in ("offsets", "cols", "weights"))
    ok = ok and a.memory()["used_bytes"] == b.memory()["used_bytes"]
    del x, y
    return ok


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--big", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--variants", default="rows,rewrite,rewrite-grow,rewrite-grow-l16,rewrite-grow-l32")
    ap.add_argument("--out", default=".")
    ap.add_argument("--cpu", action="store_true", help="a dry run on NumPy with the kernels' host emulation")
    args = ap.parse_args()
    variants = args.variants.split(",")
    if args.cpu:
        from tests import graphvine_emulation as emu
        cp = np
        gk.launcher = emu.HostLauncher(2, 1)
        sync = lambda: None
        device = "cpu (host emulation)"

        class Event:
            def record(self):
                self.t = time.perf_counter()

            def synchronize(self):
                pass
        elapsed = lambda a, b: 1e3 * (b.t - a.t)
        spin = lambda *a: None
    else:
        cp = backend.get_backend("gpu")
        sync = cp.cuda.Device().synchronize
        device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        Event, elapsed = cp.cuda.Event, cp.cuda.get_elapsed_time
        spin = cp.RawKernel(r"""extern "C" __global__ void spin(long long c) { long long t0 = clock64();
                            while (clock64() - t0 < c) {} }""", "spin")

    def make(name, **opts):
        g = create(name, cp, **opts)
        if args.cpu and name == "graphvine":
            g.fused = True
        return g
    res = {"device": device, "scale": args.scale, "big": args.big, "vinestream": vinestream.__file__}
    print("vinestream from", vinestream.__file__, "on", res["device"], flush=True)

    def timed(fn, *a):
        sync()
        t0 = time.perf_counter()
        out = fn(*a)
        sync()
        return 1e3 * (time.perf_counter() - t0), out

    def save():
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f"cow-{args.scale}.json"), "w") as f:
            json.dump(res, f, indent=1, default=str)

    src, dst = rmat_edges(cp, args.scale, 16, seed=0)
    keep = src != dst
    b = CSRBatch.from_edges(cp, src[keep].astype(cp.int32), dst[keep].astype(cp.int32))
    src, dst = b.sources().astype(cp.int32), b.cols
    rs = cp.random.RandomState(1)
    order = rs.permutation(src.shape[0])
    src, dst = src[order], dst[order]
    w = (rs.random_sample(src.shape[0]) + 0.5).astype(cp.float32)
    n = int(max(int(src.max()), int(dst.max()))) + 1
    init = int(src.shape[0]) - args.big
    load = CSRBatch.from_edges(cp, src[:init], dst[:init], w[:init])
    ins = CSRBatch.from_edges(cp, src[init:], dst[init:], w[init:])
    dele = CSRBatch.from_edges(cp, src[init:], dst[init:])
    structures = [k for k in STRUCTURES if any(VARIANTS[v][0] == k for v in variants)]
    gs = {}

    def use(v):
        """The structure of variant v, its attributes set."""
        g = gs[VARIANTS[v][0]]
        for k, x in VARIANTS[v][1].items():
            setattr(g, k, x)
        return g
    for v in structures:
        g = gs[v] = make("graphvine", **STRUCTURES[v])
        g.insert_vertices(cp.arange(n, dtype=cp.int32))
        res[f"{v}_load_ms"], _ = timed(g.insert_edges, load)
    res["edges"] = gs["rows"].num_edges
    res["variants"] = {v: VARIANTS[v] for v in variants}
    # 1. correctness at scale (the logical state against the rows' side)
    up = CSRBatch.from_edges(cp, src[init - args.big:init + args.big // 2],
                             dst[init - args.big:init + args.big // 2], w[init - args.big:init + args.big // 2] + 1)
    checks = {}
    for phase, fn, bb in (("load", None, None), ("insert", "insert_edges", ins), ("upsert", "insert_edges", up),
                          ("delete", "delete_edges", dele)):
        masks = {v: getattr(g, fn)(bb) for v, g in gs.items()} if fn else {}
        for v in structures[1:]:
            if fn:
                checks[f"{v}_{phase}_mask"] = bool(cp.array_equal(masks[v], masks["rows"]))
            checks[f"{v}_{phase}"] = logical_equal(cp, gs[v], gs["rows"])
        del masks
    res["checks"] = checks
    res["checks_ok"] = all(checks.values())
    print("checks (logical state == rows' side):", res["checks_ok"], checks, flush=True)
    if not args.cpu:
        cp.get_default_memory_pool().free_all_blocks()
    save()
    # 2. timing, interleaved
    times = {v: {"insert": [], "delete": []} for v in variants}
    for r in range(args.rounds + 1):
        for v in variants:
            g = use(v)
            ti, _ = timed(g.insert_edges, ins)
            td, _ = timed(g.delete_edges, dele)
            if r:
                times[v]["insert"].append(ti)
                times[v]["delete"].append(td)
    res["ms"] = times
    for v, t in times.items():
        for ph in ("insert", "delete"):
            med = statistics.median(t[ph])
            res[f"{v}_{ph}_ms"] = med
            res[f"{v}_{ph}_edges_per_s"] = args.big / (med / 1e3)
    for v in structures:
        res[f"{v}_rewrite_stats"] = dict(getattr(gs[v], "rewrite_stats", {}))
    print({k: round(v, 4) for k, v in res.items() if k.endswith("_ms") and isinstance(v, float)}, flush=True)
    # small batches (the one-sync path): 1,000 held-out edges, insert then delete, interleaved
    small = {v: {"insert": [], "delete": []} for v in structures}
    for r in range(21):
        lo = init + (1000 * r) % max(args.big - 1000, 1)
        si = CSRBatch.from_edges(cp, src[lo:lo + 1000], dst[lo:lo + 1000], w[lo:lo + 1000])
        sd = CSRBatch.from_edges(cp, src[lo:lo + 1000], dst[lo:lo + 1000])
        for v in structures:
            ti, _ = timed(gs[v].insert_edges, si)
            td, _ = timed(gs[v].delete_edges, sd)
            if r:
                small[v]["insert"].append(ti)
                small[v]["delete"].append(td)
    for v in structures:
        for ph in ("insert", "delete"):
            res[f"{v}_small_{ph}_ms"] = statistics.median(small[v][ph])
    save()
    # 3. profile: device time per kernel, device span against wall
    real = gk.launcher
    for v in variants:
        g = use(v)
        for ph, fn, bb in (("insert", g.insert_edges, ins), ("delete", g.delete_edges, dele)):
            ev = []

            def evented(xp, kname, nn, a, ev=ev):
                spin((1,), (1,), (np.int64(2_000_000),))
                e0, e1 = Event(), Event()
                e0.record()
                real(xp, kname, nn, a)
                e1.record()
                ev.append((kname, e0, e1))
            gk.launcher = evented
            try:
                fn(bb)
            finally:
                gk.launcher = real
            sync()
            res[f"{v}_{ph}_kernels_ms"] = [(k, round(elapsed(a, b), 4)) for k, a, b in ev]
        spans, walls = {"insert": [], "delete": []}, {"insert": [], "delete": []}
        for _ in range(3):
            for ph, fn, bb in (("insert", g.insert_edges, ins), ("delete", g.delete_edges, dele)):
                sync()
                e0, e1 = Event(), Event()
                t0 = time.perf_counter()
                e0.record()
                fn(bb)
                e1.record()
                e1.synchronize()
                walls[ph].append(1e3 * (time.perf_counter() - t0))
                spans[ph].append(elapsed(e0, e1))
        for ph in ("insert", "delete"):
            res[f"{v}_{ph}_device_span_ms"] = statistics.median(spans[ph])
            res[f"{v}_{ph}_wall_ms_span_run"] = statistics.median(walls[ph])
    # the rewrite's timeline: host clock and device events at its marks (GraphVine._mark), for 3 inserts each
    # followed by its delete (run 2 ran 3 inserts in a row, so that its second and third were upserts only)
    for v in ("rewrite", "rewrite-grow"):
        if v not in variants:
            continue
        g = use(v)
        lines = {"insert": [], "delete": []}
        for _ in range(3):
            for ph, fn, bb in (("insert", g.insert_edges, ins), ("delete", g.delete_edges, dele)):
                sync()
                g._marks = []
                t0 = time.perf_counter()
                fn(bb)
                sync()
                marks, g._marks = g._marks, None
                e_first = marks[0][2]
                lines[ph].append([(lab, round(1e3 * (ht - t0), 4), round(elapsed(e_first, ev), 4) if ev is not None
                                   else None) for lab, ht, ev in marks])
        for ph in ("insert", "delete"):
            res[f"{v}_{ph}_timeline"] = lines[ph]
    res["edges_after_profile_ok"] = all(g.num_edges == res["edges"] for g in gs.values())
    save()
    # 4. queries against csr's; memory after 50% churn
    half = args.big // 2
    qs = cp.concatenate([src[init - half:init], cp.asarray(np.random.default_rng(7).integers(0, n, half), cp.int32)])
    qd = cp.concatenate([dst[init - half:init], cp.asarray(np.random.default_rng(8).integers(0, n, half), cp.int32)])
    csr = make("csr")
    csr.insert_vertices(cp.arange(n, dtype=cp.int32))
    csr.insert_edges(load)
    exp = csr.contains(qs, qd)
    res["query_ms_csr"] = statistics.median(timed(csr.contains, qs, qd)[0] for _ in range(7))
    del csr
    for v in structures:
        res[f"{v}_queries_equal_csr"] = bool(cp.array_equal(gs[v].contains(qs, qd), exp))
        res[f"{v}_query_ms"] = statistics.median(timed(gs[v].contains, qs, qd)[0] for _ in range(7))
        res[f"{v}_query_vs_csr"] = res["query_ms_csr"] / res[f"{v}_query_ms"]
    save()
    pick = cp.asarray(np.random.default_rng(9).permutation(init)[: init // 2])
    cs, cd, cw = src[pick], dst[pick], w[pick]
    for v in structures:
        g = use(v)
        churn_ms = []
        for lo in range(0, int(pick.shape[0]), args.big):
            churn_ms.append(timed(g.delete_edges, CSRBatch.from_edges(cp, cs[lo:lo + args.big],
                                                                      cd[lo:lo + args.big]))[0])
        for lo in range(0, int(pick.shape[0]), args.big):
            churn_ms.append(timed(g.insert_edges, CSRBatch.from_edges(cp, cs[lo:lo + args.big], cd[lo:lo + args.big],
                                                                      cw[lo:lo + args.big]))[0])
        mem = g.memory()
        live = g.num_edges
        csr_bpe = ((n + 1) * 8 + live * 8) / live
        res[f"{v}_churn"] = {"edges_ok": live == res["edges"], "batch_ms_median": statistics.median(churn_ms),
                             "used_vs_csr": mem["used_bytes"] / live / csr_bpe,
                             "reserved_vs_csr": mem["reserved_bytes"] / live / csr_bpe,
                             "used_bytes_per_edge": mem["used_bytes"] / live,
                             "reserved_bytes_per_edge": mem["reserved_bytes"] / live, "csr_bytes_per_edge": csr_bpe,
                             "memory": {k: x for k, x in mem.items() if isinstance(x, (int, float))},
                             "rewrite_stats": dict(getattr(g, "rewrite_stats", {}))}
        save()
    res["churn_logical_equal"] = {v: logical_equal(cp, gs[v], gs["rows"]) for v in structures[1:]}
    save()
    print(f"R-MAT {args.scale} ({res['edges']} edges), {args.big}-edge batches, {res['device']}")
    for v in structures:
        c = res[f"{v}_churn"]
        print(f"  structure {v}: 1,000-edge insert {res[f'{v}_small_insert_ms']:.3f} / delete "
              f"{res[f'{v}_small_delete_ms']:.3f} ms; queries {res[f'{v}_query_vs_csr']:.2f}x csr; after churn used "
              f"{c['used_vs_csr']:.2f}x, reserved {c['reserved_vs_csr']:.2f}x a CSR (churn batch "
              f"{c['batch_ms_median']:.2f} ms)")
    for v in variants:
        print(f"  {v}: insert {res[f'{v}_insert_ms']:.3f} ms ({res[f'{v}_insert_edges_per_s']:.3g} e/s), "
              f"delete {res[f'{v}_delete_ms']:.3f} ms ({res[f'{v}_delete_edges_per_s']:.3g} e/s)")
        for ph in ("insert", "delete"):
            per = res[f"{v}_{ph}_kernels_ms"]
            print(f"    {ph}: device span {res[f'{v}_{ph}_device_span_ms']:.3f} ms, wall "
                  f"{res[f'{v}_{ph}_wall_ms_span_run']:.3f}; kernels {sum(t for _, t in per):.3f} ms: "
                  + ", ".join(f"{k} {t:.3f}" for k, t in per))
    print("churn logical equal:", res["churn_logical_equal"])
    for v in variants:
        for ph in ("insert", "delete"):
            tl = res.get(f"{v}_{ph}_timeline")
            if tl:
                print(f"  {v} {ph} timeline (label, host ms from the call, device ms from 'start'):", tl[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
