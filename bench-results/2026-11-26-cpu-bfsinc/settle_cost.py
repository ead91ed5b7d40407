"""The cost of taking GONE_KEYS deferred deletions out of DBLP's in-edge log at once (InEdgeLog._settle_gone:
a scan or bisection of their rows), caches flushed first, against folding them batch by batch as main does
(a row scan per batch of 98, InEdgeLog._locate on 98 keys), both per key."""
import copy
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prof  # noqa: E402
from ab import _FLUSH  # noqa: E402

graph, vm, job, delta, _ = prof.setup("coAuthorsDBLP", 1e-4)
log = job.in_edges
log._settle()
rng = np.random.default_rng(0)
snap = log._all_snapshot_keys()[log.alive[:-1]]
keys = np.sort(rng.choice(snap, 4096, replace=False))
res = {"settle 4096 at once": [], "locate 42 batches of 98": []}
for _ in range(7):
    lg = copy.deepcopy(log, {id(np): np})
    lg.gone = keys.copy()
    np.add(_FLUSH, 1, out=_FLUSH)
    t0 = time.perf_counter(); lg._settle_gone(); res["settle 4096 at once"].append(time.perf_counter() - t0)
    lg = copy.deepcopy(log, {id(np): np})
    t = 0.0
    for b in range(42):
        part = keys[b * 98:(b + 1) * 98]
        np.add(_FLUSH, 1, out=_FLUSH)
        t0 = time.perf_counter()
        _, at = lg._locate((part >> 32).astype(np.intp), (part & 0xFFFFFFFF).astype(np.int32))
        lg.alive[at] = False
        t += time.perf_counter() - t0
    res["locate 42 batches of 98"].append(t)
print({k: f"{statistics.median(v)*1e3:.2f} ms ({statistics.median(v)/4096*1e6:.3f} us a key)" for k, v in res.items()},
      os.getloadavg())
