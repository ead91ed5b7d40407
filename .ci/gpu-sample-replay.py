#!/usr/bin/env python3
"""Where a replay's threads spend their wall time: a sampling profiler (every ~0.5 ms, ``sys._current_frames``)
over a fresh process's first replay and then a warm second one, per thread: inclusive time by function and
self time by line (a line waiting on the device shows as the Python line that waits).

    python3 .ci/gpu-sample-replay.py STRUCTURE [LOG]       (the CLI's start first: defer_numpy_extras, context)
"""
import collections
import os
import shutil
import sys
import threading
import time

sys.path.insert(0, os.getcwd())
import vinestream
from vinestream.structures.backend import defer_numpy_extras, start_primary_context

defer_numpy_extras()
start_primary_context("gpu")
THREADS = ("MainThread", "vinestream-apply", "vinestream-warm-up", "vinestream-replay-reader")


def short(path):
    for cut in ("/site-packages/", "/work/main/", os.getcwd() + "/"):
        if cut in path:
            return path.split(cut, 1)[1]
    return os.path.basename(path)


def sample(stop, incl, self_, seen):
    last = time.perf_counter()
    while not stop.is_set():
        time.sleep(0.0005)
        now = time.perf_counter()
        dt, last = now - last, now
        names = {t.ident: t.name for t in threading.enumerate()}
        for ident, frame in sys._current_frames().items():
            name = names.get(ident)
            if name not in THREADS:
                continue
            seen[name] += dt
            f, first, funcs = frame, True, set()
            while f is not None:
                code = f.f_code
                key = f"{short(code.co_filename)}:{code.co_name}"
                if first:
                    self_[name][f"{key}:{f.f_lineno}"] += dt
                    first = False
                if key not in funcs:
                    incl[name][key] += dt
                    funcs.add(key)
                f = f.f_back


def replay_sampled(label, structure, log):
    incl = collections.defaultdict(collections.Counter)
    self_ = collections.defaultdict(collections.Counter)
    seen = collections.Counter()
    stop = threading.Event()
    th = threading.Thread(target=sample, args=(stop, incl, self_, seen), name="sampler", daemon=True)
    out = f"/tmp/sample-{structure}"
    shutil.rmtree(out, ignore_errors=True)
    th.start()
    t0 = time.perf_counter()
    report, _ = vinestream.replay([log], structure=structure, backend=os.environ.get("BACKEND", "gpu"),
                                  batch_size=10000, jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1], out=out,
                                  progress=False)
    wall = time.perf_counter() - t0
    stop.set()
    th.join()
    print(f"=== {structure} {label}: window {1e3 * report.seconds:.0f} ms, {report.events / report.seconds:,.0f} "
          f"events/s, replay() {1e3 * wall:.0f} ms")
    for name in THREADS:
        if not seen[name]:
            continue
        print(f"--- thread {name}: sampled {1e3 * seen[name]:.0f} ms; inclusive by function (ms)")
        for key, s in incl[name].most_common(45):
            print(f"  {1e3 * s:8.1f}  {key}")
        print(f"--- thread {name}: self by line (ms)")
        for key, s in self_[name].most_common(30):
            print(f"  {1e3 * s:8.1f}  {key}")


if __name__ == "__main__":
    structure = sys.argv[1]
    log = sys.argv[2] if len(sys.argv) > 2 else ".data/sx-mathoverflow.events.parquet"
    replay_sampled("fresh", structure, log)
    replay_sampled("warm", structure, log)
