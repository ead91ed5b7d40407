#!/usr/bin/env python3
"""Where a warm replay's job time goes: PageRank's incremental pushes against dense sweeps from the previous ranks
(``fallback_fraction=0``) on the replay's batches (each 2-3% of the edges), and the replay without results (no
outputs written) against with them, in one warm process, variants alternating, three rounds.

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
VARIANTS = [("default", None, True), ("pagerank dense", {"pagerank": {"fallback_fraction": 0.0}}, True),
            ("no results", None, False)]


def once(job_options, out):
    shutil.rmtree(OUT, ignore_errors=True)
    return vinestream.replay([log], structure=structure, backend="gpu", batch_size=10000,
                             jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1], progress=False,
                             job_options=job_options, out=OUT if out else None, overwrite=True)


once(None, True)
once({"pagerank": {"fallback_fraction": 0.0}}, True)                # kernels loaded
for r in range(3):
    for name, options, out in VARIANTS:
        report, p = once(options, out)
        ms = {k: round(1e3 * v, 1) for k, v in report.phase_seconds.items()}
        line = (f"{name:16s} round {r}: {report.events / report.seconds:,.0f} events/s, window "
                f"{1e3 * report.seconds:.0f} ms, phases {ms}")
        if out:
            s = vinestream.read_results(OUT)["summary"].to_pandas()
            line += (f"; pagerank iterations median {statistics.median(s['pagerank_iterations'])}, "
                     f"max {s['pagerank_iterations'].max()}, sum {s['pagerank_iterations'].sum()}")
        print(line, flush=True)
