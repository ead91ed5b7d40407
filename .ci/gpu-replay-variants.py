#!/usr/bin/env python3
"""What each part of a replay costs: warm replays of one log in one process, variants interleaved.

    python3 .ci/gpu-replay-variants.py LOG OUT.json [structure ...]

After one untimed replay per structure (kernel loads, CUDA graph captures), every variant (which jobs,
with or without ``--out``) replays the log in turn,
ROUNDS times (default 3), order rotating; the JSON
holds every wall time and the report's phase milliseconds, the text summary goes to stdout. SWITCH sets
sys.setswitchinterval (seconds), VARIANTS picks some (comma-separated names).
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.getcwd())

import vinestream

VARIANTS = {
    "all+out": (("pagerank", "bfs", "triangles"), True),
    "all": (("pagerank", "bfs", "triangles"), False),
    "none": ((), False),
    "pagerank": (("pagerank",), False),
    "bfs": (("bfs",), False),
    "triangles": (("triangles",), False),
}


def once(log, structure, jobs, out):
    tmp = tempfile.mkdtemp()
    t0 = time.perf_counter()
    report, _ = vinestream.replay([log], structure=structure, backend=os.environ.get("BACKEND", "gpu"),
                                  batch_size=10000, jobs=list(jobs), bfs_sources=[1],
                                  out=os.path.join(tmp, "o") if out else None)
    wall = time.perf_counter() - t0
    shutil.rmtree(tmp, ignore_errors=True)
    phases = {k: round(v * 1000, 2) for k, v in report.phase_seconds.items()}
    return wall, report.seconds, report.events, phases


def main(log, out_json, structures):
    rounds = int(os.environ.get("ROUNDS", 3))
    if os.environ.get("SWITCH"):
        sys.setswitchinterval(float(os.environ["SWITCH"]))
    result = {}
    for structure in structures:
        once(log, structure, VARIANTS["all+out"][0], True)
        names = [n for n in os.environ.get("VARIANTS", ",".join(VARIANTS)).split(",") if n]
        rows = {n: [] for n in names}
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                jobs, out = VARIANTS[n]
                rows[n].append(once(log, structure, jobs, out))
        result[structure] = {n: [{"wall": w, "report_seconds": s, "events": e, "phases": p} for w, s, e, p in v]
                             for n, v in rows.items()}
        for n, v in rows.items():
            med = statistics.median(x[1] for x in v)
            print(f"{structure:10s} {n:10s} report {med * 1000:7.1f} ms  {v[0][2] / med:11,.0f} events/s  "
                  f"walls {[round(x[0] * 1000, 1) for x in v]}  phases {v[-1][3]}", flush=True)
    with open(out_json, "w") as f:
        json.dump(result, f, indent=1, default=str)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:] or ["coo"])
