"""Edge work and rounds of the two fused push modes (select: FusedPush; frontier: FrontierPush, levels) through
the kernels' host emulation (serial threads, shuffled order), on a csr R-MAT graph, per batch fraction.
Usage (from the worktree root): python emu_modes.py SCALE VARIANTS  (VARIANTS: name=param:value;... as pr_inc_bench)"""
import sys
import time

import numpy as np

sys.path.insert(0, ".")
from tests.test_pagerank_kernels import HostLauncher  # noqa: E402
from vinestream.algorithms import pagerank_kernels as pk  # noqa: E402
from vinestream.algorithms.pagerank import PageRank  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta, rmat_edges  # noqa: E402
from vinestream.structures.delta import apply_delta  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402

scale = int(sys.argv[1])
variants = {}
for item in sys.argv[2].split(","):
    name, _, params = item.partition("=")
    kw = {}
    for p in filter(None, params.split(";")):
        k, _, v = p.partition(":")
        kw[k] = v if k == "push_mode" else float(v)
    variants[name] = kw
pk.launcher = HostLauncher(2, 5)
s, d = rmat_edges(np, scale, 16, 0)
g = build("csr", np, s, d, 1 << scale)
m = g.num_edges
vm = IdentityVertexMap(np)
jobs = {k: PageRank(np, tol=1e-6, fused_push=True, fused=False, **kw) for k, kw in variants.items()}
for j in jobs.values():
    j.run_static(g, vm)
print(f"rmat{scale} E={m}", flush=True)
for i, f in enumerate((1e-4, 1e-3, 1e-4, 1e-3)):
    delta = random_delta(np, g, max(2, int(round(f * m))), 1 + i)
    apply_delta(g, delta)
    for k, j in jobs.items():
        t = time.perf_counter()
        j.update(g, delta, vm)
        w = j.work
        print(f"  {f:.2%} {k:10s} rounds {w['iterations']:4d} edges/E {(w['edges_touched']) / m:6.2f} "
              f"pushes {w['frontier']:8d} scanned/n {w['vertices_touched'] / (1 << scale):6.1f} "
              f"bound {w['error_bound']:.2e} {time.perf_counter() - t:.1f}s", flush=True)
