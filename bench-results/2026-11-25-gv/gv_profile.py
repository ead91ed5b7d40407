#!/usr/bin/env python3
"""GraphVine's fused insert / delete on the GPU: where a batch's time goes (by hand, on a GPU box).

Run from a checkout's root (it imports that checkout's vinestream):
``python3 PATH/gv_profile.py --label new --log sx-mathoverflow.txt.gz --out DIR``

1. R-MAT ``--scale`` (ef 16), all but 1e6 distinct edges loaded; 1,000- and 1e6-edge batches of
   held-out edges inserted then deleted (wall time, device synchronised before and after; median).
2. The same 1,000-edge insert / delete under cProfile (host side, top 25 by tottime) and with a
   CUDA event pair around every fused launch (device time per kernel) and the call's wall time.
3. ``--log``: a SNAP temporal edge list inserted in file order in 1e4-edge batches (what a replay's
   structure phase does): total insert seconds, re-homed vertices, and the cProfile share of ``_rehome``.
Writes ``DIR/profile-LABEL.json`` and ``DIR/profile-LABEL.txt``.
"""
from __future__ import annotations

import argparse
import cProfile
import gzip
import io
import json
import os
import pstats
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())

import numpy as np  # noqa: E402

from vinestream.stream.bench.structures import rmat_edges  # noqa: E402
from vinestream.structures import backend  # noqa: E402
from vinestream.structures import graphvine_kernels as gk  # noqa: E402
from vinestream.structures.csr_types import CSRBatch  # noqa: E402
from vinestream.structures.registry import create  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True)
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--log", default=None)
    ap.add_argument("--out", default=".")
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--big", type=int, default=1_000_000)
    args = ap.parse_args()
    if args.dry:                                  # a CPU check of this script (array program, no events)
        cp = np
        sync = (lambda: None)
        device = "cpu (dry run)"
    else:
        cp = backend.get_backend("gpu")
        sync = cp.cuda.Device().synchronize
        device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    res = {"label": args.label, "device": device, "scale": args.scale}
    text = []

    def timed(fn, *a):
        sync()
        t0 = time.perf_counter()
        fn(*a)
        sync()
        return 1e3 * (time.perf_counter() - t0)

    src, dst = rmat_edges(cp, args.scale, 16, seed=0)
    keep = src != dst
    b = CSRBatch.from_edges(cp, src[keep].astype(cp.int32), dst[keep].astype(cp.int32))
    src, dst = b.sources().astype(cp.int32), b.cols
    rs = (np.random if args.dry else cp.random).RandomState(1)
    order = rs.permutation(src.shape[0])
    src, dst = src[order], dst[order]
    w = (rs.random_sample(src.shape[0]) + 0.5).astype(cp.float32)
    n = int(max(int(src.max()), int(dst.max()))) + 1
    init = int(src.shape[0]) - args.big
    g = create("graphvine", cp)
    g.insert_vertices(cp.arange(n, dtype=cp.int32))
    g.insert_edges(CSRBatch.from_edges(cp, src[:init], dst[:init], w[:init]))
    sync()
    res["edges"] = g.num_edges
    batches = {}
    for bsz in (1000, args.big):
        rounds = args.rounds if bsz == 1000 else 3
        times = {"insert": [], "delete": []}
        for r in range(rounds + 1):
            lo = init + (r * bsz) % (args.big - bsz + 1) if bsz < args.big else init
            ins = CSRBatch.from_edges(cp, src[lo:lo + bsz], dst[lo:lo + bsz], w[lo:lo + bsz])
            dele = CSRBatch.from_edges(cp, src[lo:lo + bsz], dst[lo:lo + bsz])
            ti, td = timed(g.insert_edges, ins), timed(g.delete_edges, dele)
            if r:                                          # the first round compiles the kernels
                times["insert"].append(ti)
                times["delete"].append(td)
        batches[bsz] = {k: statistics.median(v) for k, v in times.items()}
        batches[bsz].update({f"{k}_edges_per_s": bsz / (v / 1e3) for k, v in list(batches[bsz].items())})
        text.append(f"R-MAT {args.scale}, {bsz}-edge batches: insert {batches[bsz]['insert']:.3f} ms, "
                    f"delete {batches[bsz]['delete']:.3f} ms (median of {rounds})")
    res["batches"] = batches
    # 2. one insert / delete (1,000 and the large size) under cProfile, then with a CUDA event pair around
    #    every fused launch, each launch queued behind a ~0.2 ms spin kernel so that the pair times the
    #    kernel on the device and not the host's dispatch
    spin = None if args.dry else cp.RawKernel(
        r"""extern "C" __global__ void spin(long long c) { long long t0 = clock64(); while (clock64() - t0 < c) {} }""",
        "spin")
    for bsz in (1000, args.big):
        lo = init + 5000 if bsz == 1000 else init
        ins = CSRBatch.from_edges(cp, src[lo:lo + bsz], dst[lo:lo + bsz], w[lo:lo + bsz])
        dele = CSRBatch.from_edges(cp, src[lo:lo + bsz], dst[lo:lo + bsz])
        for name, fn, bb in (("insert", g.insert_edges, ins), ("delete", g.delete_edges, dele)):
            undo = (lambda: g.delete_edges(dele)) if name == "insert" else (lambda: g.insert_edges(ins))
            if name == "delete":
                undo()                                         # the edges are there before each delete
            prof = cProfile.Profile()
            sync()
            prof.enable()
            fn(bb)
            sync()
            prof.disable()
            st = pstats.Stats(prof)
            top = sorted(((v[2], v[1], v[3], f"{os.path.basename(k[0])}:{k[1]}({k[2]})")
                          for k, v in st.stats.items()), reverse=True)[:25]
            text.append(f"\n== cProfile of one fused {bsz}-edge {name}: total {1e3 * st.total_tt:.3f} ms; "
                        "top 25 by tottime (us tottime, calls, us cumtime, function)\n"
                        + "\n".join(f"{1e6 * tt:9.1f} {nc:5d} {1e6 * ct:9.1f}  {fnm}" for tt, nc, ct, fnm in top))
            undo()
            if args.dry:
                undo()
                continue
            real, ev = gk.launcher, []

            def evented(xp, kname, nn, a, real=real, ev=ev):
                spin((1,), (1,), (np.int64(400_000),))
                e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                e0.record()
                real(xp, kname, nn, a)
                e1.record()
                ev.append((kname, e0, e1))
            gk.launcher = evented
            fn(bb)
            sync()
            gk.launcher = real
            per = [(k, cp.cuda.get_elapsed_time(a, b)) for k, a, b in ev]
            res[f"{name}_{bsz}_kernels_ms"] = per
            text.append(f"{name} {bsz}: fused kernels on the device {sum(t for _, t in per):.3f} ms in {len(per)} "
                        "launches: " + ", ".join(f"{k} {t:.3f}" for k, t in per))
            undo()
    del g
    if not args.dry:
        cp.get_default_memory_pool().free_all_blocks()
    # 3. a real temporal log, insert-only in file order, 1e4-edge batches
    if args.log:
        rows = []
        with gzip.open(args.log, "rt") as f:
            for line in f:
                if line and line[0] != "#":
                    p = line.split()
                    rows.append((int(p[0]), int(p[1])))
        e = np.asarray(rows, dtype=np.int64)
        ls, ld = cp.asarray(e[:, 0].astype(np.int32)), cp.asarray(e[:, 1].astype(np.int32))
        for profiled in (False, True):
            g = create("graphvine", cp)
            prof = cProfile.Profile() if profiled else None
            per = []
            for lo in range(0, e.shape[0], 10_000):
                bb = CSRBatch.from_edges(cp, ls[lo:lo + 10_000], ld[lo:lo + 10_000])
                if prof:
                    prof.enable()
                per.append(timed(g.insert_edges, bb))
                if prof:
                    prof.disable()
            if not profiled:
                res["log"] = {"events": int(e.shape[0]), "batches": len(per), "insert_ms_total": sum(per),
                              "insert_ms_median": statistics.median(per), "rehomed": g.stats["rehomed"],
                              "edges": g.num_edges}
                text.append(f"\nlog {os.path.basename(args.log)}: {e.shape[0]} events, {len(per)} batches of 1e4: "
                            f"insert {sum(per):.1f} ms in all, median {statistics.median(per):.3f} ms a batch, "
                            f"{g.stats['rehomed']} vertices re-homed, {g.num_edges} edges")
            else:
                st = pstats.Stats(prof)
                cum = {f"{k[2]}": v[3] for k, v in st.stats.items()
                       if k[2] in ("_rehome", "insert_edges", "_evict", "_insert_fused", "_insert_fused_batch")}
                res["log_cprofile_cumulative_s"] = cum
                text.append(f"cProfile (second pass) cumulative seconds: {cum}")
            del g
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"profile-{args.label}.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(args.out, f"profile-{args.label}.txt"), "w") as f:
        f.write("\n".join(text) + "\n")
    print("\n".join(t for t in text if not t.startswith("\n==")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
