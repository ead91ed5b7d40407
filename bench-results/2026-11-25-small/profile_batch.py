#!/usr/bin/env python3
"""Where a 1,000-event batch's host time goes on the GPU, per phase (issue 11's 1 ms goal).

Run from a tree's root on the GPU box: ``python3 bench-results/2026-11-25-small/profile_batch.py OUT TAG``
(the tree's own ``vinestream`` is imported).  For coo and graphvine on R-MAT 20 (edge factor 16),
1,000-event batches (90% inserts, 10% deletes, as ``tests.phase_timing``), into ``OUT/profile-TAG.json``
and ``OUT/cprofile-TAG.txt``:

* per phase: the median CUDA-event time, the median host time of the same region (perf_counter, no
  sync), the fused-kernel launches and CUDA-graph launches (``backend.count_launch``), and the median
  wall of ``_update_once`` (synchronised before and after);
* a cProfile of 30 batches per structure (top functions by internal and cumulative time);
* with ``UNIT=1``: what single host-side operations cost on this host (CuPy allocation, slicing, a raw
  kernel launch with 3 and 20 arguments, an event record, small device <-> host copies pageable and
  pinned, a CUDA graph of 5 launches against the 5 launches).
"""
from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
from contextlib import contextmanager

sys.path.insert(0, os.getcwd())

import numpy as np

from tests.phase_timing import _table
from vinestream.connectors.synthetic import rmat_edges
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures import backend
from vinestream.structures.backend import synchronize, to_numpy


def batches(src, dst, init, k, count, seed=0):
    rng = np.random.default_rng(seed)
    pos = init
    for _ in range(count):
        op = np.where(rng.random(k) < 0.1, 2, 1).astype(np.int8)
        bs, bd = src[pos:pos + k].copy(), dst[pos:pos + k].copy()
        old = rng.integers(0, init, k)
        bs[op == 2], bd[op == 2] = src[old[op == 2]], dst[old[op == 2]]
        pos += k
        yield _table(op, bs, bd)


def _median_us(f, reps=2000):
    import cupy as cp
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    cp.cuda.get_current_stream().synchronize()
    return round(statistics.median(ts) * 1e6, 2)


def unit_costs() -> dict:
    """Host microseconds of single operations (median of 2,000)."""
    import cupy as cp
    import cupyx
    code = r'''
extern "C" __global__ void k3(long long* a, long long n, long long b) { if (threadIdx.x == 0 && n < 0) a[0] = b; }
extern "C" __global__ void k20(long long* a, long long n, long long b, long long* c, long long* d, long long* e,
  long long f, long long g, long long h, long long* i, long long* j, long long l, long long m, long long o,
  long long* p, long long* q, long long r, long long s, long long t, long long u)
{ if (threadIdx.x == 0 && n < 0) a[0] = b; }'''
    mod = cp.RawModule(code=code)
    k3, k20 = mod.get_function("k3"), mod.get_function("k20")
    a = cp.zeros(4096, dtype=np.int64)
    n1 = np.int64(1)
    args20 = (a, n1, n1, a, a, a, n1, n1, n1, a, a, n1, n1, n1, a, a, n1, n1, n1, n1)
    out = {}
    out["cupy_empty_1000_int64"] = _median_us(lambda: cp.empty(1000, dtype=np.int64))
    out["slice"] = _median_us(lambda: a[:500])
    out["view_float32"] = _median_us(lambda: a.view(np.float32))
    out["launch_3_args"] = _median_us(lambda: k3((1,), (1024,), (a, n1, n1)))
    out["launch_20_args"] = _median_us(lambda: k20((1,), (1024,), args20))
    out["np_int64_scalar"] = _median_us(lambda: np.int64(5))
    out["event_record"] = _median_us(lambda: cp.cuda.Event().record())
    out["d2h_8_longs_get"] = _median_us(lambda: a[:8].get(), 500)
    pin = cupyx.empty_pinned(4096, dtype=np.int64)
    s = cp.cuda.get_current_stream()

    def pinned_d2h():
        a.data.copy_to_host_async(pin.ctypes.data, 64, s)
        s.synchronize()
    out["d2h_8_longs_pinned_async_sync"] = _median_us(pinned_d2h, 500)
    host = np.zeros(21000, dtype=np.uint8)
    out["h2d_21kB_asarray_pageable"] = _median_us(lambda: cp.asarray(host), 500)
    dev = cp.empty(21000, dtype=np.uint8)
    hp = cupyx.empty_pinned(21000, dtype=np.uint8)
    out["h2d_21kB_pinned_async"] = _median_us(lambda: dev.data.copy_from_host_async(hp.ctypes.data, 21000, s), 500)
    out["stream_sync_idle"] = _median_us(lambda: s.synchronize())

    def five():
        for _ in range(5):
            k3((1,), (1024,), (a, n1, n1))
    cap = cp.cuda.Stream(non_blocking=True)
    cap.begin_capture()
    with cap:
        five()
    g = cap.end_capture()
    out["five_launches"] = _median_us(five, 500)
    out["graph_of_five_launch"] = _median_us(lambda: g.launch(s), 500)
    return out


