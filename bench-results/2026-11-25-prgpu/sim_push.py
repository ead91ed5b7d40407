"""CPU simulation (NumPy): edge work of pruned synchronous pushes vs the default DF-P (+ dense sweeps) per batch."""
import sys, time, copy
import numpy as np
import scipy.sparse as sp
from vinestream.algorithms.pagerank import PageRank
from vinestream.stream.bench.algorithms import rmat_edges, IdentityVertexMap, random_delta
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 16
cs = [float(c) for c in (sys.argv[2].split(",") if len(sys.argv) > 2 else ["0", "1", "4"])]

class Pruned(PageRank):
    c = 1.0
    def _push_rounds(self, graph, touched_list, num_edges, limit):
        d = self.damping
        csr = graph.adjacency()
        rows = self._rows
        off = csr.offsets[: rows + 1]
        k = np.diff(off)
        a = sp.csr_matrix((np.ones(int(off[-1])), csr.cols[: int(off[-1])], off), shape=(rows, rows))
        goal = self.budget * self.tol
        r, z = self.r[:rows], self.z[:rows]
        rounds = edges = 0
        R, S = float(np.abs(r).sum()), float((z + r).sum())
        km = np.maximum(k, 1)
        while R > goal * S and rounds < limit:
            if self.c < 0:          # quantile: the pushed set holds -c of R
                q = np.abs(r) / km
                o = np.argsort(-q)
                cm = np.cumsum(np.abs(r)[o])
                i = int(np.searchsorted(cm, -self.c * R))
                theta = q[o[min(i, rows - 1)]] * (1 - 1e-12)
            else:
                theta = self.c * R / km.sum()
            f = np.abs(r) > theta * km if self.c != 0 else np.ones(rows, bool)
            pushed = np.where(f, r, 0.0)
            z += pushed
            r -= pushed
            r += a.T @ np.where(k > 0, d * pushed / km, 0.0)
            edges += int(k[f].sum())
            rounds += 1
            R, S = float(np.abs(r).sum()), float((z + r).sum())
        self.rnorm, self.total = R, S
        return rounds, edges, False

s, dd = rmat_edges(np, scale, 16, 0)
n = 1 << scale
g = build("csr", np, s, dd, n)
m = g.num_edges
vm = IdentityVertexMap(np)
base = PageRank(np, tol=1e-6)
base.run_static(g, vm)
print("scale", scale, "E", m, "static iters", base.work["iterations"], "edges/E", base.work["edges_touched"] / m, flush=True)
for frac in (1e-4, 1e-3, 1e-2):
    delta = random_delta(np, g, max(2, int(round(frac * m))), 7)
    g2 = build("csr", np, s, dd, n)
    apply_delta(g2, delta)
    ref = PageRank(np, tol=1e-6); ref.run_static(g2, vm)
    res = []
    for c in [None] + cs:
        if c is None:
            job = PageRank(np, tol=1e-6); job.__dict__.update({k: copy.deepcopy(v) for k, v in base.__dict__.items() if k != 'xp'})
        else:
            job = Pruned(np, tol=1e-6); job.__dict__.update({k: copy.deepcopy(v) for k, v in base.__dict__.items() if k != 'xp'}); job.c = c
        t = time.perf_counter()
        job.update(g2, delta, vm)
        t = time.perf_counter() - t
        l1 = float(np.abs(job.ranks() - ref.ranks()).sum())
        res.append((c, job.work["mode"], job.work["iterations"], round(job.work["edges_touched"] / m, 2), f"{l1:.2e}", f"{job.work['error_bound']:.2e}", round(t, 3)))
    print(frac, res, flush=True)
