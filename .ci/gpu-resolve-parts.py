#!/usr/bin/env python3
"""The fused resolve and CSR steps on the GPU: the one-block form against the parts around library sorts,
per batch size, and where a 1,000-event batch's kernel time goes (each launch timed alone).

    python3 .ci/gpu-resolve-parts.py OUT.json      (from the repository root, on the GPU box)

R-MAT 20's vertex map (about 1M ids) as in ``tests.phase_timing``; batches of 90% inserts / 10% deletes.
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.getcwd())

import cupy as cp
import numpy as np
from cupyx.profiler import benchmark

from tests.phase_timing import _table
from vinestream.connectors.synthetic import rmat_edges
from vinestream.stream.batching import resolve_kernels as rk
from vinestream.stream.batching.vertex_map import VertexMap
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures.backend import to_numpy


def batch(src, dst, init, k, rng):
    op = np.where(rng.random(k) < 0.1, 2, 1).astype(np.int8)
    bs, bd = src[init:init + k].copy(), dst[init:init + k].copy()
    old = rng.integers(0, init, k)
    bs[op == 2], bd[op == 2] = src[old[op == 2]], dst[old[op == 2]]
    return _table(op, bs, bd)


def gpu_ms(fn, *args, **kw):
    b = benchmark(fn, args, kw, n_repeat=30, n_warmup=5)
    return round(float(np.median(b.gpu_times)) * 1e3, 4), round(float(np.median(b.cpu_times)) * 1e3, 4)


class Timed:
    """A launcher that times each launch (and each library sort) alone with CUDA events."""

    def __init__(self, inner):
        self.inner, self.ms = inner, {}

    def _time(self, name, fn):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        self.ms.setdefault(name, []).append(cp.cuda.get_elapsed_time(a, b))

    def __call__(self, xp, name, grid, block, args):
        self._time(name, lambda: self.inner(xp, name, grid, block, args))


def main(path):
    src, dst = (to_numpy(a) for a in rmat_edges(np, 20, 16, seed=3))
    init = len(src) - 200_000
    p = build_pipeline(structure="coo", backend="gpu")
    p.apply(_table(np.ones(init, np.int8), src[:init], dst[:init]))
    vm = p.vertex_map
    rng = np.random.default_rng(0)
    out = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "sizes": [], "parts": {}}
    for k in (1000, 2000, 4096, 10000, 16000):
        for und in (False, True):
            if k * (2 if und else 1) > rk.CAPACITY:
                continue
            tab = batch(src, dst, init, k, rng)
            row = {"events": k, "undirected": und}
            for label, in_block in (("split", 2048), ("block", 1 << 30)):
                rk.SORT_IN_BLOCK = in_block
                row[f"resolve_{label}_gpu_ms"], row[f"resolve_{label}_cpu_ms"] = gpu_ms(
                    rk.fused_net_effect, cp, tab, vm, undirected=und)
                net = rk.fused_net_effect(cp, tab, vm, undirected=und)
                row[f"csr_{label}_gpu_ms"], row[f"csr_{label}_cpu_ms"] = gpu_ms(rk.fused_csr_batches, cp, net, vm)
            out["sizes"].append(row)
            print(row, flush=True)
    # where the one-block kernel's time goes at 1,000 events: the parts alone, the map's lookups
    tab = batch(src, dst, init, 1000, rng)
    inner = rk.launcher
    for label, in_block in (("block", 1 << 30), ("parts", 64)):
        rk.SORT_IN_BLOCK = in_block
        t = Timed(inner)
        rk.launcher = t
        real_sort = rk._sort_pairs
        rk._sort_pairs = lambda xp, key, val, t=t, real=real_sort: t._time("library_sort", lambda: real(xp, key, val))
        for _ in range(20):
            net = rk.fused_net_effect(cp, tab, vm)
            rk.fused_csr_batches(cp, net, vm)
        rk.launcher, rk._sort_pairs = inner, real_sort
        out["parts"][label] = {n: round(float(np.median(v)), 4) for n, v in t.ms.items()}
    rk.SORT_IN_BLOCK = 1 << 30
    empty = VertexMap(cp)
    empty.assign(cp.asarray([1 << 50], dtype=np.int64))
    out["parts"]["block_tiny_map"] = gpu_ms(rk.fused_net_effect, cp, tab, empty)[0]
    out["parts"]["block_rmat20_map"] = gpu_ms(rk.fused_net_effect, cp, tab, vm)[0]
    print(json.dumps(out["parts"]), flush=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/resolve-parts.json")
