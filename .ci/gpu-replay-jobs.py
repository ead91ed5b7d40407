#!/usr/bin/env python3
"""Where a warm replay's time goes: PageRank's incremental pushes against dense sweeps from the previous ranks
(``fallback_fraction=0``) on the replay's batches (each 2-3% of the edges, call 4), the interpreter's switch
interval (how long a thread that gave up the GIL for a device wait may wait to get it back from the reader or
results thread; 5 ms by default), and the replay without results (no outputs written), in one warm process,
variants alternating, three rounds.

    python3 .ci/gpu-replay-jobs.py [STRUCTURE] [LOG]
"""
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.getcwd())
import vinestream

structure = sys.argv[1] if len(sys.argv) > 1 else "coo"
log = sys.argv[2] if len(sys.argv) > 2 else ".data/sx-mathoverflow.events.parquet"
OUT = "/tmp/replay-jobs"
DENSE = {"pagerank": {"fallback_fraction": 0.0}}
# (name, job options, results written, switch interval in seconds)
VARIANTS = [("default", None, True, 0.005), ("switch 0.5 ms", None, True, 0.0005),
            ("switch 0.1 ms", None, True, 0.0001), ("no results", None, False, 0.005)]
if os.environ.get("DENSE"):
    VARIANTS.insert(1, ("pagerank dense", DENSE, True, 0.005))


def once(job_options, out, switch=0.005):
    sys.setswitchinterval(switch)
    shutil.rmtree(OUT, ignore_errors=True)
    return vinestream.replay([log], structure=structure, backend="gpu", batch_size=10000,
                             jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1], progress=False,
                             job_options=job_options, out=OUT if out else None, overwrite=True)


once(None, True)
once(DENSE, True)                                                    # kernels loaded
for r in range(3):
    for name, options, out, switch in VARIANTS:
        report, p = once(options, out, switch)
        ms = {k: round(1e3 * v, 1) for k, v in report.phase_seconds.items()}
        line = (f"{name:16s} round {r}: {report.events / report.seconds:,.0f} events/s, window "
                f"{1e3 * report.seconds:.0f} ms, phases {ms}")
        if out:
            s = vinestream.read_results(OUT)["summary"].to_pandas()
            line += (f"; pagerank iterations median {statistics.median(s['pagerank_iterations'])}, "
                     f"max {s['pagerank_iterations'].max()}, sum {s['pagerank_iterations'].sum()}")
        print(line, flush=True)
