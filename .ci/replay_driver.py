"""What the session-15 device drivers share (``.ci/gpu-*.py``): the command line's start (NumPy's extras deferred,
the CUDA context made early, as ``vinestream replay`` does), the tree in the current directory imported, and their
common arguments (STRUCTURE [N] [LOG]); and one replay of the log as the closing calls run it.  Run from the tree
to measure (this checkout, or a ``.wt`` one with ``python3 ../../.ci/gpu-X.py``)."""
import os
import sys
import time

sys.path.insert(0, os.getcwd())

from vinestream.structures.backend import defer_numpy_extras, start_primary_context

LOG = ".data/sx-mathoverflow.events.parquet"
BACKEND = os.environ.get("BACKEND", "gpu")


def start(default_n: int):
    """(vinestream, structure, n, log) from ``sys.argv`` (STRUCTURE [N] [LOG]; $LOG as the log's default)."""
    defer_numpy_extras()
    start_primary_context(BACKEND)
    import vinestream
    structure = sys.argv[1] if len(sys.argv) > 1 else "coo"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else default_n
    log = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("LOG", LOG)
    return vinestream, structure, n, log


def replay(vinestream, structure: str, log: str, out: str):
    """One replay of ``log``: all three jobs, 1e4-event batches, results written to ``out`` (replaced)."""
    return vinestream.replay([log], structure=structure, backend=BACKEND, batch_size=10000, out=out, overwrite=True,
                             jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1])


def timed(fn, record):
    """``fn`` wrapped so that each call's wall seconds go to ``record(seconds, start, args)`` (``start``: the
    ``perf_counter`` at the call), however the call ends.  The wrapper's signature is ``(*args, **kwargs)``: one
    whose parameters matter to its caller (``Pipeline.apply``'s ``next_events``) is wrapped by hand."""
    def call(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            record(time.perf_counter() - t0, t0, args)
    return call
