"""A/B: our incremental BFS at main's code (commit BASE, loaded from git) and at this worktree's, against
NetworKit's DynBFS.updateBatch, interleaved in one process on the same batches (bench's random_delta).

    python bench-results/2026-11-25-bfscpu/ab.py [batches] [fraction] [graphs...]

Timings: each of the three (base, ours, DynBFS) times one update per batch, in a rotating order; the
figures are medians over the batches.  The graph is updated once per batch (apply_delta), as in the bench.
"""
import importlib.util
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
sys.path.insert(0, ROOT)                      # this worktree's vinestream, not the installed checkout's
sys.path.insert(1, os.path.dirname(__file__))
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "2026-11-25-bfscpu"))  # its load.py, seq.py
from load import load  # noqa: E402

import vinestream.algorithms  # noqa: E402,F401
from vinestream.algorithms.bfs import BFS  # noqa: E402
from vinestream.stream.bench import peers as pe  # noqa: E402
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta  # noqa: E402
from vinestream.structures.delta import apply_delta  # noqa: E402
from vinestream.structures.registry import build  # noqa: E402

BASE = os.environ.get("BFSCPU_BASE", "f6a4dcd")      # the code compared with (main when this ran)
#: set BFSCPU_FLUSH=0 to time with whatever the caches hold (then the order of the calls matters: the
#: second reader of the just-updated graph finds it in the cache)
FLUSH = os.environ.get("BFSCPU_FLUSH", "1") != "0"
_FLUSH = np.zeros(64 << 17)                    # 64 MiB: twice the L3
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))


def _load_base():
    """main's bfs.py / in_edge_log.py / edge_index.py at BASE as vinestream.algorithms._base_* modules."""
    subs = [("vinestream.algorithms.edge_index", "vinestream.algorithms._base_edge_index"),
            ("from .edge_index", "from ._base_edge_index"), ("from .in_edge_log", "from ._base_in_edge_log")]
    mods = {}
    for name in ("edge_index", "in_edge_log", "bfs"):
        src = subprocess.run(["git", "-C", ROOT, "show", f"{BASE}:algorithms/{name}.py"], check=True,
                             capture_output=True, text=True).stdout
        for a, b in subs:
            src = src.replace(a, b)
        full = f"vinestream.algorithms._base_{name}"
        spec = importlib.util.spec_from_loader(full, loader=None)
        mod = importlib.util.module_from_spec(spec)
        mod.__package__ = "vinestream.algorithms"
        sys.modules[full] = mod
        exec(compile(src, f"<{BASE}:{name}.py>", "exec"), mod.__dict__)
        mods[name] = mod
    return mods["bfs"].BFS


def check_paths():
    import vinestream.algorithms.bfs as ours
    assert os.path.dirname(os.path.dirname(os.path.abspath(ours.__file__))) == ROOT, ours.__file__


def run(name, batches, fraction, warm=3):
    BaseBFS = _load_base()
    if os.environ.get("OURS_GONE_KEYS"):               # experiments: ours' deferred-deletion limit
        import vinestream.algorithms.in_edge_log as iel
        iel.GONE_KEYS = int(os.environ["OURS_GONE_KEYS"])
    s, d, n = load(name)
    graph = build("csr", np, s, d, n)
    vm = IdentityVertexMap(np)
    source = int(np.argmax(np.diff(graph.adjacency().offsets)))
    m = int(graph.num_edges)
    changes = max(2, int(round(fraction * m)))
    jobs = {"base": BaseBFS(np, sources=[source]), "ours": BFS(np, sources=[source])}
    for j in jobs.values():
        j.run_static(graph, vm)
    hs, hd = (np.asarray(x) for x in (graph.adjacency().row_ids(), graph.adjacency().cols))
    g_nk = pe.nk_graph(hs, hd, n)
    dyn = pe.nk_dynbfs(g_nk, source)
    times = {"base": [], "ours": [], "dynbfs": []}
    modes = {"base": {}, "ours": {}}
    for b in range(warm + batches):
        delta = random_delta(np, graph, changes, 12345 + b)
        apply_delta(graph, delta)
        order = ["base", "ours", "dynbfs"]
        order = order[b % 3:] + order[:b % 3]
        for who in order:
            if FLUSH:                                  # every timed call starts with the caches cold
                np.add(_FLUSH, 1, out=_FLUSH)
            if who == "dynbfs":
                t = pe.nk_apply_and_update(g_nk, dyn, *(np.asarray(x) for x in (
                    delta.inserted_src, delta.inserted_dst, delta.deleted_src, delta.deleted_dst)))
            else:
                t0 = time.perf_counter()
                jobs[who].update(graph, delta, vm)
                t = time.perf_counter() - t0
            if b >= warm:
                times[who].append(t)
        a, o = jobs["base"], jobs["ours"]
        if b >= warm:                     # a repair past its budget recomputes (mode static): counted, not failed
            for who, job in (("base", a), ("ours", o)):
                modes[who][job.work["mode"]] = modes[who].get(job.work["mode"], 0) + 1
        assert (a.dist == o.dist).all(), "ours differs from base"
        nk_d = np.asarray(dyn.getDistances())
        ours_d = o.dist[:n].astype(np.float64)
        ours_d[ours_d < 0] = np.inf
        nk_d = np.where(nk_d > 1e300, np.inf, nk_d)
        assert (nk_d == ours_d).all(), "ours differs from DynBFS"
    med = {k: statistics.median(v) for k, v in times.items()}
    mean = {k: statistics.mean(v) for k, v in times.items()}          # (with the rare settles and rebuilds)
    return {"graph": name, "changes": changes, "batches": batches,
            "base_ms": med["base"] * 1e3, "ours_ms": med["ours"] * 1e3, "dynbfs_ms": med["dynbfs"] * 1e3,
            "base_over_dynbfs": med["base"] / med["dynbfs"], "ours_over_dynbfs": med["ours"] / med["dynbfs"],
            "median_batch_ratio_ours": statistics.median(o / d for o, d in zip(times["ours"], times["dynbfs"])),
            "median_batch_ratio_base": statistics.median(o / d for o, d in zip(times["base"], times["dynbfs"])),
            "ours_work_last": {k: v for k, v in jobs["ours"].work.items()},
            "mean_ms": {k: v * 1e3 for k, v in mean.items()}, "modes": modes, "max_ms": {k: max(v) * 1e3 for k, v in times.items()}}


if __name__ == "__main__":
    nb = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    frac = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
    names = sys.argv[3:] or ["coAuthorsDBLP", "cnr-2000"]
    check_paths()
    print("load average:", os.getloadavg())
    for g in names:
        r = run(g, nb, frac)
        print(f"{r['graph']}: {r['changes']} changes x {r['batches']} batches: base {r['base_ms']:.3f} ms, "
              f"ours {r['ours_ms']:.3f} ms, DynBFS {r['dynbfs_ms']:.3f} ms; base/DynBFS "
              f"{r['base_over_dynbfs']:.2f} (per-batch median {r['median_batch_ratio_base']:.2f}), ours/DynBFS "
              f"{r['ours_over_dynbfs']:.2f} (per-batch median {r['median_batch_ratio_ours']:.2f})")
        print("   last work:", r["ours_work_last"])
        print("   modes:", r["modes"], "means (ms):", {k: round(v, 3) for k, v in r["mean_ms"].items()},
              "maxima (ms):", {k: round(v, 3) for k, v in r["max_ms"].items()})
    print("load average:", os.getloadavg())
