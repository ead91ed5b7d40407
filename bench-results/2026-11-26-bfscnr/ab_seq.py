"""A/B on the bench's batch sequence (stream/bench/algorithms.py: a warm-up pass of one batch per fraction,
seed 0, then ``batches`` per fraction, seed 1000): main's BFS (commit BASE, loaded from git by the bfscpu
driver) and this worktree's, updated on the same batches in a rotating order, and a static run of ours on
each updated graph, all timed; the whole sequence repeated ``reps`` times on a fresh graph.  Per fraction:
the mean over the reported batches (as the bench reports), then the median over the repeats; the modes.

    python bench-results/2026-11-26-bfscnr/ab_seq.py GRAPH [reps] [batches]
"""
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "../..")))
sys.path.insert(1, os.path.join(HERE, "../2026-11-25-bfscpu"))  # ab.py (main loaded from git), load.py
os.environ.setdefault("BFSCPU_BASE", "a4f0b6b")
import ab  # noqa: E402
from load import load  # noqa: E402
from vinestream.algorithms.bfs import BFS  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta  # noqa: E402
from vinestream.structures.delta import apply_delta  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402

FRACTIONS = (1e-4, 1e-3, 1e-2)


def one(name, Base, batches):
    s, d, n = load(name)
    graph = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    source = int(np.argmax(np.diff(graph.adjacency().offsets)))
    m = int(graph.num_edges)
    jobs = {"base": Base(np, sources=[source]), "ours": BFS(np, sources=[source])}
    for j in jobs.values():
        j.run_static(graph, vm)
    out = {f: {"base": [], "ours": [], "static": [], "modes": []} for f in FRACTIONS}
    turn = 0
    for warm_up in (True, False):
        seed = 0 if warm_up else 1000
        for i, f in enumerate(FRACTIONS):
            changes = max(2, int(round(f * m)))
            for b in range(1 if warm_up else batches):
                delta = random_delta(np, graph, changes, seed + 1 + i * 97 + b)
                apply_delta(graph, delta)
                order = ["base", "ours", "static"]
                order = order[turn % 3:] + order[:turn % 3]
                turn += 1
                t = {}
                for who in order:
                    if who == "static":
                        st = BFS(np, sources=[source])
                        t0 = time.perf_counter()
                        st.run_static(graph, vm)
                    else:
                        t0 = time.perf_counter()
                        jobs[who].update(graph, delta, vm)
                    t[who] = time.perf_counter() - t0
                assert (jobs["base"].dist == st.dist).all() and (jobs["ours"].dist == st.dist).all()
                if not warm_up:
                    for k in ("base", "ours", "static"):
                        out[f][k].append(t[k])
                    w = jobs["ours"].work
                    out[f]["modes"].append(w["mode"][0] + ("*" if "aborted_repair_edges" in w else "")
                                           + "/" + jobs["base"].work["mode"][0])
    return out


def main(name, reps=3, batches=3):
    Base = ab._load_base()
    print("load average:", os.getloadavg(), "base", os.environ["BFSCPU_BASE"])
    runs = []
    for r in range(reps):
        runs.append(one(name, Base, batches))
        print(f"  rep {r}: " + "; ".join(
            f"{f:g}: base {1e3 * statistics.mean(o['base']):.2f} ours {1e3 * statistics.mean(o['ours']):.2f} "
            f"static {1e3 * statistics.mean(o['static']):.2f} ms, modes ours/base {' '.join(o['modes'])}"
            for f, o in runs[-1].items()), flush=True)
    for f in FRACTIONS:
        med = {k: statistics.median(statistics.mean(r[f][k]) for r in runs) * 1e3 for k in ("base", "ours", "static")}
        print(f"{name} {f:g}: base {med['base']:.2f} ms, ours {med['ours']:.2f} ms, static {med['static']:.2f} ms; "
              f"speedup over static: base {med['static'] / med['base']:.2f}x, ours {med['static'] / med['ours']:.2f}x")
    print("load average:", os.getloadavg())


if __name__ == "__main__":
    main(sys.argv[1], *(int(x) for x in sys.argv[2:]))
