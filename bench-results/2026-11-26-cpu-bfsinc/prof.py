"""One update of the bench's sequence, replayed many times from copies of the job's state before it.

    python prof.py GRAPH [fraction] [repeats] [--profile]

The bench's sequence (stream/bench/algorithms.py: a warm-up pass of one batch per fraction with seed 0, then the
reported pass with seed 1000) is played for BFS alone up to the first batch of ``fraction`` in the reported pass;
then the job before that update is deep-copied ``repeats`` times and each copy updated on the same batch (caches
flushed first unless BFSCPU_FLUSH=0): the median isolates the cost of that one update from the batch's luck.
DynBFS's time on the same batch is printed beside it (one call: its state cannot be copied).
"""
import copy
import os
import statistics
import sys
import time

import numpy as np

import ab
from ab import FLUSH, _FLUSH
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "2026-11-25-bfscpu"))  # its load.py, seq.py
from load import load
from vinestream.algorithms.bfs import BFS
from vinestream.stream.bench import peers as pe
from vinestream.stream.bench.algorithms import BATCH_FRACTIONS, IdentityVertexMap, random_delta
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build


def setup(name, target=1e-4, cls=BFS, which=0, batches=3):
    s, d, n = load(name)
    graph = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    source = int(np.argmax(np.diff(graph.adjacency().offsets)))
    m = int(graph.num_edges)
    job = cls(np, sources=[source])
    job.run_static(graph, vm)
    job.run_static(graph, vm)
    hs, hd = np.asarray(graph.adjacency().row_ids()), np.asarray(graph.adjacency().cols)
    g_nk = pe.nk_graph(hs, hd, n)
    dyn = pe.nk_dynbfs(g_nk, source)
    for warm_up in (True, False):
        seed = 0 if warm_up else 1000
        for i, f in enumerate(BATCH_FRACTIONS[:3]):        # the CLI's fractions (stream/bench/runner.py)
            changes = max(2, int(round(f * m)))
            for b in range(1 if warm_up else batches):
                delta = random_delta(np, graph, changes, seed + 1 + i * 97 + b)
                apply_delta(graph, delta)
                if not warm_up and f == target and b == which:
                    t = pe.nk_apply_and_update(g_nk, dyn, *(np.asarray(x) for x in (
                        delta.inserted_src, delta.inserted_dst, delta.deleted_src, delta.deleted_dst)))
                    return graph, vm, job, delta, t
                job.update(graph, delta, vm)
                pe.nk_apply_and_update(g_nk, dyn, *(np.asarray(x) for x in (
                    delta.inserted_src, delta.inserted_dst, delta.deleted_src, delta.deleted_dst)))


def replay(graph, vm, job, delta, repeats):
    times, jobs = [], [copy.deepcopy(job, {id(np): np}) for _ in range(repeats)]
    for j in jobs:
        if FLUSH:
            np.add(_FLUSH, 1, out=_FLUSH)
        t0 = time.perf_counter()
        j.update(graph, delta, vm)
        times.append(time.perf_counter() - t0)
    return times, jobs[-1]


if __name__ == "__main__":
    name = sys.argv[1]
    frac = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    which = int(os.environ.get("BATCH", "0"))
    graph, vm, job, delta, t_dyn = setup(name, frac, which=which)
    print("load average:", os.getloadavg())
    times, j = replay(graph, vm, job, delta, reps)
    print(f"{name} {frac:g}: {delta.num_changed_edges} changes; median {statistics.median(times)*1e3:.3f} ms, "
          f"min {min(times)*1e3:.3f} ms; DynBFS {t_dyn*1e3:.3f} ms (one call); work {j.work}")
    if "--profile" in sys.argv:
        import cProfile
        import pstats
        jobs = [copy.deepcopy(job, {id(np): np}) for _ in range(reps)]
        pr = cProfile.Profile()
        for jj in jobs:
            pr.enable()
            jj.update(graph, delta, vm)
            pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(40)
