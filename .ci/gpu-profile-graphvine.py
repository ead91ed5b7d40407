#!/usr/bin/env python3
"""Per-batch milliseconds of GraphVine (fused kernels / array program), COO and CSR on the GPU.

Run from the repository root on the GPU box: ``python3 .ci/gpu-profile-graphvine.py``
(R-MAT scale 20, edge factor 16; finishes in well under two minutes).  Each
structure is loaded with all but 1e6 held-out edges; then, per batch size,
insert / contains / delete of held-out edges are timed (synchronize +
perf_counter, median of 5 rounds; the delete undoes the insert so every round
sees the same graph).  Ends with a cProfile of one fused 1e4 insert (top 15 by
tottime) and the kernel launches of that insert.
Options: ``--scale N`` ``--structures a,b`` ``--sizes 1000,10000`` ``--rounds 5``.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())


from vinestream.stream.bench.structures import rmat_edges
from vinestream.structures import backend
from vinestream.structures import graphvine_kernels as gk
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

VARIANTS = {"graphvine-fused": ("graphvine", {"fused": True}),
            "graphvine-array": ("graphvine", {"fused": False}),
            "coo": ("coo", {}), "csr": ("csr", {})}


def timed_ms(cp, fn, *args):
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    fn(*args)
    cp.cuda.Device().synchronize()
    return 1e3 * (time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--structures", default=",".join(VARIANTS))
    ap.add_argument("--sizes", default="1000,10000,100000,1000000")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    cp = backend.get_backend("gpu")
    sizes = [int(x) for x in args.sizes.split(",")]
    holdout = max(sizes)
    t0 = time.perf_counter()
    src, dst = rmat_edges(cp, args.scale, 16, seed=0)
    keep = src != dst
    b = CSRBatch.from_edges(cp, src[keep].astype(cp.int32), dst[keep].astype(cp.int32))
    src, dst = b.sources().astype(cp.int32), b.cols                  # distinct edges
    rs = cp.random.RandomState(1)
    order = rs.permutation(src.shape[0])
    src, dst = src[order], dst[order]
    w = (rs.random_sample(src.shape[0]) + 0.5).astype(cp.float32)
    n = int(max(int(src.max()), int(dst.max()))) + 1
    m = int(src.shape[0])
    init = m - holdout
    print(f"R-MAT scale {args.scale}: {n} vertices, {m} distinct edges, {init} loaded, "
          f"generated in {time.perf_counter() - t0:.1f}s; {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print(f"{'structure':16s} {'batch':>8s} {'insert ms':>10s} {'contains ms':>12s} {'delete ms':>10s} "
          f"{'build s':>8s}")
    fused_g = None
    for label in args.structures.split(","):
        name, opts = VARIANTS[label]
        try:
            g = create(name, cp, **opts)
        except Exception as exc:  # a structure missing on this branch
            print(f"{label:16s} unavailable: {exc}")
            continue
        tb = time.perf_counter()
        g.insert_vertices(cp.arange(n, dtype=cp.int32))
        g.insert_edges(CSRBatch.from_edges(cp, src[:init], dst[:init], w[:init]))
        cp.cuda.Device().synchronize()
        build = time.perf_counter() - tb
        for bsz in sizes:
            hs, hd, hw = src[init:init + bsz], dst[init:init + bsz], w[init:init + bsz]
            ins = CSRBatch.from_edges(cp, hs, hd, hw)
            dele = CSRBatch.from_edges(cp, hs, hd)
            half = bsz // 2
            qs = cp.concatenate([hs[:half], rs.randint(0, n, bsz - half).astype(cp.int32)])
            qd = cp.concatenate([hd[:half], rs.randint(0, n, bsz - half).astype(cp.int32)])
            times = {"insert": [], "contains": [], "delete": []}
            for _ in range(args.rounds):
                times["insert"].append(timed_ms(cp, g.insert_edges, ins))
                times["contains"].append(timed_ms(cp, g.contains, qs, qd))
                times["delete"].append(timed_ms(cp, g.delete_edges, dele))
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{label:16s} {bsz:8d} {med['insert']:10.3f} {med['contains']:12.3f} {med['delete']:10.3f} "
                  f"{build:8.2f}", flush=True)
        if label == "graphvine-fused":
            fused_g = g
        else:
            del g
            cp.get_default_memory_pool().free_all_blocks()
    if fused_g is not None:
        g = fused_g
        ins = CSRBatch.from_edges(cp, src[init:init + 10000], dst[init:init + 10000], w[init:init + 10000])
        dele = CSRBatch.from_edges(cp, src[init:init + 10000], dst[init:init + 10000])
        counts: dict[str, int] = {}
        real = gk.launcher

        def counting(xp, name, n, a):
            counts[name] = counts.get(name, 0) + 1
            real(xp, name, n, a)

        gk.launcher = counting
        prof = cProfile.Profile()
        cp.cuda.Device().synchronize()
        prof.enable()
        g.insert_edges(ins)
        cp.cuda.Device().synchronize()
        prof.disable()
        gk.launcher = real
        g.delete_edges(dele)
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(15)
        print("\ncProfile of one fused insert of 1e4 edges (top 15 by tottime):")
        print(s.getvalue())
        print("fused kernel launches in that insert:", counts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
