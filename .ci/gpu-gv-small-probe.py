#!/usr/bin/env python3
"""Where a standalone 1,000-edge GraphVine insert / delete spends its time (session 27): R-MAT ``--scale`` loaded
but for ``--big`` held-out edges; per call the wall time (synchronised before and after, as `bench structures`), the
device time from a CUDA event before the call to one after it, the one-sync path's counters, in three orders:
insert/delete alone, the bench's loop (scan, insert, query, delete) and the pipeline's combined edge phases; then a
cProfile of the host side of ``--profile`` inserts and deletes.  ``python3 .ci/gpu-gv-small-probe.py --out DIR``."""
from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gv_rmat_held_out import held_out_arguments, held_out_rmat  # beside this script

from vinestream.structures import backend
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create


def timed(cp, fn, *a):
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    t0 = time.perf_counter()
    s.record()
    fn(*a)
    e.record()
    cp.cuda.Device().synchronize()
    return time.perf_counter() - t0, cp.cuda.get_elapsed_time(s, e) * 1e-3


def main() -> int:
    ap = held_out_arguments(30)
    ap.add_argument("--profile", type=int, default=50)
    args = ap.parse_args()
    cp = backend.get_backend("gpu")
    src, dst, w, n, init = held_out_rmat(cp, args.scale, args.big)
    g = create("graphvine", cp)
    g.insert_vertices(cp.arange(n, dtype=cp.int32))
    g.insert_edges(CSRBatch.from_edges(cp, src[:init], dst[:init], w[:init]))
    k = 1000
    ins = CSRBatch.from_edges(cp, src[init:init + k], dst[init:init + k], w[init:init + k])
    dele = CSRBatch.from_edges(cp, src[init:init + k], dst[init:init + k])
    ins2 = CSRBatch.from_edges(cp, src[init + k:init + 2 * k], dst[init + k:init + 2 * k], w[init + k:init + 2 * k])
    dele2 = CSRBatch.from_edges(cp, src[init + k:init + 2 * k], dst[init + k:init + 2 * k])
    rs = cp.random.RandomState(3)
    scan_rows = rs.randint(0, n, k).astype(cp.int32)
    qs, qd = src[init:init + k], rs.randint(0, n, k).astype(cp.int32)
    out = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "scale": args.scale}
    for label, loop in (("alone", ("insert", "delete")), ("bench", ("scan", "insert", "query", "delete")),
                        ("phases", ("phases",))):
        if label == "phases":
            g.insert_edges(ins)             # the phases swap ins's and ins2's edges: ins live first
        t = {op: [] for op in loop}
        before = dict(g.one_sync)
        for _ in range(args.rounds):
            for op in loop:
                if op == "insert":
                    t[op].append(timed(cp, g.insert_edges, ins))
                elif op == "delete":
                    t[op].append(timed(cp, g.delete_edges, dele))
                elif op == "scan":
                    t[op].append(timed(cp, g.adjacency, scan_rows))
                elif op == "query":
                    t[op].append(timed(cp, g.contains, qs, qd))
                else:           # the pipeline's structure update: 1,000 live edges deleted, 1,000 inserted, one read
                    t[op].append(timed(cp, g.edge_phases_counted, ins2, dele))     # ins live -> ins2 live
                    t[op].append(timed(cp, g.edge_phases_counted, ins, dele2))     # and back
        out[label] = {op: {"wall_ms": statistics.median(x[0] for x in v) * 1e3,
                           "device_ms": statistics.median(x[1] for x in v) * 1e3} for op, v in t.items()}
        out[label]["one_sync"] = {key: g.one_sync[key] - before.get(key, 0) for key in g.one_sync}
        print(label, json.dumps(out[label]))
    g.delete_edges(dele)                    # ins absent again: the profiled inserts insert
    prof = cProfile.Profile()
    for _ in range(args.profile):
        cp.cuda.Device().synchronize()
        prof.enable()
        g.insert_edges(ins)
        g.delete_edges(dele)
        cp.cuda.Device().synchronize()
        prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(30)
    text = s.getvalue()
    print("\n".join(text.splitlines()[:60]))
    with open(os.path.join(args.out, "small-probe.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    with open(os.path.join(args.out, "small-profile.txt"), "w") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
