import time, json, sys, math
import numpy as np, cupy as cp
from vinestream.algorithms import triangle_kernels as tk
from vinestream.stream.bench.algorithms import rmat_edges
from vinestream.structures.array_ops import LOW32, bincount, unique_sorted
from vinestream.structures.raw_kernels import i32, i64
def t(fn, r=5):
    fn(); cp.cuda.Device().synchronize(); ts=[]
    for _ in range(r):
        s=time.perf_counter(); fn(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter()-s)
    return float(np.median(ts))*1e3
out={}
for scale in (20, 22):
    src, dst = rmat_edges(cp, scale, 16, seed=1); n = 1 << scale
    res = {"whole_ms": t(lambda: tk.count_static_oriented(cp, n, src, dst))}
    s, d = src.astype(np.int64), dst.astype(np.int64)
    keep = s != d; s, d = s[keep], d[keep]
    deg = bincount(cp, s, n) + bincount(cp, d, n)
    first = (deg[s] < deg[d]) | ((deg[s] == deg[d]) & (s < d))
    k = (cp.where(first, s, d) << 32) | cp.where(first, d, s)
    res["sort_ms"] = t(lambda: unique_sorted(cp, k))
    okeys = unique_sorted(cp, k); m = int(okeys.shape[0])
    offsets = cp.searchsorted(okeys, cp.arange(n + 1, dtype=np.int64) << 32)
    rows = (okeys >> 32).astype(np.int32); cols = (okeys & LOW32).astype(np.int32)
    for lanes in (1, 2, 4, 8, 16, 32):
        sh = int(math.log2(lanes)); sup = cp.zeros(m, dtype=np.uint32)
        def k1():
            sup.fill(0); tk.launch(cp, "tri_support", m << sh, offsets, cols, rows, i64(m), i32(sh), sup)
        res[f"kernel_l{lanes}_ms"] = t(k1)
    od = cp.diff(offsets)
    res["edges"] = m; res["max_outdeg"] = int(od.max()); res["mean_outdeg"] = m / n
    res["searches"] = int(cp.minimum(od[rows], od[cols]).sum()); res["wedges_sum_longer"] = int(cp.maximum(od[rows], od[cols]).sum())
    out[f"rmat{scale}"] = res; print(scale, res, flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
