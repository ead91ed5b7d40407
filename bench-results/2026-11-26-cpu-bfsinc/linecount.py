"""Distinct Python lines executed by one update (and lines executed in all), per function: a proxy of the code
an update brings into the caches (its cost when they are cold)."""
import collections
import copy
import os
import sys

import numpy as np

import prof

graph, vm, job, delta, _ = prof.setup(sys.argv[1], 1e-4, which=int(os.environ.get("BATCH", "0")))
j = copy.deepcopy(job, {id(np): np})
lines, execs = collections.defaultdict(set), collections.Counter()
ccalls = collections.Counter()


def tracer(frame, event, arg):
    if event == "line":
        lines[frame.f_code.co_name].add(frame.f_lineno)
        execs[frame.f_code.co_name] += 1
    return tracer


def prof_c(frame, event, arg):
    if event == "c_call":
        ccalls[frame.f_code.co_name] += 1


sys.settrace(tracer)
sys.setprofile(prof_c)
j.update(graph, delta, vm)
sys.settrace(None)
sys.setprofile(None)
tot = sum(len(v) for v in lines.values())
print("distinct lines", tot, "executed", sum(execs.values()), "C calls", sum(ccalls.values()))
for k in sorted(lines, key=lambda k: -len(lines[k])):
    print(f"  {k:28s} distinct {len(lines[k]):4d} executed {execs[k]:5d} C calls {ccalls[k]:4d}")
