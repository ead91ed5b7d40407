#!/usr/bin/env python3
"""GraphVine's small batches on the GPU: the one-sync path launched kernel by kernel or as one CUDA graph
(``graphs``), searching from the rows' live entries or from the keys (``keyside_small``), on one loaded
graph, the four variants interleaved round by round.

``python3 PATH/small_bench.py --scale 20 --batch 1000 --rounds 30 --out DIR`` from a checkout's root.
R-MAT ``--scale`` (ef 16, as gv_profile.py), all but 1e6 distinct edges loaded; per round and variant a
``--batch``-edge insert of held-out edges then their delete (wall, device synchronised around each call).
Writes DIR/small-SCALE.json and prints medians.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())

from vinestream.stream.bench.structures import rmat_edges  # noqa: E402
from vinestream.structures import backend  # noqa: E402
from vinestream.structures.csr_types import CSRBatch  # noqa: E402
from vinestream.structures.registry import create  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    cp = backend.get_backend("gpu")
    sync = cp.cuda.Device().synchronize
    res = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "scale": args.scale,
           "batch": args.batch}

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
    init = int(src.shape[0]) - 1_000_000
    g = create("graphvine", cp)
    g.insert_vertices(cp.arange(n, dtype=cp.int32))
    g.insert_edges(CSRBatch.from_edges(cp, src[:init], dst[:init], w[:init]))
    variants = {"kernels-rows": (False, False), "graph-rows": (True, False), "kernels-keys": (False, True),
                "graph-keys": (True, True)}
    times = {v: {"insert": [], "delete": []} for v in variants}
    bsz = args.batch
    for r in range(args.rounds + 1):
        lo = init + (r * bsz) % (1_000_000 - bsz)
        ins = CSRBatch.from_edges(cp, src[lo:lo + bsz], dst[lo:lo + bsz], w[lo:lo + bsz])
        dele = CSRBatch.from_edges(cp, src[lo:lo + bsz], dst[lo:lo + bsz])
        for v in list(variants) if r % 2 else list(variants)[::-1]:
            g.graphs, g.keyside_small = variants[v]
            ti, td = timed(g.insert_edges, ins), timed(g.delete_edges, dele)
            if r:
                times[v]["insert"].append(ti)
                times[v]["delete"].append(td)
    res["ms"] = times
    res["one_sync"] = dict(g.one_sync)
    for v, t in times.items():
        for ph in ("insert", "delete"):
            res[f"{v}_{ph}_ms"] = statistics.median(t[ph])
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"small-{args.scale}.json"), "w") as f:
        json.dump(res, f, indent=1)
    for v in variants:
        print(f"R-MAT {args.scale}, {bsz}-edge batches, {v}: insert {res[f'{v}_insert_ms']:.3f} ms, "
              f"delete {res[f'{v}_delete_ms']:.3f} ms (median of {args.rounds})")
    print("one_sync", res["one_sync"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
