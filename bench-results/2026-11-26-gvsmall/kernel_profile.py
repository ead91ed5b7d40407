#!/usr/bin/env python3
"""graphvine's one-sync kernels on the device, one by one, and the least grid of its gated kernels (issue 12's
0.3 ms update of 1,000 edges).

Run from a tree's root on the GPU box: ``python3 PATH/kernel_profile.py OUT TAG``.  R-MAT 20 (edge factor 16)
loaded through the pipeline, then 1,000-event batches as ``tests.phase_timing`` makes them.

* ``per_kernel``: 10 batches with the CUDA graphs off (the same kernels launched one by one); before each edge
  phase a 2 ms spin kernel holds the device while the host queues the phase, and an event after every launch
  gives each kernel's device time back to back (median per kernel, per phase).
* ``min_grid``: graphs on, ``graphvine_kernels.MIN_GRID`` (the least launch of a gated kernel, whose size is
  on the device) at 8, 2 and 1 blocks of 256 threads per SM of an H100 (132 SMs), interleaved twice: the
  device time of each phase's graph (events around ``_graph_run``) and the wall of ``_update_once``
  (synchronised before and after; events off), medians over 25 batches after 3 warm-up ones.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())

import numpy as np  # noqa: E402

from tests.phase_timing import _table  # noqa: E402
from vinestream.connectors.synthetic import rmat_edges  # noqa: E402
from vinestream.stream.pipeline import build_pipeline  # noqa: E402
from vinestream.structures import graphvine_kernels as gk  # noqa: E402
from vinestream.structures.backend import synchronize, to_numpy  # noqa: E402

SPIN = r'''extern "C" __global__ void spin(long long cycles)
{ long long t0 = clock64(); while (clock64() - t0 < cycles) { } }'''


def batches(src, dst, init, k, seed=0):
    rng = np.random.default_rng(seed)
    pos = init
    while True:
        op = np.where(rng.random(k) < 0.1, 2, 1).astype(np.int8)
        bs, bd = src[pos:pos + k].copy(), dst[pos:pos + k].copy()
        old = rng.integers(0, init, k)
        bs[op == 2], bd[op == 2] = src[old[op == 2]], dst[old[op == 2]]
        pos += k
        yield _table(op, bs, bd)


def med_ms(xs):
    return round(statistics.median(xs) * 1e3, 4)


def per_kernel(cp, p, stream, count=10):
    g = p.structure
    g.graphs = False
    spin = cp.RawKernel(SPIN, "spin")
    rec = []
    saved = gk.launcher

    def launcher(xp, name, n, args):
        saved(xp, name, n, args)
        e = cp.cuda.Event()
        e.record()
        rec.append((name, e))
    times: dict = {}

    def wrap(kind, fn):
        def run(batch):
            spin((1,), (1,), (np.int64(4_000_000),))         # ~2 ms at ~2 GHz
            e0 = cp.cuda.Event()
            e0.record()
            rec.clear()
            rec.append(("start", e0))
            out = fn(batch)
            synchronize(cp)
            per = times.setdefault(kind, {})
            for (_, a), (name, b) in zip(rec, rec[1:]):
                per.setdefault(name, []).append(cp.cuda.get_elapsed_time(a, b) / 1e3)
            per.setdefault("total", []).append(cp.cuda.get_elapsed_time(rec[0][1], rec[-1][1]) / 1e3)
            return out
        return run
    gk.launcher = launcher
    g.delete_edges_counted = wrap("delete", g.delete_edges_counted)
    g.insert_edges_counted = wrap("insert", g.insert_edges_counted)
    try:
        for _ in range(count):
            p._update_once(next(stream))
    finally:
        gk.launcher = saved
        del g.delete_edges_counted, g.insert_edges_counted
        g.graphs = True
    return {kind: {name: med_ms(v) for name, v in per.items()} for kind, per in times.items()}


def graph_pass(cp, p, stream, count=25):
    g = p.structure
    for _ in range(3):
        p._update_once(next(stream))
    walls, dev = [], {}
    for _ in range(count):
        tab = next(stream)
        synchronize(cp)
        t0 = time.perf_counter()
        p._update_once(tab)
        synchronize(cp)
        walls.append(time.perf_counter() - t0)
    run0 = g._graph_run
    pending = []

    def graph_run(kind, launch_fn, out):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        run0(kind, launch_fn, out)
        e.record()
        pending.append((kind, s, e))
    g._graph_run = graph_run
    try:
        for _ in range(count):
            p._update_once(next(stream))
            synchronize(cp)
            for kind, s, e in pending:
                dev.setdefault(kind, []).append(cp.cuda.get_elapsed_time(s, e) / 1e3)
            pending.clear()
    finally:
        del g._graph_run
    return {"update_wall_ms": med_ms(walls), "graph_device_ms": {k: med_ms(v) for k, v in dev.items()}}


def main(outdir, tag):
    import cupy as cp
    os.makedirs(outdir, exist_ok=True)
    src, dst = (to_numpy(a) for a in rmat_edges(np, 20, 16, seed=3))
    init = len(src) - 400_000
    p = build_pipeline(structure="graphvine", backend="gpu")
    p.apply(_table(np.ones(init, np.int8), src[:init], dst[:init]))
    stream = batches(src, dst, init, 1000)
    for _ in range(3):
        p._update_once(next(stream))
    report = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "tag": tag}
    report["per_kernel_ms"] = per_kernel(cp, p, stream)
    print(tag, "per_kernel", json.dumps(report["per_kernel_ms"]), flush=True)
    if os.environ.get("KP_PER_KERNEL_ONLY"):                # call 3: the kernels one by one only
        with open(os.path.join(outdir, f"kernels-{tag}.json"), "w") as f:
            json.dump(report, f, indent=1)
        return
    default = gk.MIN_GRID
    grids = {"8/SM": default, "2/SM": 132 * 2 * 256, "1/SM": 132 * 256}
    report["min_grid"] = {}
    for rnd in range(2):
        for label, mg in grids.items():
            gk.MIN_GRID = mg
            p.structure._drop_graphs()
            r = graph_pass(cp, p, stream)
            report["min_grid"].setdefault(label, []).append(r)
            print(tag, "min_grid", label, rnd, json.dumps(r), flush=True)
    gk.MIN_GRID = default
    with open(os.path.join(outdir, f"kernels-{tag}.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/profile", sys.argv[2] if len(sys.argv) > 2 else "tree")
