#!/usr/bin/env python3
"""GraphVine in a replay: how its pool's growth steps (GROW_BY, headroom) change the edge phase, the one-sync
path's held batches and captured graphs (warm process, variants alternating, two rounds).

    python3 .ci/gpu-graphvine-growth.py [LOG]

Ran at 883b7de (session 13, call6), where GraphVine had the option ``split_parts`` (since reverted).
"""
import os
import sys

sys.path.insert(0, os.getcwd())
import vinestream
from vinestream.structures import graphvine

log = sys.argv[1] if len(sys.argv) > 1 else ".data/sx-mathoverflow.events.parquet"
VARIANTS = [("default", 1.25, {}), ("grow 2", 2.0, {}), ("headroom 4", 1.25, {"headroom": 4.0}),
            ("grow 2, headroom 4", 2.0, {"headroom": 4.0}), ("no parts", 1.25, {"split_parts": 0})]


def once(grow, options):
    graphvine.GROW_BY = grow
    report, p = vinestream.replay([log], structure="graphvine", backend="gpu", batch_size=10000,
                                  jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1], progress=False,
                                  structure_options=options)
    return report, p


once(1.25, {})                                       # kernels loaded
for r in range(2):
    for name, grow, options in VARIANTS:
        report, p = once(grow, options)
        g = p.structure
        edges = 1e3 * sum(v for k, v in report.phase_seconds.items() if k in ("edges", "insert", "delete"))
        print(f"{name:20s} round {r}: {report.events / report.seconds:,.0f} events/s, window "
              f"{1e3 * report.seconds:.0f} ms, edge phases {edges:.1f} ms in all; grows {g.stats['pool_grows']}, "
              f"one_sync {g.one_sync}, memory {report.memory}", flush=True)
