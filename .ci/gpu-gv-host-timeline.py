#!/usr/bin/env python3
"""Where GraphVine's 1e6-edge batches leave the GPU idle (session 21): R-MAT ``--scale`` loaded but for ``--big``
edges, which are inserted and deleted (``--rounds`` times, the last reported) on the key side's one pass.  Every
kernel launch and every read is logged with its host time, and a CUDA event recorded after it; once the call is
done, each launch's device completion is read from its event.  A launch enqueued after the device finished the
previous one left the device idle for the difference: those gaps, and the host's steps between launches (the
CuPy operations and allocations, which are not launches of the module, fall in them), are printed per call.

``python3 .ci/gpu-gv-host-timeline.py --scale 22 --big 1000000 --out DIR`` from a checkout's root; DIR/timeline.json.
"""
from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.getcwd())

from gv_rmat_held_out import held_out_arguments, loaded_graphvine  # beside this script

from vinestream.structures import backend
from vinestream.structures import graphvine as gv
from vinestream.structures import graphvine_kernels as gk


def main() -> int:
    ap = held_out_arguments(3)
    args = ap.parse_args()
    cp = backend.get_backend("gpu")
    g, ins, dele = loaded_graphvine(cp, args.scale, args.big)

    log = []
    real_launch, real_read, real_fetch = gk.launcher, gv.GraphVine._read_io, gv.GraphVine._fetch

    def launch(xp, name, nn, a):
        t = time.perf_counter()
        real_launch(xp, name, nn, a)
        e = cp.cuda.Event()
        e.record()
        log.append((name, t, time.perf_counter(), e))

    def read(self, *a, _real=real_read, _name="read_io"):
        t = time.perf_counter()
        out = _real(self, *a)
        log.append((_name, t, time.perf_counter(), None))
        return out

    def fetch(self, *a):
        return read(self, *a, _real=real_fetch, _name="fetch")

    result = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}
    for _round in range(args.rounds):
        for phase, fn, batch in (("insert", g.insert_edges, ins), ("delete", g.delete_edges, dele)):
            cp.cuda.Device().synchronize()
            del log[:]
            gk.launcher, gv.GraphVine._read_io, gv.GraphVine._fetch = launch, read, fetch
            start = cp.cuda.Event()
            start.record()
            t0 = time.perf_counter()
            fn(batch)
            end = cp.cuda.Event()
            end.record()
            t1 = time.perf_counter()
            end.synchronize()
            gk.launcher, gv.GraphVine._read_io, gv.GraphVine._fetch = real_launch, real_read, real_fetch
            rows, prev_done, idle = [], 0.0, 0.0
            for name, h0, h1, e in log:
                host = 1e3 * (h0 - t0)
                if e is None:                       # a read: the device is done with everything before it
                    rows.append({"step": name, "host_ms": round(host, 4), "host_end_ms": round(1e3 * (h1 - t0), 4)})
                    continue
                done = cp.cuda.get_elapsed_time(start, e)
                gap = max(0.0, host - prev_done)    # the device finished the previous launch before this one came
                idle += gap
                rows.append({"step": name, "host_ms": round(host, 4), "device_done_ms": round(done, 4),
                             "idle_before_ms": round(gap, 4)})
                prev_done = max(prev_done, done)
            span = cp.cuda.get_elapsed_time(start, end)
            result[phase] = {"wall_ms": round(1e3 * (t1 - t0), 4), "device_span_ms": round(span, 4),
                             "idle_before_launches_ms": round(idle, 4), "steps": rows}
    with open(os.path.join(args.out, "timeline.json"), "w") as f:
        json.dump(result, f, indent=1)
    for phase in ("insert", "delete"):
        p = result[phase]
        print(f"{phase}: wall {p['wall_ms']:.3f} ms, device span {p['device_span_ms']:.3f} ms, device idle before "
              f"launches {p['idle_before_launches_ms']:.3f} ms")
        for s in p["steps"]:
            extra = (f"done {s['device_done_ms']:8.3f}  idle before {s['idle_before_ms']:.3f}" if "device_done_ms" in s
                     else f"(read until {s['host_end_ms']:.3f})")
            print(f"   host {s['host_ms']:8.3f}  {s['step']:<22} {extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
