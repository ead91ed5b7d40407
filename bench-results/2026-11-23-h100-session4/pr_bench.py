"""Fused PageRank sweep vs library path on the GPU: static PR per graph, ms and ms per iteration."""
import json, time, sys
import numpy as np, cupy as cp
from vinestream.algorithms.pagerank import PageRank
from vinestream.stream.bench.algorithms import rmat_edges, IdentityVertexMap, _spmv_seconds
from vinestream.structures.registry import build
out = {}
for scale, ef in ((15, 8), (18, 16), (20, 16), (22, 16)):
    src, dst = rmat_edges(cp, scale, ef, seed=1)
    n = 1 << scale
    g = build("csr", cp, src, dst, n); vm = IdentityVertexMap(cp)
    res = {"spmv_ms": round(_spmv_seconds(cp, g.adjacency(), 5) * 1e3, 4)}
    for fused in (False, True, "f32"):
        kw = {"fused": True, "sweep_dtype": "float32"} if fused == "f32" else {"fused": fused}
        pr = PageRank(cp, **kw)
        ts = []
        for rep in range(4):
            cp.cuda.Device().synchronize(); t = time.perf_counter()
            pr.run_static(g, vm)
            cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
        it = pr.work.get("iterations")
        ms = float(np.median(ts[1:])) * 1e3
        res[str(fused)] = {"ms": round(ms, 3), "iterations": it, "ms_per_iter": round(ms / max(it, 1), 4)}
    out[f"rmat{scale}-{ef}"] = res
    print(scale, ef, res, flush=True)
    del g
json.dump(out, open(sys.argv[1], "w"), indent=1)
