"""Flushed-cache timings of single steps of one update (the in-edge read of the cut vertices, gathers)."""
import copy
import os
import statistics
import sys
import time

import numpy as np

import prof
from ab import _FLUSH

graph, vm, job, delta, _ = prof.setup(sys.argv[1], 1e-4, which=int(os.environ.get("BATCH", "0")))
del_s, del_d = delta.deleted_src, delta.deleted_dst.astype(np.intp)
cut = del_d[job.parent[del_d] == del_s]
print("cut", cut.shape, "in-degrees", np.diff(job.in_edges.offsets)[cut])
res = {}
def t(name, fn, reps=30):
    out = []
    for _ in range(reps):
        np.add(_FLUSH, 1, out=_FLUSH)
        t0 = time.perf_counter(); fn(); out.append(time.perf_counter() - t0)
    res[name] = round(statistics.median(out) * 1e6, 1)
ie = job.in_edges
t("nothing", lambda: None)
t("rows_host(cut)", lambda: ie.rows_host(cut, 10**9))
t("offsets[cut]", lambda: ie.offsets[cut])
t("dist[del_d]", lambda: job.dist[del_d])
t("parent[del_d]==", lambda: job.parent[del_d] == del_s)
t("2 gathers dist", lambda: (job.dist[del_d], job.dist[delta.inserted_dst]))
a = np.arange(10)
t("small op", lambda: a + 1)
print(res, os.getloadavg())

# warm code, cold data: flush, run rows_host on other rows (the code paths), then time it on the cut rows
other = np.arange(100, 117)
out = []
for _ in range(30):
    np.add(_FLUSH, 1, out=_FLUSH)
    ie.rows_host(other, 10**9)
    t0 = time.perf_counter(); ie.rows_host(cut, 10**9); out.append(time.perf_counter() - t0)
print("rows_host(cut), code warmed after the flush:", round(statistics.median(out) * 1e6, 1))
out = []
for _ in range(30):
    t0 = time.perf_counter(); ie.rows_host(cut, 10**9); out.append(time.perf_counter() - t0)
print("rows_host(cut), all warm:", round(statistics.median(out) * 1e6, 1))
print("extra", ie.extra.shape, "fresh", ie.fresh.shape, "gone", ie.gone.shape, "has_extra on cut", ie.has_extra[cut].sum())
