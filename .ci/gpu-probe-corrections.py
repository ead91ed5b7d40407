#!/usr/bin/env python3
"""tests/test_pagerank_fused_gpu.py::test_fused_corrections_on_rmat_hubs's scenario repeated: the fused corrections'
running R (rnorm) and the array program's, each against a fresh sum |r|, per batch, REPEAT times (a race shows as
a run whose running R leaves its own sum).

    python3 .ci/gpu-probe-corrections.py [REPEAT]
"""
import os
import sys

sys.path.insert(0, os.getcwd())
import cupy
import numpy as np

from tests.algo_support import IdentityMap, rmat_edges
from vinestream.algorithms.pagerank import PageRank
from vinestream.stream.bench.algorithms import random_delta
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build

bad = 0
for rep in range(int(sys.argv[1]) if len(sys.argv) > 1 else 20):
    s, d = rmat_edges(np.random.default_rng(13), 14, 16)
    g = build("csr", cupy, cupy.asarray(s), cupy.asarray(d), 1 << 14)
    vm = IdentityMap()
    params = {"tol": 1e-7, "budget": 1e12}
    fused, ref = PageRank(cupy, fused=False, fused_push=True, **params), PageRank(cupy, fused=False, **params)
    fused.run_static(g, vm)
    ref.run_static(g, vm)
    for b, size in enumerate((20, 200, 2000)):
        delta = random_delta(cupy, g, size, 50 + b)
        apply_delta(g, delta)
        fused.update(g, delta, vm)
        ref.update(g, delta, vm)
        fr, rr = float(cupy.abs(fused.r).sum()), float(cupy.abs(ref.r).sum())
        off = abs(fused.rnorm - fr) > 1e-9 * fr or abs(ref.rnorm - rr) > 1e-9 * rr
        bad += off
        if off or rep == 0:
            print(f"rep {rep} batch {b}: fused rnorm {fused.rnorm:.9f} sum|r| {fr:.9f}; ref rnorm {ref.rnorm:.9f} "
                  f"sum|r| {rr:.9f}; fused work {fused.work.get('mode')}", flush=True)
print("runs whose running R left its sum:", bad)
