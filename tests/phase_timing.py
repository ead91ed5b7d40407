"""By hand (not a test): milliseconds of the structure phases of small batches, per structure.

    python -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine

Loads an R-MAT graph (``2**scale`` vertices, edge factor 16) through the pipeline, then
applies batches of ``--batch`` events (90% inserts of new R-MAT edges, 10% deletes of
loaded ones; each batch's Arrow table built before its clock starts) and prints, as JSON, the
median over the batches of each phase's time
(``BatchResult.seconds``: CUDA events on a GPU) and of the wall time of
resolve + vertices + csr + delete + insert (or edges) + delta (``Pipeline._update_once``, the
device synchronised before and after).  The issue's GPU goal: ``update_wall_ms`` <= 1
at 1,000 edges.  The device -> host transfers of the same phases are counted on NumPy
by ``tests/test_sync_budget.py``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import pyarrow as pa

from vinestream.connectors.synthetic import rmat_edges
from vinestream.stream.batching import resolve_kernels as rk
from vinestream.stream.events.schema import EVENT_SCHEMA
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures.backend import synchronize, to_numpy

PHASES = ("resolve", "vertices", "csr", "delete", "insert", "edges")   # edges: both at once (coo's fused path)


def _table(op, src, dst):
    n = len(op)
    return pa.table({"op": pa.array(op, pa.int8()), "src": pa.array(src, pa.int64()),
                     "dst": pa.array(dst, pa.int64()), "weight": pa.array(np.ones(n, np.float32)),
                     "ts": pa.array([None] * n, pa.timestamp("ms"))}, schema=EVENT_SCHEMA)


def churn_tables(src, dst, init: int, batches: int, batch: int, rng):
    """``batches`` event tables of ``batch`` events on a graph loaded with the first ``init`` edges of ``src`` /
    ``dst``: 90% inserts of the next unloaded edges, 10% deletes of loaded ones (picked by ``rng``)."""
    pos = init
    for _ in range(batches):
        op = np.where(rng.random(batch) < 0.1, 2, 1).astype(np.int8)
        bs, bd = src[pos:pos + batch].copy(), dst[pos:pos + batch].copy()
        old = rng.integers(0, init, batch)
        bs[op == 2], bd[op == 2] = src[old[op == 2]], dst[old[op == 2]]
        pos += batch
        yield _table(op, bs, bd)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--batches", type=int, default=100)
    ap.add_argument("--structures", default="coo,graphvine")
    args = ap.parse_args(argv)
    src, dst = (to_numpy(a) for a in rmat_edges(np, args.scale, 16, seed=3))
    spare = (args.batches + 1) * args.batch
    init = len(src) - spare
    out = {}
    for name in args.structures.split(","):
        rng = np.random.default_rng(0)
        p = build_pipeline(structure=name, backend=args.backend)
        p.apply(_table(np.ones(init, np.int8), src[:init], dst[:init]))
        seconds, walls = [], []
        # each table is the connector's work, not the update's: built before the clock starts
        for b, table in enumerate(churn_tables(src, dst, init, args.batches + 1, args.batch, rng)):
            p.epoch += 1
            synchronize(p.xp)
            start = time.perf_counter()
            update = p._update_once(table)
            synchronize(p.xp)
            if b:                                   # the first batch warms the kernels up
                walls.append(time.perf_counter() - start)
                seconds.append(dict(update.seconds))
        row = {ph: statistics.median(s.get(ph, 0.0) for s in seconds) * 1e3 for ph in PHASES}
        row["update_wall_ms"] = statistics.median(walls) * 1e3
        out[name] = {k: round(v, 3) for k, v in row.items()}
    out["device"] = "gpu" if p.on_gpu else "cpu"
    out["resolve_graphs"] = {"on": rk.GRAPHS, "captured": len(rk._STAGING.graphs), "error": rk._graph_error}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
