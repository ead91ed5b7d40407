#!/usr/bin/env python3
"""Where graphvine's 1,000-event batch goes on the GPU (issue 11's 1 ms, issue 12's 0.3 ms update).

Run from a tree's root on the GPU box: ``python3 PATH/profile_gv.py OUT TAG [STRUCTURES]`` (the tree's own
``vinestream``).  R-MAT 20 (edge factor 16) loaded, then 1,000-event batches as ``tests.phase_timing`` makes
them (90% inserts of new edges, 10% deletes of loaded ones).  After 3 warm-up batches, 30 batches with:

* per phase: median CUDA-event ms, median host ms of the same region (perf_counter, no sync), the counted
  launches of the last batch (``backend.count_launch``: kernels, CUDA graphs, parameter copies);
* graphvine: the device ms of each CUDA graph launch (events recorded around ``_graph_run``: what the
  graph's kernels take on the device), and the host ms spent in the io reads (``_read_io``: the wait);
* the median wall of ``_update_once`` (synchronised before and after) - in a separate pass of 30 batches
  without the events around the graphs, which cost host time;
* a cProfile of 30 more batches (top functions by internal time) into OUT/cprofile-TAG.txt.
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

import numpy as np  # noqa: E402

from tests.phase_timing import _table  # noqa: E402
from vinestream.connectors.synthetic import rmat_edges  # noqa: E402
from vinestream.stream.pipeline import build_pipeline  # noqa: E402
from vinestream.structures import backend  # noqa: E402
from vinestream.structures.backend import synchronize, to_numpy  # noqa: E402


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


def med(xs):
    return round(statistics.median(xs) * 1e3, 4) if xs else None


def profile(name, src, dst, k, count, txt):
    import cupy as cp
    from vinestream.structures.graphvine import GraphVine
    init = len(src) - (4 * count + 4) * k
    p = build_pipeline(structure=name, backend="gpu")
    p.apply(_table(np.ones(init, np.int8), src[:init], dst[:init]))
    stream = batches(src, dst, init, k, 4 * count + 4)
    for _ in range(3):
        p._update_once(next(stream))                   # warm-up: kernels, first graphs, the workspace
    synchronize(cp)
    # pass 1: walls, no instrumentation
    walls = []
    for _ in range(count):
        tab = next(stream)
        synchronize(cp)
        t0 = time.perf_counter()
        p._update_once(tab)
        synchronize(cp)
        walls.append(time.perf_counter() - t0)
    # pass 2: phases (events and host), launches, graph device times, read waits
    host, launches, graph_ms, reads = {}, {}, {}, []
    counter = backend.TransferCounter()
    orig_timed = p._timed
    gv = isinstance(p.structure, GraphVine)

    @contextmanager
    def timed(seconds, phase, chain=False):
        t0 = time.perf_counter()
        mark = dict(counter.kinds)
        with orig_timed(seconds, phase, chain):
            yield
        host.setdefault(phase, []).append(time.perf_counter() - t0)
        launches[phase] = {kk: v - mark.get(kk, 0) for kk, v in counter.kinds.items() if v - mark.get(kk, 0)}
    p._timed = timed
    pending = []
    if gv:
        g = p.structure
        run0, read0 = g._graph_run, g._read_io

        def graph_run(kind, launch_fn, out):
            s = cp.cuda.Event()
            e = cp.cuda.Event()
            s.record()
            run0(kind, launch_fn, out)
            e.record()
            pending.append((kind, s, e))

        def read_io(lo, hi):
            t0 = time.perf_counter()
            r = read0(lo, hi)
            reads.append(time.perf_counter() - t0)
            return r
        g._graph_run, g._read_io = graph_run, read_io
    backend._OP_COUNTERS.append(counter)
    ev = []
    try:
        for _ in range(count):
            tab = next(stream)
            synchronize(cp)
            up = p._update_once(tab)
            synchronize(cp)
            ev.append(dict(up.seconds))
            for kind, s, e in pending:
                graph_ms.setdefault(kind, []).append(cp.cuda.get_elapsed_time(s, e) / 1e3)
            pending.clear()
    finally:
        backend._OP_COUNTERS.remove(counter)
        p._timed = orig_timed
        if gv:
            del g._graph_run, g._read_io
    row = {ph: {"event_ms": med([e.get(ph, 0) for e in ev]), "host_ms": med(host[ph]),
                "launches_last_batch": launches[ph]} for ph in host}
    row["update_wall_ms"] = med(walls)
    row["update_wall_ms_min"] = round(min(walls) * 1e3, 4)
    if gv:
        row["graph_device_ms"] = {kk: med(v) for kk, v in graph_ms.items()}
        row["graph_launches_per_batch"] = {kk: len(v) / count for kk, v in graph_ms.items()}
        row["read_wait_ms"] = med(reads)
        row["reads_per_batch"] = len(reads) / count
        row["one_sync"] = dict(g.one_sync)
        row["combined_phases"] = dict(getattr(g, "combined_phases", {}))
        row["est"] = str(getattr(g, "_ests", getattr(g, "_est", None)))
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(count):
        p._update_once(next(stream))
    synchronize(cp)
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(30)
    txt.write(f"===== {name}\n" + s.getvalue().replace(os.getcwd(), "."))
    return row


def main(outdir, tag, structures):
    import cupy as cp
    os.makedirs(outdir, exist_ok=True)
    src, dst = (to_numpy(a) for a in rmat_edges(np, 20, 16, seed=3))
    report = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "tag": tag}
    with open(os.path.join(outdir, f"cprofile-{tag}.txt"), "w") as txt:
        for name in structures.split(","):
            report[name] = profile(name, src, dst, 1000, 30, txt)
            print(tag, name, json.dumps(report[name]), flush=True)
    with open(os.path.join(outdir, f"profile-{tag}.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/profile", sys.argv[2] if len(sys.argv) > 2 else "tree",
         sys.argv[3] if len(sys.argv) > 3 else "graphvine")
