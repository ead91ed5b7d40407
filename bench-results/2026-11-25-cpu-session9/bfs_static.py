import os, statistics, sys, time
sys.path.insert(0, os.getcwd())
import numpy as np
from vinestream.algorithms import create_job
from vinestream.stream.bench import peers as pe
from vinestream.stream.bench.algorithms import IdentityVertexMap, load_edge_list
from vinestream.structures.registry import build
import scipy.sparse as sp
out = []
for path in sys.argv[1:]:
    s, d, n = load_edge_list(np, path)
    g = build("csr", np, s, d, n)
    csr = g.adjacency()
    deg = np.diff(csr.offsets)
    src = int(np.argmax(deg))
    job = create_job("bfs", np, sources=[src])
    vm = IdentityVertexMap(np)
    a = sp.csr_matrix((np.ones(csr.num_edges, dtype=np.float32), csr.cols, csr.offsets), shape=(csr.num_rows, csr.num_rows))
    ours, peer = [], []
    job.run_static(g, vm)
    for _ in range(15):
        t = time.perf_counter(); job.run_static(g, vm); ours.append(time.perf_counter() - t)
        peer.append(pe.scipy_bfs(a, src)[0])
    mo, mp = statistics.median(ours), statistics.median(peer); out.append(f"min ours {min(ours)*1e3:.2f} scipy {min(peer)*1e3:.2f}")
    out.append(f"{os.path.basename(path)[:12]} ours {mo*1e3:.2f} scipy {mp*1e3:.2f} ratio {mo/mp:.2f}")
print(" | ".join(out))
