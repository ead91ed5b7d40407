"""Diagnostic: per level of the level-ordered relaxation of forced repairs (the bench's batch sequence), the
top-down edges (frontier out-rows) against the exact cost of a bottom-up step over the candidates
(dist > L + 1; in-rows of the current graph, first hit ends a row).  Not a benchmark: it scans the whole
graph per level to find the figures.

    python bench-results/2026-11-26-bfscnr/diag_bu.py GRAPH FRACTION
"""
import os
import sys

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "../..")))
sys.path.insert(1, os.path.join(HERE, "../2026-11-25-bfscpu"))
from load import load  # noqa: E402
import vinestream.algorithms.bfs as B  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta  # noqa: E402
from vinestream.structures.delta import apply_delta  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402

IN = {}
orig = B.relax_buckets_host


def traced(dist, parent, seeds, off, ends, cols, track=True, budget=None, *rest, **kw):
    du = dist.view(np.uint32)
    it = IN["csr"]
    ioff, icols = it.indptr, it.indices
    indeg = np.diff(ioff)
    rows = []
    real_take = {}
    # replay level by level by calling orig with one-level steps is intrusive: instead recompute per level
    # from the final result: a vertex lowered to L+1 at level L of the relaxation
    before = dist.copy()
    out = orig(dist, parent, seeds, off, ends, cols, track, budget, *rest, **kw)
    final = dist.view(np.uint32)
    lowered = np.flatnonzero(final != before.view(np.uint32))
    seedlab = {}
    lo = int(final[seeds].min())
    hi = int(final[lowered].max()) if lowered.shape[0] else lo
    outdeg = np.diff(off)
    for L in range(lo, hi + 1):
        # frontier at level L: seeds labelled L (final) plus lowered vertices with final label L
        fr = np.union1d(seeds[final[seeds] == L], lowered[final[lowered] == L])
        mf = int(outdeg[fr].sum()) if fr.shape[0] else 0
        # labels at the start of level L: final where <= L+? : vertices with final label <= L are final;
        # the others still hold min(before, seeds' labels) -- approximate the candidates as final label > L+1
        # or (lowered to L+1 at this level: final == L+1 and lowered and not a seed at L+1)
        cur = before.view(np.uint32).copy()
        cur[seeds] = np.minimum(cur[seeds], final[seeds])
        done = (final <= L)
        cur[done] = final[done]
        cand = np.flatnonzero(cur > L + 1)
        mu = int(indeg[cand].sum())
        # bottom-up cost: first in-neighbour labelled L (final)
        st = ioff[cand]
        cnt = indeg[cand]
        seg = np.cumsum(cnt)
        pos = np.repeat(st - seg + cnt, cnt) + np.arange(int(seg[-1]) if seg.shape[0] else 0)
        hit = final[icols[pos]] == L
        owner = np.repeat(np.arange(cand.shape[0]), cnt)
        first = np.full(cand.shape[0], -1)
        hp = np.flatnonzero(hit)
        # first hit per owner
        o = owner[hp]
        keep = np.ones(hp.shape[0], bool)
        keep[1:] = o[1:] != o[:-1]
        first[o[keep]] = hp[keep] - (seg - cnt)[o[keep]]
        cost = np.where(first >= 0, first + 1, cnt).sum()
        rows.append((L, fr.shape[0], mf, cand.shape[0], mu, int(cost), int((first >= 0).sum())))
    tot_td = sum(r[2] for r in rows)
    best = sum(min(r[2], r[5]) for r in rows)
    print(f"   relax: levels {len(rows)} top-down edges {tot_td} best-per-level edges {best}")
    for r in rows:
        if r[2] > 20000 or r[5] < r[2]:
            print("     L %2d frontier %7d mf %8d | cand %7d mu %8d bu-cost %8d hits %7d %s" % (
                *r, "<-- bu" if r[5] < r[2] else ""))
    return out


B.relax_buckets_host = traced


def main(name, frac, batches=3, fractions=(1e-4, 1e-3, 1e-2)):
    s, d, n = load(name)
    graph = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    source = int(np.argmax(np.diff(graph.adjacency().offsets)))
    m = int(graph.num_edges)
    job = B.BFS(np, sources=[source], fallback_fraction=1.0)
    job.run_static(graph, vm)
    for warm_up in (True, False):
        seed = 0 if warm_up else 1000
        for i, f in enumerate(fractions):
            changes = max(2, int(round(f * m)))
            for b in range(1 if warm_up else batches):
                delta = random_delta(np, graph, changes, seed + 1 + i * 97 + b)
                apply_delta(graph, delta)
                csr = graph.adjacency()
                nn = csr.offsets.shape[0] - 1
                a = sp.csr_matrix((np.ones(csr.cols.shape[0]), csr.cols, csr.offsets), shape=(nn, nn))
                IN["csr"] = a.T.tocsr()
                IN["csr"].sort_indices()
                if not warm_up and f == frac:
                    print(f"batch {f} #{b}")
                    job.update(graph, delta, vm)
                else:
                    B.relax_buckets_host = orig
                    job.update(graph, delta, vm)
                    B.relax_buckets_host = traced


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