def profile(name: str, src, dst, k: int, count: int, outtxt) -> dict:
    import cupy as cp
    init = len(src) - (3 * count + 2) * k
    p = build_pipeline(structure=name, backend="gpu")
    p.apply(_table(np.ones(init, np.int8), src[:init], dst[:init]))
    stream = batches(src, dst, init, k, 3 * count + 2)
    for _ in range(2):
        p._update_once(next(stream))                   # warm-up: kernel compilation, first graphs
    synchronize(cp)
    host, launches = {}, {}
    counter = backend.TransferCounter()
    orig = p._timed

    @contextmanager
    def timed(seconds, phase, chain=False):
        t0 = time.perf_counter()
        mark = dict(counter.kinds)
        with orig(seconds, phase, chain):
            yield
        host.setdefault(phase, []).append(time.perf_counter() - t0)
        launches.setdefault(phase, []).append({kk: v - mark.get(kk, 0) for kk, v in counter.kinds.items()
                                               if v - mark.get(kk, 0)})
    p._timed = timed
    orig_delta = p._delta

    def delta(*args, **kwargs):               # the BatchDelta's host time (no phase of its own)
        t0 = time.perf_counter()
        out = orig_delta(*args, **kwargs)
        host.setdefault("delta (host only)", []).append(time.perf_counter() - t0)
        launches.setdefault("delta (host only)", [{}])
        return out
    p._delta = delta
    backend._OP_COUNTERS.append(counter)
    ev, walls, totals = [], [], []
    try:
        for _ in range(count):
            tab = next(stream)
            synchronize(cp)
            c0 = counter.count
            t0 = time.perf_counter()
            up = p._update_once(tab)
            synchronize(cp)
            walls.append(time.perf_counter() - t0)
            totals.append(counter.count - c0)
            ev.append(dict(up.seconds))
    finally:
        backend._OP_COUNTERS.remove(counter)
        p._timed, p._delta = orig, orig_delta
    row = {ph: {"event_ms": round(statistics.median(e.get(ph, 0) for e in ev) * 1e3, 3),
                "host_ms": round(statistics.median(host[ph]) * 1e3, 3),
                "launches_last_batch": launches[ph][-1]} for ph in host}
    row["update_wall_ms"] = round(statistics.median(walls) * 1e3, 3)
    row["update_wall_ms_min"] = round(min(walls) * 1e3, 3)
    row["counted_launches_per_batch"] = statistics.median(totals)
    from vinestream.stream.batching import resolve_kernels as rk  # this branch: resolve's CUDA graphs
    row["resolve_graphs"] = len(getattr(getattr(rk, "_STAGING", None), "graphs", None) or {})
    row["resolve_graph_failed"] = getattr(rk, "_graph_failed", None)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(count):
        p._update_once(next(stream))
    synchronize(cp)
    prof.disable()
    s = io.StringIO()
    st = pstats.Stats(prof, stream=s).sort_stats("tottime")
    st.print_stats(35)
    st.sort_stats("cumulative").print_stats(35)
    outtxt.write(f"===== {name}\n" + s.getvalue().replace(os.getcwd(), "."))
    return row


def main(outdir, tag):
    import cupy as cp
    os.makedirs(outdir, exist_ok=True)
    src, dst = (to_numpy(a) for a in rmat_edges(np, 20, 16, seed=3))
    report = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "tag": tag}
    with open(os.path.join(outdir, f"cprofile-{tag}.txt"), "w") as txt:
        for name in os.environ.get("STRUCTURES", "coo,graphvine").split(","):
            report[name] = profile(name, src, dst, 1000, 30, txt)
            print(tag, name, json.dumps(report[name]), flush=True)
    if os.environ.get("UNIT"):
        report["unit_us"] = unit_costs()
        print(tag, "unit_us", json.dumps(report["unit_us"]), flush=True)
    with open(os.path.join(outdir, f"profile-{tag}.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/profile", sys.argv[2] if len(sys.argv) > 2 else "tree")
