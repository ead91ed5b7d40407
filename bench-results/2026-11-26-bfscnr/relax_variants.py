"""Offline: the relaxation of captured forced 1% repairs on cnr-2000 (capture.py), timed per variant, medians
of several runs, each checked against the repair's final distances.
    python bench-results/2026-11-26-bfscnr/relax_variants.py [reps]"""
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "../..")))
import vinestream.algorithms.bfs as B  # noqa: E402


def load(b):
    z = np.load(f"/tmp/bfscnr26_relax{b}.npz")
    return {k: z[k] for k in z.files}


def run_current(z):
    dist, parent = z["dist"].copy(), z["parent"].copy()
    off, cols = z["off"], z["cols"]
    t = time.perf_counter()
    out = B.relax_buckets_host(dist, parent, z["seeds"], off, off[1:], cols, False, None)
    return time.perf_counter() - t, dist, parent, out


VARIANTS = {"current": run_current}
if hasattr(B, "InRows"):
    def run_do(z):
        dist, parent = z["dist"].copy(), z["parent"].copy()
        off, cols = z["off"], z["cols"]
        from vinestream.algorithms.in_edge_log import InEdgeLog
        from vinestream.structures.csr_types import CSR
        ix = InEdgeLog(np, CSR(offsets=z["in_off"], cols=z["in_cols"], weights=None))
        ix.alive, ix.extra, ix.has_extra = z["alive"].copy(), z["extra"], z["has_extra"]
        ix.fresh = z["extra"][:0]
        ix.deleted_since = int(z["deleted_since"])
        t = time.perf_counter()
        out = B.relax_buckets_host(dist, parent, z["seeds"], off, off[1:], cols, False, None,
                                   in_rows=lambda: B.InRows.of(ix))
        return time.perf_counter() - t, dist, parent, out
    VARIANTS["direction-optimizing"] = run_do


def check(z, dist, parent):
    assert (dist == z["final"]).all(), int((dist != z["final"]).sum())
    off, cols = z["off"], z["cols"]
    has = (parent >= 0).nonzero()[0]
    p = parent[has]
    assert (dist[p] == dist[has] - 1).all()                      # one level closer
    # p -> has is an edge: has in p's row
    lo = off[p]
    hi = off[p + 1]
    keys = (np.repeat(np.arange(off.shape[0] - 1), np.diff(off)).astype(np.int64) << 32) | cols
    want = (p.astype(np.int64) << 32) | has
    assert np.isin(want, keys).all()


def main(reps=5):
    print("load", os.getloadavg())
    for b in range(3):
        z = load(b)
        times = {k: [] for k in VARIANTS}
        info = {}
        for r in range(reps):
            for k, f in (VARIANTS.items() if r % 2 == 0 else reversed(VARIANTS.items())):
                secs, dist, parent, out = f(z)
                if r == 0:
                    check(z, dist, parent)
                    info[k] = out
                times[k].append(secs)
        print(f"batch {b}: seeds {z['seeds'].shape[0]}, lowered {int((z['final'] != z['dist']).sum())}; " + "; ".join(
            f"{k} {1e3 * statistics.median(v):.2f} ms (levels {info[k][0]}, edges {info[k][1]})"
            for k, v in times.items()), flush=True)
    print("load", os.getloadavg())


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
