#!/usr/bin/env python3
"""A replay's parts without the application's threads: the log's batches applied in a loop.

    python3 .ci/gpu-replay-direct.py LOG OUT.json [structure ...]

The log is read and validated once, cut into 1e4-event batches; then, per structure, after one untimed pass,
ROUNDS rounds of each variant in turn: ``apply`` (Pipeline.apply only), ``outputs`` (every job's output table
read each batch, as the results sink does), ``sync`` (the device drained after each batch: device time
included), ``none`` (no jobs). Wall ms and the pipeline's phase ms per variant go to stdout and OUT.json.
SWITCH sets sys.setswitchinterval first (seconds). PROFILE=1: the first pass of each structure (the process's
first, cold) and a second one run under cProfile, into OUT.json.<structure>-{first,warm}.txt.
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

import pyarrow.parquet as pq

import vinestream
from vinestream.structures.backend import get_backend

JOBS = ["pagerank", "bfs", "triangles"]


def batches(log, size=10000):
    table = pq.read_table(log)
    out = []
    for start in range(0, table.num_rows, size):
        events, _dead = vinestream.validate(table.slice(start, size), source="log",
                                            positions=range(start, min(start + size, table.num_rows)))
        out.append(events)
    return out


def one(structure, parts, variant, xp):
    p = vinestream.build_pipeline(structure=structure, backend=os.environ.get("BACKEND", "gpu"),
                                  jobs=[] if variant == "none" else JOBS, bfs_sources=[1])
    phases = {}
    sync = xp.cuda.Device().synchronize if hasattr(xp, "cuda") else (lambda: None)
    sync()
    t0 = time.perf_counter()
    for events in parts:
        r = p.apply(events)
        for k, v in r.seconds.items():
            phases[k] = phases.get(k, 0.0) + v
        if variant == "outputs":
            for name in r.job_outputs:
                r.job_outputs[name]
        elif variant == "sync":
            sync()
    sync()
    return time.perf_counter() - t0, {k: round(v * 1000, 1) for k, v in phases.items()}


def main(log, out_json, structures):
    if os.environ.get("SWITCH"):
        sys.setswitchinterval(float(os.environ["SWITCH"]))
    xp = get_backend(os.environ.get("BACKEND", "gpu"))
    parts = batches(log)
    rounds = int(os.environ.get("ROUNDS", 3))
    variants = ["apply", "outputs", "sync", "none"]
    result = {}
    for structure in structures:
        if os.environ.get("PROFILE"):
            # one thread only, so cProfile's figures are the apply path's own: the process's first pass (kernel
            # loads, graph captures, pool growth) and a warm one
            for label in ("first", "warm"):
                prof = cProfile.Profile()
                prof.enable()
                wall, _ = one(structure, parts, "outputs", xp)
                prof.disable()
                s = io.StringIO()
                st = pstats.Stats(prof, stream=s)
                st.sort_stats("tottime").print_stats(int(os.environ.get("PROFILE_TOP", 50)))
                st.sort_stats("cumulative").print_stats(int(os.environ.get("PROFILE_CUM", 150)))
                with open(f"{out_json}.{structure}-{label}.txt", "w") as f:
                    f.write(f"{structure} {label} pass (outputs read) {wall * 1000:.1f} ms\n" + s.getvalue())
        else:
            one(structure, parts, "outputs", xp)
        rows = {v: [] for v in variants}
        for r in range(rounds):
            for v in variants[r % 4:] + variants[:r % 4]:
                rows[v].append(one(structure, parts, v, xp))
        result[structure] = rows
        for v, got in rows.items():
            print(f"{structure:10s} {v:8s} {statistics.median(w for w, _ in got) * 1000:7.1f} ms  "
                  f"walls {[round(w * 1000, 1) for w, _ in got]}  phases {got[-1][1]}", flush=True)
    with open(out_json, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:] or ["coo"])
