#!/usr/bin/env python3
"""The host's time per source line of a GraphVine 1e6-edge insert / delete (session 23): R-MAT ``--scale`` loaded but
for ``--big`` edges, inserted and deleted ``--rounds`` times on the key side's one pass; in the last ``--traced``
rounds a line tracer (sys.settrace, lines of the vinestream structures' files only) stamps every line and charges the
time to the next stamp to that line: calls into CuPy or a kernel launch show on the line that makes them.  The
tracer adds about 1 us a line.  The lines by their median time per call, into DIR/lines.txt.

``python3 .ci/gpu-gv-host-lines.py --scale 22 --big 1000000 --out DIR`` from a checkout's root.
"""
from __future__ import annotations

import collections
import linecache
import os
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())

from gv_rmat_held_out import held_out_arguments, loaded_graphvine  # beside this script

from vinestream.structures import backend

WATCH = ("structures/graphvine.py", "structures/graphvine_kernels.py", "structures/raw_kernels.py",
         "structures/backend.py")


def traced(fn, batch, cp):
    stamps = []
    clock = time.perf_counter

    def local(frame, event, arg):
        if event == "line":
            stamps.append((clock(), frame.f_code.co_filename, frame.f_lineno))
        return local

    def glob(frame, event, arg):
        if frame.f_code.co_filename.endswith(WATCH):
            return local
        return None

    cp.cuda.Device().synchronize()
    t0 = clock()
    sys.settrace(glob)
    try:
        fn(batch)
    finally:
        sys.settrace(None)
    t1 = clock()
    cp.cuda.Device().synchronize()
    t2 = clock()
    cost = collections.defaultdict(float)
    for (t, f, ln), (t_next, _, _) in zip(stamps, [*stamps[1:], (t1, None, None)]):
        cost[(f, ln)] += t_next - t
    return cost, t1 - t0, t2 - t0


def main() -> int:
    ap = held_out_arguments(6)
    ap.add_argument("--traced", type=int, default=4)
    ap.add_argument("--top", type=int, default=45)
    args = ap.parse_args()
    cp = backend.get_backend("gpu")
    g, ins, dele = loaded_graphvine(cp, args.scale, args.big)
    out = []
    for phase in ("insert", "delete"):
        per_line = collections.defaultdict(list)
        walls = []
        for r in range(args.rounds):
            if phase == "insert":
                g.delete_edges(dele)
                fn, batch = g.insert_edges, ins
            else:
                fn, batch = g.delete_edges, dele
            cp.cuda.Device().synchronize()
            if r < args.rounds - args.traced:
                fn(batch)
            else:
                cost, host, wall = traced(fn, batch, cp)
                walls.append((host, wall))
                for k, v in cost.items():
                    per_line[k].append(v)
            if phase == "delete":
                g.insert_edges(ins)
            cp.cuda.Device().synchronize()
        rows = sorted(((statistics.median(v + [0.0] * (args.traced - len(v))), k) for k, v in per_line.items()),
                      reverse=True)
        total = sum(r[0] for r in rows)
        out.append(f"== {phase}: traced host {statistics.median(h for h, _ in walls) * 1e3:.3f} ms a call (lines "
                   f"{total * 1e3:.3f}), to the device's end {statistics.median(x for _, x in walls) * 1e3:.3f} ms")
        for t, (f, ln) in rows[:args.top]:
            src_line = linecache.getline(f, ln).strip()[:110]
            out.append(f"{t * 1e6:8.1f} us  {os.path.basename(f)}:{ln}  {src_line}")
    text = "\n".join(out)
    with open(os.path.join(args.out, "lines.txt"), "w") as fh:
        fh.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
