"""Isolated (warm caches) reads of the rows of 50,000 random cnr-2000 vertices: the gathers (cur), scipy's
compiled row copy with owners by a binary search (sci) or by a repeat (sci2), then the pieces.  From the worktree root."""
import sys, time, numpy as np, scipy.sparse as sp

sys.path.insert(1, "bench-results/2026-11-25-bfscpu")
from load import load
from vinestream.structures.csr_types import csr_from_edges
s, d, n = load("cnr-2000")
csr = csr_from_edges(np, s, d, None, n)
off, cols = csr.offsets, csr.cols
print(off.dtype, cols.dtype, cols.shape)
rng = np.random.default_rng(0)
F = np.sort(rng.choice(n, 50000, replace=False)).astype(np.intp)
dist = rng.integers(0, 30, n).astype(np.int32); du = dist.view(np.uint32)
ends = off[1:]
def cur():
    starts = off.take(F); counts = ends.take(F) - starts
    seg = np.add.accumulate(counts); total = int(seg[-1])
    pos = (starts - seg + counts).repeat(counts); pos += np.arange(total)
    nbr = cols.take(pos).astype(np.intp)
    dn = du.take(nbr)
    better = (dn > 15).nonzero()[0]
    src = F.take(seg.searchsorted(better, side="right"))
    return nbr, better, src
data = np.ones(cols.shape[0], dtype=bool)
A = sp.csr_matrix((data, cols, off.astype(np.int32)), shape=(n, n))
from scipy.sparse import _sparsetools
off32 = off.astype(np.int32)
def sci():
    starts = off.take(F); counts = ends.take(F) - starts
    seg = np.add.accumulate(counts); total = int(seg[-1])
    Bj = np.empty(total, dtype=np.int32); Bx = np.empty(total, dtype=bool)
    _sparsetools.csr_row_index(F.shape[0], F.astype(np.int32), off32, cols, data, Bj, Bx)
    dn = du.take(Bj)
    better = (dn > 15).nonzero()[0]
    src = F.take(seg.searchsorted(better, side="right"))
    return Bj, better, src
def sci2():
    starts = off.take(F); counts = ends.take(F) - starts
    seg = np.add.accumulate(counts); total = int(seg[-1])
    Bj = np.empty(total, dtype=np.int32); Bx = np.empty(total, dtype=bool)
    _sparsetools.csr_row_index(F.shape[0], F.astype(np.int32), off32, cols, data, Bj, Bx)
    dn = du.take(Bj)
    better = (dn > 15).nonzero()[0]
    own = np.arange(F.shape[0]).repeat(counts)
    src = F.take(own.take(better))
    return Bj, better, src
a, b, c = cur(); a2, b2, c2 = sci(); a3,b3,c3=sci2()
assert (a == a2).all() and (b == b2).all() and (c == c2).all() and (c3==c).all()
for f in (cur, sci, sci2, cur, sci, sci2):
    ts = []
    for _ in range(20):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    print(f.__name__, "%.3f ms" % (1e3 * np.median(ts)), "edges", a.shape[0], "better", b.shape[0])
import timeit
starts = off.take(F); counts = ends.take(F) - starts
seg = np.add.accumulate(counts); total = int(seg[-1])
F32 = F.astype(np.int32)
Bj = np.empty(total, dtype=np.int32); Bx = np.empty(total, dtype=bool); _sparsetools.csr_row_index(F.shape[0], F32, off32, cols, data, Bj, Bx)
pieces = {
 "starts/counts/seg": lambda: (np.add.accumulate(ends.take(F) - off.take(F))),
 "row_index": lambda: _sparsetools.csr_row_index(F.shape[0], F32, off32, cols, data, Bj, Bx),
 "empty": lambda: (np.empty(total, dtype=np.int32), np.empty(total, dtype=bool)),
 "du.take(Bj)": lambda: du.take(Bj),
 "cmp+nonzero": lambda: (du.take(Bj) > 15).nonzero(),
 "repeat own": lambda: np.arange(F.shape[0]).repeat(counts),
 "pos repeat+arange": lambda: (starts - seg + counts).repeat(counts) + np.arange(total),
 "cols.take(pos)": None,
}
pos = (starts - seg + counts).repeat(counts) + np.arange(total)
pieces["cols.take(pos)"] = lambda: cols.take(pos)
pieces["astype intp"] = lambda: Bj.astype(np.intp)
nb = Bj.astype(np.intp)
pieces["du.take(intp)"] = lambda: du.take(nb)
dn = du.take(Bj); better = (dn > 15).nonzero()[0]
pieces["searchsorted"] = lambda: seg.searchsorted(better, side="right")
pieces["scatter du[nbr[b]]"] = lambda: du.__setitem__(nb.take(better), 7)
for k, f in pieces.items():
    print("%-22s %.3f ms" % (k, 1e3 * min(timeit.repeat(f, number=1, repeat=15))))
