#!/usr/bin/env python3
"""Where static BFS and PageRank spend their time on the GPU against cuGraph / plain CuPy (R-MAT 20 and 22,
edge factor 16, as `bench algorithms`): the BFS job's static run against its traversal alone and the
in-edge transpose it builds (each transpose form timed), and PageRank's iterations and L1 error against a
tight reference for our static form and for the plain CuPy power iteration.

    python3 .ci/gpu-static-parts.py OUT.json
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())

import cupy as cp
import numpy as np

from vinestream.algorithms import bfs_kernels as bk
from vinestream.algorithms import create_job
from vinestream.algorithms.edge_index import transpose
from vinestream.stream.bench import peers as pe
from vinestream.stream.bench.algorithms import IdentityVertexMap, rmat_edges
from vinestream.structures.csr_types import CSR
from vinestream.structures.registry import build


def timed(fn, repeats=5):
    fn()
    cp.cuda.Device().synchronize()
    ts = []
    out = None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        cp.cuda.Device().synchronize()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3, out


def radix_transpose(csr, n):
    """Stable sort of the 32-bit column ids (CuPy's argsort: cub radix), rows gathered in that order."""
    rows = cp.repeat(cp.arange(n, dtype=np.int32), cp.diff(csr.offsets[: n + 1]).astype(np.int64))
    order = cp.argsort(csr.cols.astype(np.int32))
    offsets = cp.zeros(n + 1, dtype=np.int64)
    offsets[1:] = cp.cumsum(cp.bincount(csr.cols.astype(np.int64), minlength=n))
    return offsets, rows[order]


def one(scale):
    if True:
        s, d = rmat_edges(cp, scale, 16)
        n = 1 << scale
        g = build("csr", cp, s, d, n)
        vm = IdentityVertexMap(cp)
        csr = g.adjacency()
        source = int(cp.argmax(cp.diff(csr.offsets)))
        r = {"edges": int(g.num_edges), "source": source}
        job = create_job("bfs", cp, sources=[source])
        r["bfs_job_static_ms"], _ = timed(lambda: job.run_static(g, vm))
        cap = int(g.vertex_capacity)
        r["transpose_library_ms"], in_csr = timed(lambda: transpose(cp, csr, cap, True))
        r["transpose_sort_ms"], t2 = timed(lambda: transpose(cp, csr, cap, False))
        r["transpose_radix32_ms"], (o3, c3) = timed(lambda: radix_transpose(csr, cap))
        r["transposes_agree"] = bool((in_csr.cols == t2.cols).all() and (in_csr.cols == c3).all()
                                     and (in_csr.offsets == o3).all())
        out = CSR(offsets=csr.offsets, cols=csr.cols, weights=None)
        r["bfs_traversal_ms"], _ = timed(lambda: bk.bfs_direction_optimizing(
            cp, out, in_csr, cp.asarray([source]), cap, parents=True, sorted_rows=True))
        r["cugraph"] = {k: v for k, v in pe.cugraph_runs(cp, csr.offsets, csr.cols, cap, source, tol=1e-6).items()
                        if k.endswith("seconds") or k == "error"}
        # PageRank: iterations and L1 error against a tight reference
        _, ref, ref_it = pe.cupyx_pagerank(cp, csr.offsets, csr.cols, cap, tol=1e-13)
        pr = create_job("pagerank", cp, tol=1e-6)
        r["pagerank_static_ms"], _ = timed(lambda: pr.run_static(g, vm), 3)
        r["pagerank_iterations"] = int(pr.work["iterations"])
        r["pagerank_l1_error"] = float(cp.abs(pr.ranks()[:cap] - ref).sum())
        secs, x, it = pe.cupyx_pagerank(cp, csr.offsets, csr.cols, cap, tol=1e-6)
        r["cupyx_ms"], r["cupyx_iterations"], r["cupyx_l1_error"] = secs * 1e3, it, float(cp.abs(x - ref).sum())
        r["reference_iterations"] = ref_it
        print(scale, json.dumps(r), flush=True)
        return r


def main(path):
    res = {}
    for scale in (20, 22):
        res[f"rmat{scale}"] = one(scale)
        cp.get_default_memory_pool().free_all_blocks()
        json.dump(res, open(path, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
