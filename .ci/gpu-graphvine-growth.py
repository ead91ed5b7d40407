#!/usr/bin/env python3
"""GraphVine in a replay: how the one-sync path's size bound (``BLOCK_KEYS``: a 1e4-event batch carries 5-6k keys),
the pool's buffers with room to grow in place (``POOL_ROOM_BYTES``; 0: a new buffer at every growth) and its
growth steps' floor (``grow_min_entries``) change the edge phase, the one-sync path's held batches and captured
graphs (warm process, variants alternating, three rounds).

    python3 .ci/gpu-graphvine-growth.py [LOG]

Session 13 (call6) ran an earlier form with the option ``split_parts`` (since reverted); session 14 this one.
"""
import os
import sys

sys.path.insert(0, os.getcwd())
import vinestream
from vinestream.structures import graphvine
from vinestream.structures import graphvine_kernels as gk

log = sys.argv[1] if len(sys.argv) > 1 else ".data/sx-mathoverflow.events.parquet"
SLACK = graphvine.POOL_ROOM_BYTES
NO_FLOOR = {"grow_min_entries": 0}
# (name, BLOCK_KEYS, POOL_ROOM_BYTES, structure options): the session's start, then each change added
VARIANTS = [("4096, no slack/floor", 4096, 0, NO_FLOOR), ("8192, no slack/floor", 8192, 0, NO_FLOOR),
            ("8192, slack, no floor", 8192, SLACK, NO_FLOOR), ("8192, slack, floor", 8192, SLACK, None)]
CALLS = []
_add_chunks = graphvine.GraphVine._add_chunks


def counted(self, grown):
    CALLS.append(len(grown))
    return _add_chunks(self, grown)


graphvine.GraphVine._add_chunks = counted


def once(keys, slack=SLACK, options=None):
    gk.BLOCK_KEYS = keys
    graphvine.POOL_ROOM_BYTES = slack
    CALLS.clear()
    report, p = vinestream.replay([log], structure="graphvine", backend="gpu", batch_size=10000,
                                  jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1], progress=False,
                                  structure_options=options)
    return report, p


for keys in (4096, 8192):
    once(keys)                                       # kernels loaded, both paths
for r in range(3):
    for name, keys, slack, options in VARIANTS:
        report, p = once(keys, slack, options)
        g = p.structure
        edges = 1e3 * sum(v for k, v in report.phase_seconds.items() if k in ("edges", "insert", "delete"))
        print(f"{name:20s} round {r}: {report.events / report.seconds:,.0f} events/s, window "
              f"{1e3 * report.seconds:.0f} ms, edge phases {edges:.1f} ms in all; grows {g.stats['pool_grows']} in "
              f"{len(CALLS)} calls, one_sync {g.one_sync}, reserved {report.memory['reserved_bytes']:,} B", flush=True)
gk.BLOCK_KEYS, graphvine.POOL_ROOM_BYTES = 8192, SLACK
