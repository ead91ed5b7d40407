"""Edge work and rounds of the fused pruned pushes, through the serial host emulation (one valid thread order of
the in-place pushes) on R-MAT, against the array program (frontier rounds + dense sweeps); CPU only."""
import sys
import numpy as np
sys.path.insert(0, ".")
from tests.test_pagerank_kernels import HostLauncher
from vinestream.algorithms import pagerank_kernels as pk
from vinestream.algorithms.pagerank import PageRank
from vinestream.stream.bench.algorithms import rmat_edges, IdentityVertexMap, random_delta
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build

scale = int(sys.argv[1]); cs = [float(c) for c in sys.argv[2].split(",")]
order = int(sys.argv[3]) if len(sys.argv) > 3 else 2
pk.launcher = HostLauncher(order, 5)
pk.threads_per_row = lambda mean: 1
s, d = rmat_edges(np, scale, 16, 0)
n = 1 << scale
g = build("csr", np, s, d, n)
m = g.num_edges
vm = IdentityVertexMap(np)
jobs = {"array": PageRank(np, tol=1e-6)}
for c in cs:
    jobs[f"c{c}"] = PageRank(np, tol=1e-6, fused_push=True, push_scale=c)
for j in jobs.values():
    j.run_static(g, vm)
print("static it", jobs["array"].work["iterations"], flush=True)
for i, f in enumerate((1e-4, 1e-3, 1e-2, 1e-4, 1e-3)):
    delta = random_delta(np, g, max(2, int(round(f * m))), 1 + i)
    apply_delta(g, delta)
    out = []
    for k, j in jobs.items():
        j.update(g, delta, vm)
        w = j.work
        out.append(f"{k}: it {w['iterations']} E {w['edges_touched'] / m:.2f} push {w['frontier'] / n:.2f}n")
    print(f"{f:.2%}", " | ".join(out), flush=True)
