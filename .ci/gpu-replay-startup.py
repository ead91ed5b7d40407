#!/usr/bin/env python3
"""Where a fresh process's replay time goes: one ``vinestream.replay`` in a new process, timed by parts.

    python3 .ci/gpu-replay-startup.py LOG OUT.json [structure]

Marks from the process's first line: imports, ``cuInit`` (the backend check), the run's ``_restore``
(pipeline build: the CUDA context), each batch's ``pipeline.apply`` (wall, and its phase times), the
report's seconds.  CuPy's compile-with-cache calls (kernel modules loaded from the disk cache or
compiled) are counted and timed where CuPy calls them through ``cupy.cuda.compiler``'s attributes.
Environment: READ_AHEAD (1), WARM_UP (1), PUSH_GRAPH ("" = default, 0, 1), LIB_TRANSPOSE (1: cuSPARSE's
transpose on every graph, as before), PROFILE (0; 1: a cProfile of the replay, all threads, into OUT.json's
"profile"), INPROC (1: the same replay again in the process, its report too), BATCH (10000), JOBS, BACKEND.
"""
import time

T0 = time.perf_counter()
import cProfile  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import pstats  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

sys.path.insert(0, os.getcwd())
marks = {}


def mark(key):
    marks[key] = round(time.perf_counter() - T0, 4)


import vinestream  # noqa: E402
from vinestream.stream.app import application  # noqa: E402
from vinestream.stream.pipeline import pipeline as pl  # noqa: E402

mark("import_vinestream")
BACKEND = os.environ.get("BACKEND", "gpu")
stats = {}
if BACKEND == "gpu":
    import cupy

    mark("import_cupy")
    cupy.cuda.runtime.getDeviceCount()
    mark("cuinit")
    from cupy.cuda import compiler


def _wrap(mod, name):
    f = getattr(mod, name, None)
    if f is None or not callable(f):
        return

    def wrapped(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            s = stats.setdefault(name, [0, 0.0])
            s[0] += 1
            s[1] += time.perf_counter() - t
    setattr(mod, name, wrapped)


    for _n in ("compile_with_cache", "_compile_module_with_cache", "_compile_with_cache_cuda", "_preprocess",
               "compile_using_nvrtc", "_jitify_prep", "_get_arch", "get_compiler_version"):
        _wrap(compiler, _n)

batches = []
_apply = pl.Pipeline.apply


def apply(self, events):
    t = time.perf_counter()
    try:
        result = _apply(self, events)
    finally:
        wall = time.perf_counter() - t
    batches.append({"at": round(t - T0, 4), "wall_ms": round(wall * 1e3, 3),
                    "phases_ms": {k: round(v * 1e3, 3) for k, v in result.seconds.items()}})
    return result


pl.Pipeline.apply = apply
_restore = application.Application._restore


def restore(self):
    t = time.perf_counter()
    if "run_start" not in marks:                      # the first run's (INPROC runs a second)
        mark("run_start")
    _restore(self)
    marks.setdefault("restore_s", round(time.perf_counter() - t, 4))


application.Application._restore = restore


def main(log, out, structure):
    jobs = [j for j in os.environ.get("JOBS", "pagerank,bfs,triangles").split(",") if j]
    options = {}
    if os.environ.get("PUSH_GRAPH", "") != "":
        options = {"pagerank": {"push_graph": os.environ["PUSH_GRAPH"] == "1"}}
    kwargs = {}
    if os.environ.get("READ_AHEAD", "1") == "0":
        kwargs["read_ahead"] = False
    if os.environ.get("WARM_UP", "1") == "0":
        kwargs["warm_up"] = False
    if os.environ.get("LIB_TRANSPOSE") == "1":          # cuSPARSE's transpose on every graph (as before)
        from vinestream.algorithms import edge_index
        edge_index.LIBRARY_TRANSPOSE_MIN_EDGES_GPU = 0
    before = set(sys.modules)
    tmp = tempfile.mkdtemp()
    prof = cProfile.Profile() if os.environ.get("PROFILE") == "1" else None
    mark("replay_call")
    if prof is not None:
        prof.enable()
    try:
        report, _ = vinestream.replay([log], structure=structure, backend=BACKEND,
                                         batch_size=int(os.environ.get("BATCH", 10000)), jobs=jobs, bfs_sources=[1],
                                         out=os.path.join(tmp, "o"), job_options=options, **kwargs)
    except TypeError:                    # a tree without read_ahead
        report, _ = vinestream.replay([log], structure=structure, backend=BACKEND,
                                         batch_size=int(os.environ.get("BATCH", 10000)), jobs=jobs, bfs_sources=[1],
                                         out=os.path.join(tmp, "o"), job_options=options)
    if prof is not None:
        prof.disable()
    mark("replay_done")
    shutil.rmtree(tmp, ignore_errors=True)
    again = None
    if os.environ.get("INPROC") == "1":                 # the same replay again in this process (steady state)
        n_first = len(batches)
        tmp = tempfile.mkdtemp()
        try:
            rep2, _ = vinestream.replay([log], structure=structure, backend=BACKEND,
                                        batch_size=int(os.environ.get("BATCH", 10000)), jobs=jobs, bfs_sources=[1],
                                        out=os.path.join(tmp, "o"), job_options=options, **kwargs)
        except TypeError:
            rep2, _ = vinestream.replay([log], structure=structure, backend=BACKEND,
                                        batch_size=int(os.environ.get("BATCH", 10000)), jobs=jobs, bfs_sources=[1],
                                        out=os.path.join(tmp, "o"), job_options=options)
        shutil.rmtree(tmp, ignore_errors=True)
        again = {"report_seconds": round(rep2.seconds, 4), "events_per_s": round(rep2.events / rep2.seconds),
                 "phase_ms": {k: round(v * 1e3, 1) for k, v in rep2.phase_seconds.items()}}
        del batches[n_first:]
    walls = sorted(b["wall_ms"] for b in batches[1:])
    doc = {"structure": structure, "env": {k: os.environ.get(k) for k in ("READ_AHEAD", "PUSH_GRAPH", "PROFILE",
                                                                          "WARM_UP", "LIB_TRANSPOSE", "INPROC")},
           "second_run_in_process": again,
           "marks": marks, "report_seconds": round(report.seconds, 4),
           "events_per_s": round(report.events / report.seconds), "events": report.events,
           "batches": len(batches), "first_batch": batches[0] if batches else None,
           "second_batch": batches[1] if len(batches) > 1 else None,
           "apply_ms_total": round(sum(b["wall_ms"] for b in batches), 2),
           "apply_ms_median_after_first": walls[len(walls) // 2] if walls else None,
           "phase_ms": {k: round(v * 1e3, 1) for k, v in report.phase_seconds.items()},
           "compile_calls": {k: [v[0], round(v[1], 4)] for k, v in stats.items()},
           "modules_imported_in_run": sorted(m for m in set(sys.modules) - before
                                             if not m.startswith("_") and m.count(".") <= 2)[:300],
           "per_batch_wall_ms": [b["wall_ms"] for b in batches]}
    if prof is not None:
        s = io.StringIO()
        st = pstats.Stats(prof, stream=s)
        st.sort_stats("cumulative").print_stats(90)
        st.sort_stats("tottime").print_stats(50)
        doc["profile"] = s.getvalue()
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    print(json.dumps({k: doc[k] for k in ("env", "marks", "report_seconds", "events_per_s", "apply_ms_total",
                                          "apply_ms_median_after_first", "compile_calls", "second_run_in_process")}),
          flush=True)
    print("first batch", json.dumps(doc["first_batch"]), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "coo")
