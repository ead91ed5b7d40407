"""Capture the relaxation inputs of the forced repairs of the bench's reported 1% batches on cnr-2000 (dist and
parent before the relaxation, the seeds, the out-CSR, the folded in-edge index) into /tmp/bfscnr26_relax{b}.npz,
for offline comparisons of relaxation variants (relax_variants.py)."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "../..")))
sys.path.insert(1, os.path.join(HERE, "../2026-11-25-bfscpu"))
from load import load  # noqa: E402
import vinestream.algorithms.bfs as B  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta  # noqa: E402
from vinestream.structures.delta import apply_delta  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402

SAVE = {}
orig = B.relax_buckets_host


def spy(dist, parent, seeds, off, ends, cols, *a, **k):
    if "on" in SAVE:
        SAVE["args"] = dict(dist=dist.copy(), parent=parent.copy(), seeds=seeds.copy(), off=off.copy(),
                            cols=cols.copy())
    return orig(dist, parent, seeds, off, ends, cols, *a, **k)


B.relax_buckets_host = spy


def main(name="cnr-2000", frac=0.01, batches=3, fractions=(1e-4, 1e-3, 1e-2)):
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
                if not warm_up and f == frac:
                    SAVE["on"] = True
                job.update(graph, delta, vm)
                if "args" in SAVE:
                    ix = job.in_edges
                    ix._merge_fresh()
                    a = SAVE.pop("args")
                    np.savez(f"/tmp/bfscnr26_relax{b}.npz", **a, final=job.dist, in_off=ix.offsets,
                             in_cols=ix.cols, alive=ix.alive, extra=ix.extra, has_extra=ix.has_extra,
                             deleted_since=ix.deleted_since)
                    SAVE.clear()
                    print("saved", b, flush=True)


if __name__ == "__main__":
    main()
