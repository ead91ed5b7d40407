#!/usr/bin/env python3
"""GraphVine's large batches on the GPU, the key-side path (keyside=True) against the rows' side
(keyside=False: main's large-batch kernels, unchanged) on one loaded graph, interleaved.

``python3 PATH/big_bench.py --scale 22 --big 1000000 --rounds 3 --out DIR`` from a checkout's root.
R-MAT ``--scale`` (ef 16, as gv_profile.py), all but ``--big`` distinct edges loaded; then per round and
per variant: the held-out edges inserted, then deleted (wall, device synchronised around each call).
Then one insert / delete per variant with a CUDA event pair around every launch, each queued behind a
spin kernel (device time per kernel).  Writes DIR/big-SCALE.json and prints a summary.
"""
from __future__ import annotations

import argparse
import json
import os
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
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--big", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    cp = backend.get_backend("gpu")
    sync = cp.cuda.Device().synchronize
    res = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "scale": args.scale, "big": args.big}

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
    rs = cp.random.RandomState(1)
    order = rs.permutation(src.shape[0])
    src, dst = src[order], dst[order]
    w = (rs.random_sample(src.shape[0]) + 0.5).astype(cp.float32)
    n = int(max(int(src.max()), int(dst.max()))) + 1
    init = int(src.shape[0]) - args.big
    g = create("graphvine", cp)
    g.insert_vertices(cp.arange(n, dtype=cp.int32))
    res["load_ms"] = timed(g.insert_edges, CSRBatch.from_edges(cp, src[:init], dst[:init], w[:init]))
    res["edges"] = g.num_edges
    ins = CSRBatch.from_edges(cp, src[init:], dst[init:], w[init:])
    dele = CSRBatch.from_edges(cp, src[init:], dst[init:])
    times = {v: {"insert": [], "delete": []} for v in ("rows", "keys")}
    for r in range(args.rounds + 1):
        for v in ("rows", "keys"):
            g.keyside = v == "keys"
            ti, td = timed(g.insert_edges, ins), timed(g.delete_edges, dele)
            if r:
                times[v]["insert"].append(ti)
                times[v]["delete"].append(td)
    assert g.num_edges == res["edges"]
    res["ms"] = times
    for v, t in times.items():
        for ph in ("insert", "delete"):
            med = statistics.median(t[ph])
            res[f"{v}_{ph}_ms"] = med
            res[f"{v}_{ph}_edges_per_s"] = args.big / (med / 1e3)
    spin = cp.RawKernel(r"""extern "C" __global__ void spin(long long c) { long long t0 = clock64();
                        while (clock64() - t0 < c) {} }""", "spin")
    real = gk.launcher
    for v in ("rows", "keys"):
        g.keyside = v == "keys"
        for ph, fn, bb in (("insert", g.insert_edges, ins), ("delete", g.delete_edges, dele)):
            ev = []

            def evented(xp, kname, nn, a, ev=ev):
                spin((1,), (1,), (np.int64(2_000_000),))
                e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                e0.record()
                real(xp, kname, nn, a)
                e1.record()
                ev.append((kname, e0, e1))
            gk.launcher = evented
            fn(bb)
            sync()
            gk.launcher = real
            per = [(k, round(cp.cuda.get_elapsed_time(a, b), 4)) for k, a, b in ev]
            res[f"{v}_{ph}_kernels_ms"] = per
    g.keyside = True
    sync()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"big-{args.scale}.json"), "w") as f:
        json.dump(res, f, indent=1)
    for v in ("rows", "keys"):
        print(f"R-MAT {args.scale} ({res['edges']} edges), {args.big}-edge batches, {v} side: "
              f"insert {res[f'{v}_insert_ms']:.3f} ms ({res[f'{v}_insert_edges_per_s']:.3g} e/s), "
              f"delete {res[f'{v}_delete_ms']:.3f} ms ({res[f'{v}_delete_edges_per_s']:.3g} e/s)")
        for ph in ("insert", "delete"):
            per = res[f"{v}_{ph}_kernels_ms"]
            print(f"  {ph} kernels {sum(t for _, t in per):.3f} ms: " + ", ".join(f"{k} {t:.3f}" for k, t in per))
    return 0


if __name__ == "__main__":
    sys.exit(main())
