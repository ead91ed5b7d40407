import sys, time, cProfile, pstats, numpy as np
from vinestream.stream.bench.algorithms import load_edge_list, random_delta, IdentityVertexMap, _host_edges
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build
from vinestream.algorithms import create_job
PATHS = {"dblp": "../shared/data/static/coAuthorsDBLP.mtx.gz", "cnr": "../shared/data/large/cnr-2000.edges.tsv.gz"}
def load(name):
    s, d, n = load_edge_list(np, PATHS[name]); k = s != d
    return s[k], d[k], n
name = sys.argv[1]; frac = float(sys.argv[2]); nb = int(sys.argv[3])
s, d, n = load(name)
vm = IdentityVertexMap(np)
g = build("csr", np, s, d, n)
m = g.num_edges
src = int(np.argmax(np.diff(g.adjacency().offsets)))
job = create_job("bfs", np, sources=[src]); job.run_static(g, vm)
deltas = []
for b in range(nb):
    dl = random_delta(np, g, max(2, int(round(frac*m))), 1000+b); apply_delta(g, dl); deltas.append(dl)
# replay: can't re-apply; so profile as we go on fresh deltas
dw = random_delta(np, g, 400, 99); apply_delta(g, dw); job.update(g, dw, vm)
pr = cProfile.Profile()
ts=[]
for b in range(nb):
    dl = random_delta(np, g, max(2, int(round(frac*m))), 5000+b); apply_delta(g, dl)
    t=time.perf_counter(); pr.enable(); job.update(g, dl, vm); pr.disable(); ts.append(time.perf_counter()-t)
print("median ms", np.median(ts)*1e3, job.work)
pstats.Stats(pr).sort_stats(sys.argv[5] if len(sys.argv)>5 else "tottime").print_stats(int(sys.argv[4]) if len(sys.argv)>4 else 25)
