"""Cold cost (caches flushed just before) of single NumPy operations on small arrays, each alone, and of a
sequence of twenty warm ones after it."""
import statistics
import time
import numpy as np
from ab import _FLUSH

rng = np.random.default_rng(0)
a32 = rng.integers(0, 100, 300000).astype(np.int32)
a64 = a32.astype(np.int64)
idx = rng.integers(0, 300000, 100).astype(np.intp)
mask = rng.random(100) < 0.5
vals = np.arange(100, dtype=np.int32)
ops = {
    "getitem a32[idx]": lambda: a32[idx],
    "take a32.take(idx)": lambda: a32.take(idx),
    "setitem a32[idx]=v": lambda: a32.__setitem__(idx, vals),
    "put np.put": lambda: np.put(a32, idx, vals),
    "mask idx[mask]": lambda: idx[mask],
    "nonzero+take": lambda: idx.take(mask.nonzero()[0]),
    "compress": lambda: idx.compress(mask),
    "add 1": lambda: vals + 1,
    "eq": lambda: vals == vals,
    "repeat": lambda: vals.repeat(2),
    "searchsorted": lambda: a64[:1000].searchsorted(vals),
    "concat": lambda: np.concatenate((vals, vals)),
    "accumulate": lambda: np.add.accumulate(vals),
    "nothing": lambda: None,
}
res = {}
for name, fn in ops.items():
    ts = []
    for _ in range(25):
        np.add(_FLUSH, 1, out=_FLUSH)
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    res[name] = round(statistics.median(ts) * 1e6, 1)
print(res)
