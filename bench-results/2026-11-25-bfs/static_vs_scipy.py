import sys, time, numpy as np
from line_profiler import LineProfiler
from vinestream.stream.bench.algorithms import load_edge_list, IdentityVertexMap, _host_edges
from vinestream.stream.bench import peers as pe
from vinestream.structures.registry import build
from vinestream.algorithms import bfs as B
PATHS = {"dblp": "../shared/data/static/coAuthorsDBLP.mtx.gz", "cnr": "../shared/data/large/cnr-2000.edges.tsv.gz"}
s, d, n = load_edge_list(np, PATHS[sys.argv[1]]); k = s != d; s, d = s[k], d[k]
vm = IdentityVertexMap(np); g = build("csr", np, s, d, n)
src = int(np.argmax(np.diff(g.adjacency().offsets)))
a = pe.scipy_matrix(*_host_edges(g), n)
lp = LineProfiler()
for f in [B.BFS._recompute, B.bfs_scipy, B.levels_from_order, B.BFS._scratch_for]:
    lp.add_function(f)
ts, tp = [], []
for i in range(15):
    j = B.BFS(np, sources=[src])
    if i % 2:
        t = time.perf_counter(); j.run_static(g, vm); ts.append(time.perf_counter() - t)
        tp.append(pe.scipy_bfs(a, src)[0])
    else:
        tp.append(pe.scipy_bfs(a, src)[0])
        t = time.perf_counter(); j.run_static(g, vm); ts.append(time.perf_counter() - t)
print("static", np.median(ts)*1e3, "scipy", np.median(tp)*1e3, "ratio", np.median(ts)/np.median(tp))
lp.enable()
for i in range(5):
    B.BFS(np, sources=[src]).run_static(g, vm)
lp.disable()
lp.print_stats(output_unit=1e-6)
