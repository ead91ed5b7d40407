#!/usr/bin/env python3
"""A fresh process's first calls into CuPy during a replay: which ``cupy.<function>`` calls (by the dtypes of
their array arguments) take long the first time (a kernel compiled or loaded from CuPy's cache, a library's
module loaded lazily), on which thread, and how long the same call takes later.

    python3 .ci/gpu-first-uses.py STRUCTURE [LOG]

Every public function of the ``cupy`` namespace is wrapped (the code calls them as ``xp.<name>``; array methods
are not seen); the first call of each (name, argument dtypes) is timed on the host, the later ones summed.
"""
import collections
import threading
import time

import replay_driver

vinestream, structure, _, log = replay_driver.start(0)
import cupy  # noqa: E402

T0 = time.perf_counter()
first: dict = {}
later = collections.Counter()
count = collections.Counter()
lock = threading.Lock()


def signature(args):
    return tuple(str(a.dtype) for a in args if isinstance(a, cupy.ndarray))


def wrap(name, fn):
    def record(dt, t0, args):
        key = (name, signature(args))
        with lock:
            if key not in first:
                first[key] = (dt, t0 - T0, threading.current_thread().name)
            else:
                later[key] += dt
                count[key] += 1
    return replay_driver.timed(fn, record)


for name in dir(cupy):
    if name.startswith("_"):
        continue
    fn = getattr(cupy, name)
    if callable(fn) and not isinstance(fn, type) and type(fn).__name__ in ("function", "ufunc", "_UnaryUfunc",
                                                                          "builtin_function_or_method",
                                                                          "cython_function_or_method", "_ufunc"):
        setattr(cupy, name, wrap(name, fn))

t0 = time.perf_counter()
report, _ = replay_driver.replay(vinestream, structure, log, f"/tmp/first-{structure}")
t1 = time.perf_counter()
print(f"{structure}: cold replay {1e3 * (t1 - t0):.0f} ms (build {1e3 * report.build_seconds:.0f} ms), "
      f"replay started at {1e3 * (t0 - T0):.0f} ms")
rows = sorted(first.items(), key=lambda kv: -kv[1][0])
print(f"{'first ms':>9} {'at ms':>8} {'later mean ms':>14} {'calls':>6}  thread / function (dtypes)")
for key, (dt, at, thread) in rows[:45]:
    n = count[key]
    mean = 1e3 * later[key] / n if n else float("nan")
    print(f"{1e3 * dt:9.2f} {1e3 * at:8.0f} {mean:14.3f} {n + 1:6d}  {thread} / {key[0]}{key[1]}")
print(f"sum of first calls {1e3 * sum(v[0] for v in first.values()):.0f} ms over {len(first)} kinds; "
      f"on the apply thread {1e3 * sum(v[0] for v in first.values() if v[2] == 'vinestream-apply'):.0f} ms")
