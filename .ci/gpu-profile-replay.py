#!/usr/bin/env python3
"""Where a replay's time goes: a cProfile of the APPLY thread (the pipeline and the sinks).

    python3 .ci/gpu-profile-replay.py LOG OUTDIR [structure ...]

Per structure: one warm-up replay (kernel compilation), then a replay with the apply
thread (and, separately, the input thread) under cProfile (``Application._apply_loop`` wrapped); the report's phase
milliseconds and the profile's top functions go to OUTDIR/replay-<structure>.txt.
Environment: BACKEND (default gpu), BATCH (10000), JOBS (pagerank,bfs,triangles), OUT_RESULTS (1: write --out),
LABELS (warm,timed,profiled: the replays in turn; "profiled" alone profiles a fresh process's first replay),
WARM_UP (1: the device warm-up thread on).
"""
from __future__ import annotations

import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.getcwd())

import vinestream
from vinestream.stream.app import application


def _capacity():
    from vinestream.stream.batching import resolve_kernels as rk
    if os.environ.get("CAPACITY"):
        rk.CAPACITY = int(os.environ["CAPACITY"])


def _profiled(method, prof, on):
    """``method`` run under ``prof`` (when ``on``)."""
    def wrapped(self):
        if on:
            prof.enable()
        try:
            return method(self)
        finally:
            if on:
                prof.disable()
    return wrapped


def main(log, outdir, structures):
    os.makedirs(outdir, exist_ok=True)
    _capacity()
    backend = os.environ.get("BACKEND", "gpu")
    batch = int(os.environ.get("BATCH", 10000))
    jobs = [j for j in os.environ.get("JOBS", "pagerank,bfs,triangles").split(",") if j]
    write = os.environ.get("OUT_RESULTS", "1") == "1"
    original = application.Application._apply_loop
    original_run = application.Application.run
    for structure in structures:
        lines = []
        for label in os.environ.get("LABELS", "warm,timed,profiled").split(","):
            tmp = tempfile.mkdtemp()
            prof = cProfile.Profile()

            application.Application._apply_loop = _profiled(original, prof, label == "profiled")
            inprof = cProfile.Profile()
            # Python >= 3.12 profiles every thread with one profiler and refuses a second one
            application.Application.run = _profiled(original_run, inprof,
                                                    label == "profiled" and sys.version_info < (3, 12))
            t0 = time.perf_counter()
            report, _ = vinestream.replay([log], structure=structure, backend=backend, batch_size=batch,
                                             jobs=jobs, bfs_sources=[int(os.environ.get("BFS_SOURCE", 1))],
                                             out=os.path.join(tmp, "o") if write else None,
                                             warm_up=os.environ.get("WARM_UP", "1") == "1")
            wall = time.perf_counter() - t0
            application.Application._apply_loop = original
            application.Application.run = original_run
            lines.append(f"{structure} {label}: {report.events} events in {wall:.3f} s (report {report.seconds:.3f} s)"
                         f" = {report.events / report.seconds:,.0f} events/s")
            if label in ("timed", "profiled"):
                lines.append(report.table() if hasattr(report, "table") else str(report))
            if label == "profiled":
                s = io.StringIO()
                st = pstats.Stats(prof, stream=s)
                st.sort_stats("tottime").print_stats(60)
                st.sort_stats("cumulative").print_stats(130)
                lines.append(s.getvalue())
                s = io.StringIO()
                if sys.version_info < (3, 12):
                    pstats.Stats(inprof, stream=s).sort_stats("tottime").print_stats(40)
                    lines.append("===== the input thread (Application.run)\n" + s.getvalue())
            shutil.rmtree(tmp, ignore_errors=True)
        text = "\n".join(lines)
        with open(os.path.join(outdir, f"replay-{structure}.txt"), "w") as f:
            f.write(text)
        print("\n".join(lines[:3]), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:] or ["coo"])
