"""Where the CPU static count's time goes (``count_static_arcs`` on the job's host arcs), this checkout
against main's module (``--before DIR``), interleaved in one process, order alternated: the orientation
(``_oriented_from_arcs``: ``L`` from the arcs), the count (``_count_oriented``: merges and corners) and
the whole call, wall medians and the process CPU of the whole call; the load average.

    python bench-results/2026-11-25-tricpu3/phases.py --before /tmp/before --repeats 9 GRAPH...
"""
import argparse
import importlib.util
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from vinestream.algorithms import triangles as tri
from vinestream.stream.bench.algorithms import load_edge_list
from vinestream.structures.registry import build


def _module(name, path):
    spec = importlib.util.spec_from_file_location("vinestream.algorithms." + name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _timed(mod, name, log):
    inner = getattr(mod, name)

    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        out = inner(*args, **kwargs)
        log.setdefault(name, []).append(time.perf_counter() - t)
        return out

    setattr(mod, name, wrapper)


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--before", required=True)
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    mods = {"before": _module("_triangles_before", os.path.join(args.before, "algorithms", "triangles.py")),
            "after": tri}
    for path in args.graphs:
        s, d, n = load_edge_list(np, path)
        arcs = tri.host_arcs(build("csr", np, s, d, n).adjacency(), n)
        logs = {k: {} for k in mods}
        for k, mod in mods.items():
            for name in ("_oriented_from_arcs", "_count_oriented"):
                _timed(mod, name, logs[k])
            mod.count_static_arcs(n, *arcs, 2)                      # warm-up, untimed
            logs[k].clear()
        load0 = os.getloadavg()
        for r in range(args.repeats):
            for k, mod in list(mods.items())[:: 1 if r % 2 else -1]:
                c, t = cpu_seconds(), time.perf_counter()
                mod.count_static_arcs(n, *arcs, 2)
                logs[k].setdefault("count_static_arcs", []).append(time.perf_counter() - t)
                logs[k].setdefault("cpu", []).append(cpu_seconds() - c)
        print(f"{os.path.basename(path)}: {args.repeats} repeats, load average {' '.join(f'{x:.2f}' for x in load0)}"
              f" -> {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for k, log in logs.items():
            print(f"  {k:6s} " + ", ".join(f"{name.strip('_')} {1e3 * np.median(v):.1f} ms" for name, v in log.items()))


if __name__ == "__main__":
    main()
