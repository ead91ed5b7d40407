#!/usr/bin/env python3
"""Where an incremental triangle update of a small batch spends its time on a GPU (session 27): R-MAT ``--scale``
(edge factor 16) in a ``csr`` structure, the job's static count, then ``--batches`` random deltas of ``--fraction``
of the edges (half deletions, half insertions; the first one untimed), each applied and the job updated: the
update's wall time (synchronised around it) and a cProfile of the host side.
``python3 .ci/gpu-tri-update-probe.py --scale 16 --out DIR``."""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())

from vinestream.algorithms import create_job
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta, rmat_edges
from vinestream.structures import backend
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=16)
    ap.add_argument("--fraction", type=float, default=1e-4)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    cp = backend.get_backend("gpu")
    s, d = rmat_edges(cp, args.scale, 16, 0)
    n = 1 << args.scale
    graph = build("csr", cp, s, d, n)
    vm = IdentityVertexMap(cp)
    job = create_job("triangles", cp)
    job.run_static(graph, vm)
    m = int(graph.num_edges)
    changes = max(2, int(round(args.fraction * m)))
    walls = []
    prof = cProfile.Profile()
    for b in range(args.batches + 1):
        delta = random_delta(cp, graph, changes, 100 + b)
        apply_delta(graph, delta)
        cp.cuda.Device().synchronize()
        if b:
            prof.enable()
        t0 = time.perf_counter()
        job.update(graph, delta, vm)
        cp.cuda.Device().synchronize()
        t = time.perf_counter() - t0
        if b:
            prof.disable()
            walls.append(t)
    fresh = create_job("triangles", cp)
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    fresh.run_static(graph, vm)
    cp.cuda.Device().synchronize()
    static = time.perf_counter() - t0
    out = {"scale": args.scale, "edges": m, "changes": changes, "update_ms": statistics.median(walls) * 1e3,
           "static_ms": static * 1e3, "agrees": int(job.total) == int(fresh.total), "mode": job.work.get("mode"),
           "update_ms_all": [round(w * 1e3, 3) for w in walls]}
    print(json.dumps(out))
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(35)
    print("\n".join(text.getvalue().splitlines()[:50]))
    with open(os.path.join(args.out, f"tri-update-{args.scale}.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    with open(os.path.join(args.out, f"tri-profile-{args.scale}.txt"), "w") as fh:
        fh.write(text.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
