"""Why a fresh device machine's first process times the 1,000-event update ~40% slower than the next ones
(sessions 31-32: coo 1.10 ms against 0.77, graphvine 1.13 against 0.84).

    python3 .ci/gpu-first-process.py [--spin SECONDS] [--batches N] [--gc freeze|off]

Runs ``tests.phase_timing``'s update (R-MAT 20, 1,000-event batches, 90% inserts) for coo and graphvine and prints,
as JSON, the median wall time of each window of 50 batches, so a process that speeds up as it runs shows it; the
GPU's SM clock (``nvidia-smi``) before and after; ``--spin`` keeps the GPU busy that long before the batches
(a clock that ramps up would then be up already); ``--gc freeze`` moves every object alive after the graph's load
out of the collector's reach (``gc.freeze``), ``--gc off`` turns the collector off for the batches (is a collection
of the process's long-lived objects part of the host time?).
"""
import argparse
import gc
import json
import statistics
import subprocess
import time

import numpy as np

from tests.phase_timing import _table, churn_tables
from vinestream.connectors.synthetic import rmat_edges
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures.backend import synchronize, to_numpy


def clocks():
    q = "clocks.sm,clocks.mem,pstate,temperature.gpu,power.draw"
    return subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"], capture_output=True,
                          text=True).stdout.strip()


def windows(seconds, size: int = 50):
    """Median milliseconds of each run of ``size`` batches."""
    return [round(statistics.median(seconds[i:i + size]) * 1e3, 3) for i in range(0, len(seconds), size)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spin", type=float, default=0.0)
    ap.add_argument("--batches", type=int, default=300)
    ap.add_argument("--gc", choices=("on", "freeze", "off"), default="on")
    args = ap.parse_args()
    out = {"clock_start": clocks()}
    import cupy as cp
    if args.spin:
        x = cp.ones(1 << 24, dtype=cp.float32)
        end = time.perf_counter() + args.spin
        while time.perf_counter() < end:
            x *= 1.0000001
            cp.cuda.Device().synchronize()
        out["clock_after_spin"] = clocks()
    src, dst = (to_numpy(a) for a in rmat_edges(np, 20, 16, seed=3))
    spare = (args.batches + 1) * 1000
    init = len(src) - spare
    for name in ("coo", "graphvine"):
        rng = np.random.default_rng(0)
        p = build_pipeline(structure=name, backend="gpu")
        p.apply(_table(np.ones(init, np.int8), src[:init], dst[:init]))
        walls, host = [], []
        if args.gc == "freeze":
            gc.collect()
            gc.freeze()
        elif args.gc == "off":
            gc.disable()
        for b, table in enumerate(churn_tables(src, dst, init, args.batches + 1, 1000, rng)):
            p.epoch += 1
            synchronize(p.xp)
            start, cpu0 = time.perf_counter(), time.process_time()
            p._update_once(table)
            synchronize(p.xp)
            if b:
                walls.append(time.perf_counter() - start)
                host.append(time.process_time() - cpu0)
        out[name] = {"windows_ms": windows(walls), "cpu_ms": windows(host),
                     "median_ms": round(statistics.median(walls) * 1e3, 3)}
        out[f"clock_after_{name}"] = clocks()
        out[f"gc_{name}"] = {"mode": args.gc, "counts": gc.get_count(), "frozen": gc.get_freeze_count()}
        gc.enable()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
