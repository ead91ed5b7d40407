import time, numpy as np, cupy as cp
from vinestream.algorithms import triangle_kernels as tk
from vinestream.stream.bench.algorithms import rmat_edges
src, dst = rmat_edges(cp, 20, 16, seed=1); n = 1 << 20
def t(fn, r=5):
    fn(); cp.cuda.Device().synchronize(); ts=[]
    for _ in range(r):
        s=time.perf_counter(); fn(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter()-s)
    return float(np.median(ts))*1e3
ms = t(lambda: tk.count_static_oriented(cp, n, src, dst)); _, info = tk.count_static_oriented(cp, n, src, dst)
print({"whole_ms": round(ms, 2), "undirected_edges": info["edges"], "edges_per_s": info["edges"] / ms * 1e3, "triangles": info["triangles"]})
