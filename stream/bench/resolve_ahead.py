"""``vinestream bench resolve-ahead``: a stream of batches through the whole pipeline (structure update and the
three jobs) with the next batch's resolve launched during this batch's jobs (``Pipeline.apply(next_events=...)``)
against the same stream resolved in turn.

Issue 12 asks for the next batch's resolve to overlap the current batch's jobs where the dependencies allow
(resolve reads the vertex map, which the vertex phase has finished) and for the speedup measured on small and
large batches.  Two pipelines load the same R-MAT graph and take the same batches (half deletes of live edges,
half inserts, as ``bench pipeline``), one with the next batch named and one without, each batch timed to the
device's end (all streams) and the two alternating which goes first; medians per batch size.  On NumPy the
pipeline resolves in turn either way (the launch ahead is a GPU path), so the ratio there is about 1.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from vinestream.stream.pipeline import build_pipeline
from vinestream.structures.backend import backend_name, synchronize, to_numpy

from .algorithms import _plain, churn_batch, events_table, rmat_edges

JOBS = ("pagerank", "bfs", "triangles")


def bench_resolve_ahead(xp=np, scale: int = 20, edge_factor: int = 16, structures=("graphvine", "coo"),
                        batch_sizes=(1000, 10_000), batches: int = 20, seed: int = 0) -> dict:
    """Median seconds per batch (structure update and jobs) with and without the next batch's resolve launched
    ahead, per structure and batch size, and their ratio (``speedup`` = without / with)."""
    s, d = rmat_edges(xp, scale, edge_factor, seed)
    s, d = to_numpy(s), to_numpy(d)
    out = {"backend": backend_name(xp), "graph": f"rmat{scale}-{edge_factor}", "edges": int(s.shape[0]),
           "jobs": list(JOBS), "batches": int(batches), "structures": {}}
    load = events_table(s, d, np.ones(s.shape[0], np.int8))
    for name in structures:
        rows = {}
        for size in batch_sizes:
            rng = np.random.default_rng(seed + size)
            stream = [churn_batch(rng, s, d, scale, int(size)) for _ in range(batches + 2)]
            ahead, turn = (build_pipeline(structure=name, backend=backend_name(xp), jobs=list(JOBS),
                                          bfs_sources=[int(s[0])]) for _ in range(2))
            for p in (ahead, turn):
                p.apply(load)
            times = {"ahead": [], "in_turn": []}
            for i, table in enumerate(stream):
                following = stream[i + 1] if i + 1 < len(stream) else None
                runs = [("ahead", ahead, following), ("in_turn", turn, None)]
                for label, p, nxt in (runs if i % 2 == 0 else runs[::-1]):
                    synchronize(xp)
                    t = time.perf_counter()
                    p.apply(table, next_events=nxt)
                    synchronize(xp)
                    if i >= 2:                               # the first batches load kernels
                        times[label].append(time.perf_counter() - t)
            med = {k: statistics.median(v) for k, v in times.items()}
            rows[str(size)] = {"seconds_ahead": med["ahead"], "seconds_in_turn": med["in_turn"],
                               "speedup": med["in_turn"] / med["ahead"] if med["ahead"] else None,
                               "resolved_ahead": int(ahead.resolved_ahead)}
        out["structures"][name] = rows
    return _plain(out)


def format_table(result: dict) -> str:
    lines = [f"next batch's resolve during the jobs ({result['backend']}, {result['graph']}, "
             f"{result['edges']:,} edges, jobs {', '.join(result['jobs'])}): median ms per batch, ahead / in turn"]
    for name, rows in result["structures"].items():
        cells = [f"{size} events {r['seconds_ahead'] * 1e3:.3f} / {r['seconds_in_turn'] * 1e3:.3f} "
                 f"({r['speedup']:.2f}x, {r['resolved_ahead']} ahead)" for size, r in rows.items()]
        lines.append(f"  {name:<10} " + "; ".join(cells))
    return "\n".join(lines)
