#!/usr/bin/env python3
"""A fresh GPU replay's start, step by step: wall times (ms from this script's start) of the imports,
``replay()``'s entry, the run's timed window, the pipeline's build, each step of the warm-up thread,
the first batch's result row and the end.

    python3 .ci/gpu-startup.py STRUCTURE [LOG]        (PROFILE=1: cProfile of the build and the first apply)
"""
import os
import shutil
import sys
import threading
import time

T0 = time.perf_counter()
marks = []


def mark(what):
    marks.append((1000 * (time.perf_counter() - T0), threading.current_thread().name, what))


sys.path.insert(0, os.getcwd())
import vinestream  # noqa: E402

mark("import vinestream")
if os.environ.get("CLI_START", "1") == "1":  # what `vinestream replay` does first (session 13's CLI)
    from vinestream.structures.backend import defer_numpy_extras, start_primary_context
    mark(f"deferred {defer_numpy_extras()}")
    start_primary_context("gpu")
from vinestream.stream.app import application, warm_up  # noqa: E402
from vinestream.stream.app import replay as replay_mod  # noqa: E402

structure = sys.argv[1]
if os.environ.get("EARLY_CTX") == "1":   # a variant: the CUDA context made before the replay
    import cupy
    cupy.cuda.runtime.free(cupy.cuda.runtime.malloc(1))
    mark("context made")
if os.environ.get("EARLY_CUPYX") == "1":   # a variant: cupyx (and SciPy) imported before the replay
    import cupyx.scipy.sparse  # noqa: F401
    mark("cupyx.scipy.sparse imported")
if os.environ.get("GROW_BY"):            # a variant: GraphVine's pool growth step
    from vinestream.structures import graphvine
    graphvine.GROW_BY = float(os.environ["GROW_BY"])
log = sys.argv[2] if len(sys.argv) > 2 else ".data/sx-mathoverflow.events.parquet"

real_run = application.Application.run


def run(self):
    mark("Application.run (window starts)")
    try:
        return real_run(self)
    finally:
        mark("Application.run returns (window ends)")


application.Application.run = run
real_build = replay_mod.build_pipeline


PROFILES = []


def profiled(what, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` under cProfile when $PROFILE is 1 (its top functions printed at the end)."""
    if os.environ.get("PROFILE") != "1":
        return fn(*args, **kwargs)
    import cProfile
    import io
    import pstats
    prof = cProfile.Profile()
    try:
        return prof.runcall(fn, *args, **kwargs)
    finally:
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(35)
        PROFILES.append((what, text.getvalue()))


def build(**kw):
    mark("build_pipeline starts")
    try:
        return profiled("build_pipeline", real_build, **kw)
    finally:
        mark("build_pipeline ends")


from vinestream.stream.pipeline import pipeline as pipeline_mod  # noqa: E402

real_apply = pipeline_mod.Pipeline.apply


def apply(self, *args, **kwargs):
    """The first batch's apply, profiled with $PROFILE=1."""
    if getattr(self, "_startup_seen", False):
        return real_apply(self, *args, **kwargs)
    self._startup_seen = True
    mark("first apply starts")
    try:
        return profiled("first Pipeline.apply", real_apply, self, *args, **kwargs)
    finally:
        mark("first apply ends")


pipeline_mod.Pipeline.apply = apply


replay_mod.build_pipeline = build
real_backend = replay_mod.get_backend


def backend(name):
    mark("get_backend starts")
    try:
        return real_backend(name)
    finally:
        mark("get_backend ends")


replay_mod.get_backend = backend
real_warm = warm_up.device_warm_up


def warm(xp, modules):
    import importlib
    mark("warm-up starts")
    if os.environ.get("SPLIT_WARM") == "1":       # a variant: the device's set-up on a second thread meanwhile
        def device():
            import numpy as np
            for dtype in (np.int64, np.int32):
                keys = xp.empty(8, dtype=dtype)              # no elementwise kernel: those import cupyx first
                xp.sort(keys)
                xp.argsort(keys, kind="stable")
            mark("warm-up (device thread) sorted")
            for name in modules:
                kernels = getattr(importlib.import_module(name), "_kernels", None)
                if kernels is not None and hasattr(kernels, "preload"):
                    kernels.preload(xp)
            mark("warm-up (device thread) preloaded")
        threading.Thread(target=device, name="warm-up-device", daemon=True).start()
    for name in warm_up.LIBRARY_MODULES:
        importlib.import_module(name)
        mark(f"warm-up imported {name}")
    real_warm(xp, modules)
    mark("warm-up done")


warm_up.device_warm_up = warm
replay_mod.warm_up_mod.device_warm_up = warm
out = f"/tmp/startup-{structure}"
shutil.rmtree(out, ignore_errors=True)
mark("replay() called")
report, pipeline = vinestream.replay([log], structure=structure, backend="gpu", batch_size=10000,
                              jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1], out=out, progress=False)
mark("replay() returned")
s = vinestream.read_results(out)["summary"].to_pandas().sort_values("epoch")
w = s["wall_time"].to_numpy()
first_wall = float(w[0])
# wall_time is the epoch's time.time(); convert with the offset between the clocks now
offset = time.time() - time.perf_counter()
marks.append((1000 * (first_wall - offset - T0), "results", "first epoch's row"))
marks.append((1000 * (float(w[1]) - offset - T0), "results", "second epoch's row"))
marks.append((1000 * (float(w[5]) - offset - T0), "results", "sixth epoch's row"))
marks.append((1000 * (float(w[-1]) - offset - T0), "results", "last epoch's row"))
print(f"{structure}: window {1000 * report.seconds:.0f} ms, {report.events / report.seconds:,.0f} events/s; "
      f"first phases {[(c, round(float(s[c].iloc[0]), 1)) for c in s.columns if c.endswith('_ms')]}")
for t, who, what in sorted(marks):
    print(f"  {t:8.1f} ms  {who:<22} {what}")
print(f"batches resolved ahead: {pipeline.resolved_ahead} of {report.batches}; "
      f"structure stats {getattr(pipeline.structure, 'stats', {})}")
print("modules: scipy" + (" imported" if "scipy" in sys.modules else " not imported"),
      "scipy.sparse.linalg" + (" imported" if "scipy.sparse.linalg" in sys.modules else " not imported"))
for what, text in PROFILES:
    print(f"--- cProfile of {what} (cumulative)")
    print(text)
