import sys, time, cProfile, pstats
import numpy as np
from vinestream.stream.bench.algorithms import load_edge_list, random_delta, IdentityVertexMap
from vinestream.structures.registry import build
from vinestream.structures.delta import apply_delta
from vinestream.algorithms import create_job
path = sys.argv[1]; frac = float(sys.argv[2]); nb=int(sys.argv[3])
s, d, n = load_edge_list(np, path)
g = build("csr", np, s, d, n); m = g.num_edges
csr = g.adjacency(); src = int(np.argmax(np.diff(csr.offsets)))
vm = IdentityVertexMap(np)
job = create_job("bfs", np, sources=[src])
job.run_static(g, vm)
deltas=[random_delta(np, g, max(2, int(round(frac*m))), 1 + b) for b in range(nb)]
pr = cProfile.Profile(); tt=[]
for b,delta in enumerate(deltas):
    apply_delta(g, delta)
    if b>=2: pr.enable()
    t=time.perf_counter(); job.update(g, delta, vm); tt.append(time.perf_counter()-t)
    if b>=2: pr.disable()
print("inc ms", np.round(np.array(tt)*1e3,3), "median", np.median(tt)*1e3)
pstats.Stats(pr).sort_stats("tottime").print_stats(18)
