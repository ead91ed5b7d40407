import sys, time, numpy as np
from line_profiler import LineProfiler
from vinestream.stream.bench.algorithms import load_edge_list, random_delta, IdentityVertexMap
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build
from vinestream.algorithms import bfs as B
from vinestream.algorithms import in_edge_log as L
PATHS = {"dblp": "../shared/data/static/coAuthorsDBLP.mtx.gz", "cnr": "../shared/data/large/cnr-2000.edges.tsv.gz"}
name = sys.argv[1]; frac = float(sys.argv[2]); nb = int(sys.argv[3])
s, d, n = load_edge_list(np, PATHS[name]); k = s != d; s, d = s[k], d[k]
vm = IdentityVertexMap(np); g = build("csr", np, s, d, n); m = g.num_edges
src = int(np.argmax(np.diff(g.adjacency().offsets)))
job = B.BFS(np, sources=[src]); job.run_static(g, vm)
dw = random_delta(np, g, 400, 99); apply_delta(g, dw); job.update(g, dw, vm)
lp = LineProfiler()
for f in [B.BFS.update, B.relax_rounds_host, B.BFS._rescue, L.InEdgeLog.neighbours, L.InEdgeLog.fold, L.newest_changes] + [getattr(B, x) for x in sys.argv[4:]]:
    lp.add_function(f)
ts = []
for b in range(nb):
    dl = random_delta(np, g, max(2, int(round(frac*m))), 5000+b); apply_delta(g, dl)
    lp.enable(); t = time.perf_counter(); job.update(g, dl, vm); ts.append(time.perf_counter()-t); lp.disable()
print("median ms", np.median(ts)*1e3)
lp.print_stats(output_unit=1e-6)
