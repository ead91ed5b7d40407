#!/usr/bin/env python3
"""A fresh replay's device and pinned allocations: how many reached the driver (the pools grew) and the time
they took, against the window (the CLI's start first: defer_numpy_extras, the early context).

    python3 .ci/gpu-alloc-cost.py STRUCTURE [LOG]
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.getcwd())
import vinestream
from vinestream.structures.backend import defer_numpy_extras, start_primary_context

defer_numpy_extras()
start_primary_context("gpu")
import cupy  # noqa: E402

structure = sys.argv[1]
log = sys.argv[2] if len(sys.argv) > 2 else ".data/sx-mathoverflow.events.parquet"
pool, pinned = cupy.get_default_memory_pool(), cupy.get_default_pinned_memory_pool()
lock = threading.Lock()
stats = {"device": [0, 0, 0.0, 0], "pinned": [0, 0, 0.0, 0]}     # calls, grew, seconds in grown calls, bytes


def device_alloc(size):
    before = pool.total_bytes()
    t = time.perf_counter()
    mem = pool.malloc(size)
    dt = time.perf_counter() - t
    with lock:
        s = stats["device"]
        s[0] += 1
        if pool.total_bytes() > before:
            s[1] += 1
            s[2] += dt
            s[3] += pool.total_bytes() - before
    return mem


def pinned_alloc(size):
    before = pinned.n_free_blocks()
    t = time.perf_counter()
    mem = pinned.malloc(size)
    dt = time.perf_counter() - t
    with lock:
        s = stats["pinned"]
        s[0] += 1
        if pinned.n_free_blocks() >= before:                 # nothing reused: a new host allocation
            s[1] += 1
            s[2] += dt
            s[3] += size
    return mem


cupy.cuda.set_allocator(device_alloc)
cupy.cuda.set_pinned_memory_allocator(pinned_alloc)
report, _ = vinestream.replay([log], structure=structure, backend="gpu", batch_size=10000,
                              jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1], out=f"/tmp/alloc-{structure}",
                              progress=False)
print(f"{structure}: window {1e3 * report.seconds:.0f} ms; " + "; ".join(
    f"{k}: {c} allocations, {g} reached the driver in {1e3 * s:.1f} ms ({b / 2**20:.1f} MiB)"
    for k, (c, g, s, b) in stats.items()))
