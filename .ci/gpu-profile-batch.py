#!/usr/bin/env python3
"""Where a small batch's time goes on the GPU: host (Python + launches) against device, per phase.

Run from the repository root on the GPU box: ``python3 .ci/gpu-profile-batch.py OUTDIR``.
For coo and graphvine on R-MAT 20 (edge factor 16), 1,000-event batches (90% inserts, 10%
deletes, as ``tests.phase_timing``):

* ``phases``: per phase the median CUDA-event time and the median host time of the same
  region (perf_counter, no sync): host ~ event means the phase is host-bound;
* ``resolve_kernel``: ``cupyx.profiler.benchmark`` of the fused resolve and CSR steps alone
  (their CPU and GPU times separately);
* a cProfile of 30 batches (top functions by tottime) into OUTDIR/profile-<structure>.txt.
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

sys.path.insert(0, os.getcwd())

import numpy as np

from tests.phase_timing import _table, churn_tables
from vinestream.connectors.synthetic import rmat_edges
from vinestream.stream.batching import resolve_kernels
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures.backend import synchronize, to_numpy


def batches(src, dst, init, k, count, seed=0):
    return churn_tables(src, dst, init, count, k, np.random.default_rng(seed))


def _capacity():
    from vinestream.stream.batching import resolve_kernels as rk
    if os.environ.get("CAPACITY"):
        rk.CAPACITY = int(os.environ["CAPACITY"])


def main(outdir):
    import cupy as cp
    from cupyx.profiler import benchmark
    os.makedirs(outdir, exist_ok=True)
    _capacity()
    scale, k, count = int(os.environ.get("SCALE", 20)), int(os.environ.get("BATCH", 1000)), 40
    src, dst = (to_numpy(a) for a in rmat_edges(np, scale, 16, seed=3))
    init = len(src) - (3 * count + 2) * k
    report = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "scale": scale, "batch": k}
    for name in os.environ.get("STRUCTURES", "coo,graphvine").split(","):
        p = build_pipeline(structure=name, backend="gpu")
        p.apply(_table(np.ones(init, np.int8), src[:init], dst[:init]))
        stream = batches(src, dst, init, k, 3 * count + 1)
        p._update_once(next(stream))                   # warm-up: kernel compilation
        # 1. phases: CUDA events against host time
        host = {}
        orig = p._timed

        from contextlib import contextmanager

        @contextmanager
        def timed(seconds, phase, chain=False, orig=orig, host=host):
            t0 = time.perf_counter()
            with orig(seconds, phase, chain):
                yield
            host.setdefault(phase, []).append(time.perf_counter() - t0)
        p._timed = timed
        ev, walls = [], []
        for _ in range(count):
            tab = next(stream)
            synchronize(cp)
            t0 = time.perf_counter()
            up = p._update_once(tab)
            synchronize(cp)
            walls.append(time.perf_counter() - t0)
            ev.append(dict(up.seconds))
        p._timed = orig
        row = {ph: {"event_ms": round(statistics.median(e.get(ph, 0) for e in ev) * 1e3, 3),
                    "host_ms": round(statistics.median(host[ph]) * 1e3, 3)} for ph in host}
        row["update_wall_ms"] = round(statistics.median(walls) * 1e3, 3)
        # 2. the fused resolve / csr alone (pure functions of the batch and the map)
        tab = next(stream)
        vm = p.vertex_map
        b = benchmark(resolve_kernels.fused_net_effect, (cp, tab, vm), n_repeat=50, n_warmup=5)
        row["fused_net_effect"] = {"cpu_ms": round(float(np.median(b.cpu_times)) * 1e3, 3),
                                   "gpu_ms": round(float(np.median(b.gpu_times)) * 1e3, 3)}
        # 3. cProfile of count batches
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(count):
            p._update_once(next(stream))
        synchronize(cp)
        prof.disable()
        s = io.StringIO()
        st = pstats.Stats(prof, stream=s).sort_stats("tottime")
        st.print_stats(45)
        st.sort_stats("cumulative").print_stats(45)
        st.print_callers(r"asarray|basic.py.*\(empty\)|astype|\(get\)|zeros|cumsum|to_numpy")
        with open(os.path.join(outdir, f"profile-{name}.txt"), "w") as f:
            f.write(s.getvalue())
        report[name] = row
        print(name, json.dumps(row), flush=True)
    with open(os.path.join(outdir, "phases.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__" and os.environ.get("MODE") != "crossover":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/profile-batch")


def crossover(outdir):
    """Fused resolve against the array program per batch size, directed and undirected (CPU and GPU ms)."""
    import json as _json

    import cupy as cp
    from cupyx.profiler import benchmark

    from vinestream.stream.batching import resolve_kernels as rk
    from vinestream.stream.batching.resolve import EventArrays, net_effect
    rk.CAPACITY = 1 << 15
    src, dst = (to_numpy(a) for a in rmat_edges(np, 20, 16, seed=3))
    init = len(src) - 200_000
    p = build_pipeline(structure="coo", backend="gpu")
    p.apply(_table(np.ones(init, np.int8), src[:init], dst[:init]))
    vm = p.vertex_map
    rows = []
    for k in (1000, 2000, 4096, 8192, 12000, 16384):
        tab = next(batches(src, dst, init, k, 1))
        for und in (False, True):
            f = benchmark(rk.fused_net_effect, (cp, tab, vm), {"undirected": und}, n_repeat=20, n_warmup=3)

            def array(tab=tab, und=und):
                return net_effect(cp, EventArrays.from_table(cp, tab), lambda ids: vm.lookup(ids) >= 0,
                                  undirected=und, keep_self_loops=False, released_before=vm.released)
            a = benchmark(array, (), n_repeat=20, n_warmup=3)
            rows.append({"events": k, "undirected": und,
                         "fused_ms": round(float(np.median(f.gpu_times)) * 1e3, 3),
                         "array_ms": round(float(np.median(a.gpu_times)) * 1e3, 3)})
            print(rows[-1], flush=True)
    with open(os.path.join(outdir, "resolve_crossover.json"), "w") as fh:
        _json.dump(rows, fh, indent=1)


if __name__ == "__main__" and os.environ.get("MODE") == "crossover":
    crossover(sys.argv[1] if len(sys.argv) > 1 else "/tmp/profile-batch")
