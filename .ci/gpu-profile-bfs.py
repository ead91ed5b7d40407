#!/usr/bin/env python3
"""Where an incremental BFS update's time goes on the GPU (R-MAT 20, 0.01% batches, source 0 as
``bench algorithms``): per-update wall time (synchronised) against a fresh static run, and a cProfile
of the updates (top functions by own time, and who calls CuPy's array creation and reads).

    python3 .ci/gpu-profile-bfs.py OUT.txt
"""
from __future__ import annotations

import cProfile
import io
import os
import pstats
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())

import cupy as cp

from vinestream.algorithms.bfs import BFS
from vinestream.connectors.synthetic import rmat_edges
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta
from vinestream.structures.backend import synchronize
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build


def main(path):
    scale = int(os.environ.get("SCALE", 20))
    s, d = rmat_edges(cp, scale, 16, 0)
    g = build("csr", cp, s, d, 1 << scale)
    vm = IdentityVertexMap(cp)
    source = int(os.environ.get("SOURCE", 0))
    job = BFS(cp, sources=[source], fused=True)
    job.run_static(g, vm)
    k = max(2, int(1e-4 * g.num_edges))
    inc, static, modes = [], [], []
    prof = cProfile.Profile()
    for b in range(16):
        delta = random_delta(cp, g, k, 100 + b)
        apply_delta(g, delta)
        synchronize(cp)
        if b >= 8:
            prof.enable()
        t0 = time.perf_counter()
        job.update(g, delta, vm)
        synchronize(cp)
        t1 = time.perf_counter()
        if b >= 8:
            prof.disable()
        fresh = BFS(cp, sources=[source], fused=True)
        synchronize(cp)
        t2 = time.perf_counter()
        fresh.run_static(g, vm)
        synchronize(cp)
        t3 = time.perf_counter()
        if b >= 2:
            inc.append(t1 - t0)
            static.append(t3 - t2)
            modes.append(job.work.get("mode"))
    s = io.StringIO()
    t_inc, t_static = statistics.median(inc), statistics.median(static)
    print(f"scale {scale} changes {k} source {source}: incremental {t_inc * 1e3:.3f} ms, "
          f"static {t_static * 1e3:.3f} ms, speedup {t_static / t_inc:.2f}"
          f" modes {sorted(set(map(str, modes)))} work {job.work}", file=s)
    st = pstats.Stats(prof, stream=s).sort_stats("tottime")
    st.print_stats(40)
    st.print_callers(r"asarray|basic.py.*\(empty\)|astype|\(get\)|zeros|cumsum|to_numpy|argsort|searchsorted")
    with open(path, "w") as f:
        f.write(s.getvalue())
    print(s.getvalue()[:400])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/bfs-profile.txt")
