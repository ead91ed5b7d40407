#!/usr/bin/env python3
"""Where a replay's threads spend their wall time, by sampling their Python stacks (a poor man's py-spy:
Python 3.12's cProfile sees every thread at once, so it cannot tell the apply thread's time from the others').

    python3 .ci/gpu-sample-threads.py STRUCTURE [WARM_REPLAYS] [LOG]

Replays the log once in this fresh process (cold: the build and first batch included) and then WARM_REPLAYS more
times (default 3), all three jobs, 1e4-event batches, results written (--out), a sampler thread taking every thread's
stack about every 0.2 ms.  For each thread (the apply thread first) and for the cold and the warm replays apart: the
share of samples in which each function is on the stack (inclusive) and on top of it (exclusive, the Python frame
that called into C), top 45 each, with milliseconds estimated from the replay's wall time.
"""
import collections
import os
import shutil
import sys
import threading
import time

import replay_driver

vinestream, structure, warm, log = replay_driver.start(3)
INTERVAL = 0.0002
TOP = 45

state = {"on": False, "tag": None}
incl: dict = collections.defaultdict(collections.Counter)   # (tag, thread) -> Counter of functions
excl: dict = collections.defaultdict(collections.Counter)
chain: dict = collections.defaultdict(collections.Counter)   # (tag, thread) -> Counter of "leaf <- our caller:line"
OURS = ("algorithms/", "structures/", "stream/", "connectors/")
samples: dict = collections.Counter()                        # (tag, thread) -> samples
wall: dict = collections.Counter()                           # tag -> seconds sampled


def label(code) -> str:
    f = code.co_filename
    for cut in ("/site-packages/", "/work/main/", os.getcwd() + "/"):
        if cut in f:
            f = f.split(cut, 1)[1]
            break
    return f"{f}:{code.co_name}"


def group(name: str) -> str:
    for prefix in ("vinestream-compile", "vinestream-results", "vinestream-triangles", "ThreadPoolExecutor"):
        if name.startswith(prefix):
            return prefix
    return name


def sampler():
    me = threading.get_ident()
    last = time.perf_counter()
    while True:
        time.sleep(INTERVAL)
        now = time.perf_counter()
        if not state["on"]:
            last = now
            continue
        tag = state["tag"]
        wall[tag] += now - last
        last = now
        names = {t.ident: group(t.name) for t in threading.enumerate()}
        for ident, frame in sys._current_frames().items():
            if ident == me:
                continue
            key = (tag, names.get(ident, "?"))
            samples[key] += 1
            seen = set()
            top = True
            leaf = None
            while frame is not None:
                name = label(frame.f_code)
                if top:
                    excl[key][name] += 1
                    top = False
                    leaf = name
                elif leaf is not None and name.startswith(OURS):
                    chain[key][f"{leaf} <- {name}:{frame.f_lineno}"] += 1
                    leaf = None
                if name not in seen:
                    incl[key][name] += 1
                    seen.add(name)
                frame = frame.f_back


threading.Thread(target=sampler, name="sampler", daemon=True).start()


def one(tag):
    out = f"/tmp/sample-{structure}"
    shutil.rmtree(out, ignore_errors=True)
    state["tag"], state["on"] = tag, True
    t0 = time.perf_counter()
    report, _ = replay_driver.replay(vinestream, structure, log, out)
    t1 = time.perf_counter()
    state["on"] = False
    print(f"{tag}: {structure} replay {1e3 * (t1 - t0):.0f} ms, {report.events / (t1 - t0):,.0f} events/s "
          f"(report: build {1e3 * report.build_seconds:.0f} ms)", flush=True)


one("cold")
for _ in range(warm):
    one("warm")

for tag in ("cold", "warm"):
    keys = sorted((k for k in samples if k[0] == tag), key=lambda k: (k[1] != "vinestream-apply", -samples[k]))
    for key in keys:
        n = samples[key]
        if n < 20:
            continue
        ms_per = 1e3 * wall[tag] / max(n, 1) if key[1] == "vinestream-apply" else None
        print(f"\n===== {tag} / {key[1]}: {n} samples over {1e3 * wall[tag]:.0f} ms sampled")
        for title, table in (("inclusive", incl[key]), ("exclusive", excl[key]),
                             ("exclusive, with the caller in this project", chain[key])):
            print(f"-- {title}")
            for name, c in table.most_common(TOP):
                extra = f" ~{c * ms_per:8.1f} ms" if ms_per else ""
                print(f"{100 * c / n:6.1f}%{extra}  {name}")
