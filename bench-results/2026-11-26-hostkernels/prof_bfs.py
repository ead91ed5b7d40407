import sys, time, cProfile, pstats
import numpy as np
from vinestream.stream.bench.algorithms import load_edge_list, random_delta, IdentityVertexMap
from vinestream.structures.registry import build
from vinestream.structures.delta import apply_delta
from vinestream.algorithms import create_job
path = sys.argv[1]; frac = float(sys.argv[2]); prof = len(sys.argv) > 3
s, d, n = load_edge_list(np, path)
g = build("csr", np, s, d, n); m = g.num_edges
csr = g.adjacency(); src = int(np.argmax(np.diff(csr.offsets)))
vm = IdentityVertexMap(np)
job = create_job("bfs", np, sources=[src], fallback_fraction=1.0)
job.run_static(g, vm)
t=time.perf_counter(); job.run_static(g, vm); print("static", time.perf_counter()-t)
pr = cProfile.Profile()
for b in range(4):
    delta = random_delta(np, g, max(2, int(round(frac*m))), 1 + b)
    apply_delta(g, delta)
    if prof and b: pr.enable()
    t=time.perf_counter(); job.update(g, delta, vm); ti=time.perf_counter()-t
    if prof and b: pr.disable()
    fresh = create_job("bfs", np, sources=[src]); fresh.run_static(g, vm)
    t=time.perf_counter(); fresh.run_static(g, vm); ts=time.perf_counter()-t
    ok = (job.dist[:fresh.dist.shape[0]] == fresh.dist).all()
    w = job.work
    print(f"b{b} inc {ti*1e3:.2f} ms static {ts*1e3:.2f} ms ok={ok} mode={w['mode']} edges={w['edges_touched']} idx={w.get('index_edges')} inv={w.get('invalidated')} seeds={w.get('seeds')} lowered-ish={w.get('vertices_touched')}")
if prof:
    pstats.Stats(pr).sort_stats("tottime").print_stats(25)
