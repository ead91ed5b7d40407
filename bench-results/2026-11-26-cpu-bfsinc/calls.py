"""Count the C calls (NumPy functions and methods, builtins) of one update of the bench's sequence, per function.

    BATCH=0 python calls.py GRAPH [fraction]
"""
import collections
import copy
import os
import sys

import numpy as np

import prof

name = sys.argv[1]
frac = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
graph, vm, job, delta, _ = prof.setup(name, frac, which=int(os.environ.get("BATCH", "0")))
j = copy.deepcopy(job, {id(np): np})
counts = collections.Counter()
names = collections.Counter()


def tracer(frame, event, arg):
    if event == "c_call":
        code = frame.f_code
        counts[code.co_name] += 1
        names[getattr(arg, "__name__", str(arg))] += 1


sys.setprofile(tracer)
j.update(graph, delta, vm)
sys.setprofile(None)
print("C calls per Python function:", sum(counts.values()), dict(counts.most_common()))
print("by name:", dict(names.most_common(40)))
print("work:", j.work)
