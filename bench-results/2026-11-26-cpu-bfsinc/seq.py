"""The bench's batch sequence for BFS alone (stream/bench/algorithms.py, _bench_graph / _bench_batches): a
warm-up pass of one batch per fraction (seed 0), then the reported pass of ``batches`` per fraction (seed
1000), each delta from random_delta with the bench's seeds.  Base (main at ab.BASE), ours and DynBFS
updated on every batch; the times of every batch printed (caches flushed before each timed call unless
BFSCPU_FLUSH=0).

    python bench-results/2026-11-25-bfscpu/seq.py GRAPH [batches]
"""
import os
import sys
import time

import numpy as np

import ab
from ab import FLUSH, _FLUSH
from load import load
from vinestream.algorithms.bfs import BFS
from vinestream.stream.bench import peers as pe
from vinestream.stream.bench.algorithms import BATCH_FRACTIONS, IdentityVertexMap, random_delta
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build


def main(name, batches=3, fractions=BATCH_FRACTIONS[:3]):
    BaseBFS = ab._load_base()
    s, d, n = load(name)
    graph = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    source = int(np.argmax(np.diff(graph.adjacency().offsets)))
    m = int(graph.num_edges)
    jobs = {"base": BaseBFS(np, sources=[source]), "ours": BFS(np, sources=[source])}
    for j in jobs.values():
        j.run_static(graph, vm)
    hs, hd = np.asarray(graph.adjacency().row_ids()), np.asarray(graph.adjacency().cols)
    g_nk = pe.nk_graph(hs, hd, n)
    dyn = pe.nk_dynbfs(g_nk, source)
    for warm_up in (True, False):
        seed = 0 if warm_up else 1000
        for i, f in enumerate(fractions):
            changes = max(2, int(round(f * m)))
            for b in range(1 if warm_up else batches):
                delta = random_delta(np, graph, changes, seed + 1 + i * 97 + b)
                apply_delta(graph, delta)
                t = {}
                for who in ("base", "ours", "dynbfs"):
                    if FLUSH:
                        np.add(_FLUSH, 1, out=_FLUSH)
                    if who == "dynbfs":
                        t[who] = pe.nk_apply_and_update(g_nk, dyn, *(np.asarray(x) for x in (
                            delta.inserted_src, delta.inserted_dst, delta.deleted_src, delta.deleted_dst)))
                    else:
                        t0 = time.perf_counter()
                        jobs[who].update(graph, delta, vm)
                        t[who] = time.perf_counter() - t0
                assert (jobs["base"].dist == jobs["ours"].dist).all()
                w = jobs["ours"].work
                print(f"{'warm-up' if warm_up else 'pass':7s} {f:g} #{b}: base {t['base']*1e3:7.2f} ms ({jobs['base'].work['mode'][:6]}), "
                      f"ours {t['ours']*1e3:7.2f} ms ({w['mode'][:6]}), DynBFS {t['dynbfs']*1e3:7.2f} ms; ours/DynBFS "
                      f"{t['ours']/t['dynbfs']:.2f}; index edges {w.get('index_edges')}, edges {w.get('edges_touched')}")


if __name__ == "__main__":
    ab.check_paths()
    print("load average:", os.getloadavg())
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
    print("load average:", os.getloadavg())
