#!/usr/bin/env python3
"""BFS's device operations per batch of the sx-mathoverflow replay, counted on NumPy (no GPU needed).

    python .ci/bfs-replay-ops.py LOG [STRUCTURE] [BATCHES]

The log's 1e4-event batches go through a CPU pipeline of STRUCTURE (default coo) with no jobs; a BFS job set
as on a GPU (fused kernels and fused transpose, run through their host emulations, each launch counted)
follows every batch under ``backend.count_operations`` (what CuPy would launch or copy: kernel launches,
array operations, host reads).  Prints per batch the mode, the operations and reads, then the totals and the
top call sites.  The host's share of a GPU batch is about proportional to these counts.
"""
from __future__ import annotations

import collections
import os
import sys

sys.path.insert(0, os.getcwd())

import numpy as np
import pyarrow.parquet as pq

import vinestream
from tests.test_bfs_small_batches import _CountedLauncher, _CountedTranspose
from vinestream.algorithms.bfs import BFS
from vinestream.structures.backend import count_operations

# the tests' launchers: each emulated launch counted as the real launcher counts it
Counted, TCounted = _CountedLauncher, _CountedTranspose


def _run(job, p, r, first):
    if first:
        job.run_static(p.structure, p.vertex_map)
    else:
        job.update(p.structure, r.delta, p.vertex_map)


def main(log, structure="coo", limit=None):
    table = pq.read_table(log)
    p = vinestream.build_pipeline(structure=structure, backend="cpu", jobs=[])
    tl = TCounted(0, 3)
    job = BFS(np, sources=[1], fused=True, library_bfs=False, launch=Counted(0, 7), fused_transpose=True,
              transpose_launch=(tl, tl.blocks))
    totals, sites, kinds = collections.Counter(), collections.Counter(), collections.Counter()
    first = True
    size = 10000
    for i, start in enumerate(range(0, table.num_rows, size)):
        if limit and i >= limit:
            break
        events, _ = vinestream.validate(table.slice(start, size), source="log",
                                        positions=range(start, min(start + size, table.num_rows)))
        with count_operations(trace=True) as c:     # the structure's arrays counted too, as a GPU's
            r = p.apply(events)
            with p.structure.reading():
                p.structure.adjacency()      # the shared adjacency: built by the job before BFS in a replay
                c.count, c.kinds, c.sites = 0, {}, {}
                _run(job, p, r, first)
        reads = sum(v for k, v in c.kinds.items() if k.startswith("read:"))
        launches = sum(v for k, v in c.kinds.items() if k.startswith("launch:"))
        w = job.work
        print(f"batch {i:2d} E={p.structure.num_edges:7d} k={int(r.delta.num_changed_edges):5d} "
              f"mode={w['mode'] + ('/fused' if w.get('fused') else ''):18s} ops={c.count:4d} "
              f"launches={launches:3d} reads={reads:3d} iters={w.get('iterations')}")
        if os.environ.get("SITES_BATCH") and int(os.environ["SITES_BATCH"]) == i:
            _print_sites(collections.Counter(c.sites))
        if not first:
            totals["ops"] += c.count
            totals["reads"] += reads
            totals["launches"] += launches
            totals["batches"] += 1
            sites.update(c.sites)
            kinds.update(c.kinds)
        first = False
    print("totals over updates:", dict(totals))
    print("kinds:", kinds.most_common(40))
    print("sites:")
    _print_sites(sites)


def _print_sites(sites):
    for s, n in sites.most_common(70):
        f, line = s.rsplit(":", 1)
        text = ""
        for d in ("algorithms", "structures", "structures/vertex_map", "stream/pipeline", ".ci"):
            if os.path.exists(os.path.join(d, f)):
                text = open(os.path.join(d, f)).read().splitlines()[int(line) - 1].strip()
                break
        print(f"  {n:5d} {s:28s} {text[:110]}")


if __name__ == "__main__":
    main(sys.argv[1], *(sys.argv[2:3] or []), *([int(sys.argv[3])] if len(sys.argv) > 3 else []))
