"""scipy's breadth_first_order on cnr-2000 from the bench's source: the bench's peer matrix (pe.scipy_matrix, n
rows) against session 9's bfs_static.py matrix (the structure's CSR as given: the capacity's 524,288 rows), 15
interleaved pairs, medians.  ``python bench-results/2026-11-26-bfscnr/scipy_matrices.py`` from the worktree root."""
import os
import statistics
import sys

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.getcwd())
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../2026-11-25-bfscpu"))
from load import load  # noqa: E402

from vinestream.stream.bench import peers as pe  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402

print("load", os.getloadavg())
s, d, n = load("cnr-2000")
g = build("csr", np, s, d, n)
csr = g.adjacency()
src = int(np.argmax(np.diff(csr.offsets)))
a = {"bench": pe.scipy_matrix(s, d, n),
     "session9": sp.csr_matrix((np.ones(csr.num_edges, dtype=np.float32), csr.cols, csr.offsets),
                               shape=(csr.num_rows, csr.num_rows))}
print({k: (m.shape, m.indices.dtype.name) for k, m in a.items()})
t = {k: [] for k in a}
for i in range(15):
    for k in (list(a) if i % 2 == 0 else list(a)[::-1]):
        t[k].append(pe.scipy_bfs(a[k], src)[0])
print({k: f"median {statistics.median(v) * 1e3:.2f} ms, min {min(v) * 1e3:.2f} ms" for k, v in t.items()})
print("load", os.getloadavg())
