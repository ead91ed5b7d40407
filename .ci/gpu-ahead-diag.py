#!/usr/bin/env python3
"""Diagnose test_resolve_ahead_equals_resolve_in_turn: MODE=turn (no next_events) or ahead; which step and
call fails (run with CUDA_LAUNCH_BLOCKING=1 to name the kernel)."""
import os
import sys
import traceback

sys.path.insert(0, os.getcwd())
import numpy as np

from tests.test_resolve_kernels_gpu import _batch
from vinestream.stream.pipeline.pipeline import build_pipeline

mode, structure, undirected = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
jobs = sys.argv[4].split(",") if len(sys.argv) > 4 else ["pagerank", "bfs", "triangles"]
rng = np.random.default_rng(17)
ids = rng.choice(np.arange(0, 2**36, 2**12), 3000, replace=False)
p = build_pipeline(structure=structure, backend="gpu", undirected=undirected, jobs=jobs,
                   bfs_sources=[int(ids[0]), int(ids[1])])
sizes = [4000, 1, 200, 1000, 10_000, 3000, 1000, 50, 10_000, 1000, 700, 4000]
tables = [_batch(rng, n // (2 if undirected else 1) or 1, ids) for n in sizes]
try:
    for step, table in enumerate(tables):
        following = tables[step + 1] if mode == "ahead" and step + 1 < len(tables) else None
        r = p.apply(table, next_events=following)
        for name in jobs:
            r.job_outputs[name]
        import cupy
        cupy.cuda.Device().synchronize()
        print(f"{mode} {structure} u={undirected} jobs={jobs} step {step} ok", flush=True)
    print(f"{mode} {structure} u={undirected} jobs={jobs}: ALL OK, ahead {p.resolved_ahead}")
except Exception:
    print(f"{mode} {structure} u={undirected} jobs={jobs}: FAILED at step {step}")
    traceback.print_exc(limit=12)
