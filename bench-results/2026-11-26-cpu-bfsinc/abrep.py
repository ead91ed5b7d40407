"""Interleaved A/B of one update: main's code (ab.BASE, loaded from git) against this worktree's, each on its
own job state at the same point of the bench's sequence (prof.setup: warm-up pass, then the reported pass up to
batch BATCH of the fraction), the update replayed from copies of that state, caches flushed before every
timed call, base and ours alternating.  Medians per batch, and their mean over the batches (the bench reports
the mean of its 3 batches).

    python abrep.py GRAPH [fraction] [repeats] [batches]
"""
import copy
import os
import statistics
import sys
import time

import numpy as np

import ab
import prof
from ab import _FLUSH

name = sys.argv[1]
frac = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 25
nb = int(sys.argv[4]) if len(sys.argv) > 4 else 3
ab.check_paths()
BaseBFS = ab._load_base()
#: BFSCPU_CLOCK=cpu: the thread's CPU time (time spent descheduled on a loaded machine left out), else wall
CLOCK = time.thread_time if os.environ.get("BFSCPU_CLOCK") == "cpu" else time.perf_counter
if os.environ.get("OURS_FEW_SEEDS"):                   # experiments: the seeds below which ours relaxes by rounds
    import vinestream.algorithms.bfs as _ours
    _ours.FEW_SEEDS = int(os.environ["OURS_FEW_SEEDS"])
print("load average:", os.getloadavg())
meds = {"base": [], "ours": []}
for b in range(nb):
    states = {"base": prof.setup(name, frac, cls=BaseBFS, which=b), "ours": prof.setup(name, frac, which=b)}
    times = {"base": [], "ours": []}
    for r in range(reps):
        for who in (("base", "ours") if r % 2 == 0 else ("ours", "base")):
            graph, vm, job, delta, _ = states[who]
            j = copy.deepcopy(job, {id(np): np})
            np.add(_FLUSH, 1, out=_FLUSH)
            t0 = CLOCK()
            j.update(graph, delta, vm)
            times[who].append(CLOCK() - t0)
            assert j.work["mode"] == "incremental"
        if r == 0:
            jb = copy.deepcopy(states["base"][2], {id(np): np})
            jb.update(states["base"][0], states["base"][3], states["base"][1])
            assert (jb.dist == j.dist).all() if who == "ours" else True
    for k in meds:
        meds[k].append(statistics.median(times[k]))
    print(f"batch {b}: base {meds['base'][-1]*1e3:.3f} ms, ours {meds['ours'][-1]*1e3:.3f} ms "
          f"(minima {min(times['base'])*1e3:.3f} / {min(times['ours'])*1e3:.3f}); DynBFS one call "
          f"{states['ours'][4]*1e3:.3f} ms", flush=True)
mb, mo = statistics.mean(meds["base"]), statistics.mean(meds["ours"])
print(f"{name} {frac:g}: mean of medians base {mb*1e3:.3f} ms, ours {mo*1e3:.3f} ms, ours/base {mo/mb:.3f}; "
      f"load {os.getloadavg()}")
