#!/usr/bin/env python3
"""Which call imports cupyx (and scipy) during a replay, and what a replay gains when they are imported first.

    python3 .ci/gpu-who-imports.py LOG STRUCTURE [pre]

Prints the stack of the first import of ``cupyx``, ``cupyx.scipy`` and ``scipy`` (an import hook; WARM_UP=0:
without the warm-up thread, which imports them itself), then the report's
events/s and phase milliseconds; ``pre``: import cupyx.scipy.sparse before the replay starts (timed apart).
"""
import sys
import time
import traceback

seen = set()


class Who:
    def find_spec(self, name, path=None, target=None):
        top = "cupyx.scipy" if name.startswith("cupyx.scipy") else name.split(".")[0]
        if top in ("cupyx", "cupyx.scipy", "scipy") and top not in seen:
            seen.add(top)
            print(f"=== first import of {name}:", flush=True)
            frames = [f for f in traceback.extract_stack()[:-1] if "importlib" not in f.filename]
            print("".join(traceback.format_list(frames[-14:])), flush=True)
        return None


sys.meta_path.insert(0, Who())
import os  # noqa: E402

sys.path.insert(0, os.getcwd())
log, structure = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3 and sys.argv[3] == "pre":
    t0 = time.perf_counter()
    import cupyx.scipy.sparse  # noqa: F401
    print(f"pre-import {1e3 * (time.perf_counter() - t0):.1f} ms", flush=True)
import vinestream  # noqa: E402

t0 = time.perf_counter()
report, _ = vinestream.replay([log], structure=structure, backend="gpu", batch_size=10000,
                              jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1],
                              warm_up=os.environ.get("WARM_UP", "1") == "1")
print(f"{structure} {sys.argv[3] if len(sys.argv) > 3 else 'plain'}: wall {time.perf_counter() - t0:.3f} s, "
      f"report {report.seconds:.3f} s, {report.events / report.seconds:,.0f} events/s", flush=True)
print(report.table() if hasattr(report, "table") else report, flush=True)
