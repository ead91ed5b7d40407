"""A GPU run's one-time set-up on a thread of its own, started with the run (inside its timed window).

A fresh process pays, before its first batch is done, for the CUDA context, the first call into
thrust (CuPy's sorts; 0.23 s in a fresh process on an H100, ``.ci/gpu-first-calls.py``), and for
loading each kernel module it launches (CuPy reads the compiled module from its cache, and NVRTC
preprocesses an empty source once per set of compiler options).  Done on the batch's path, each of
these waits for the one before; :func:`device_warm_up` does the ones the configured pipeline surely
needs on a thread while the pipeline is built and the first batches are read and decoded.  Nothing
is skipped: the batch path finds them done (the kernel modules under a lock, so a module is loaded
once), and a failure here is left for the batch path to meet and report.

Measured (H100, sx-mathoverflow, coo, fresh processes, one sample each: bench-results/
2026-11-25-replay): no gain shown — 1.80 and 2.13 s with it, 1.53 s without.  The first batch is
host-bound and holds the GIL most of the time, so work overlapped with it mostly waits for it.
The largest one-time cost of a fresh process's first batch (0.24-0.41 s in coo's first insert) was
an import, found in session 9 by an import hook (``.ci/gpu-who-imports.py``): CuPy imports
``cupyx`` lazily, and its first use imports ``cupyx.scipy.sparse`` and with it SciPy (0.28 s of the
0.29 s of coo's first compaction, profiled); imported before the replay started (outside its timed
window), replays went from 490k to 570-590k events/s (coo, two fresh processes each, H100).  So this
thread imported it before anything else.  Since session 18 ``import cupyx`` leaves SciPy out
(``structures.backend.defer_cupyx_extras``: it came through ``cupyx.linalg``, which no run uses), and this
thread imports cupyx's sparse module only where the run may reach the library transposes
(:func:`may_use_sparse_library`): fresh replays +10% (coo) and +24% (graphvine) events/s (H100, five rounds
each, bench-results/2026-11-26-session18/call4).
``vinestream.replay(warm_up=False)`` turns it off.  The command line makes that import cheaper first: NumPy's
``f2py`` and ``testing``, which SciPy's ``from numpy import *`` used to run, load at their first use
(``structures.backend.defer_numpy_extras``; bench-results/2026-11-26-session13/call1: the first elementwise
operation 439-701 ms -> 307-493 ms with the context made in it).
"""
from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from vinestream.algorithms.edge_index import LIBRARY_TRANSPOSE_MIN_EDGES_GPU
from vinestream.algorithms.pagerank_kernels import TRANSPOSE_LIBRARY_MIN_EDGES
from vinestream.stream.batching import resolve_kernels
from vinestream.structures.backend import start_exit_waited

log = logging.getLogger(__name__)

#: the kernel modules (their ``_kernels``) of each job and structure, and of the small-batch path
JOB_KERNELS = {"pagerank": ("vinestream.algorithms.pagerank_kernels",),
               "bfs": ("vinestream.algorithms.bfs_kernels", "vinestream.algorithms.transpose_kernels"),
               "triangles": ("vinestream.algorithms.triangle_kernels",)}
STRUCTURE_KERNELS = {"coo": "vinestream.structures.coo_kernels",
                     "graphvine": "vinestream.structures.graphvine_kernels"}
SMALL_BATCH_KERNELS = ("vinestream.stream.batching.resolve_kernels",
                       "vinestream.stream.batching.vertex_map_kernels")


def kernel_modules(structure: str, jobs, batch_size: int | None, undirected: bool = False) -> list[str]:
    """The kernel modules a GPU pipeline of ``structure`` and ``jobs`` launches from its first batches."""
    names = []
    if batch_size is not None and resolve_kernels.fits(batch_size, undirected):
        names += SMALL_BATCH_KERNELS
    if structure in STRUCTURE_KERNELS:
        names.append(STRUCTURE_KERNELS[structure])
    names += [name for j in jobs for name in JOB_KERNELS.get(j, ())]
    return names


#: imported first: CuPy's first lazy use of cupyx imports it on the batch path otherwise (cheap since
#: ``structures.backend.defer_cupyx_extras`` keeps SciPy out of it)
LIBRARY_MODULES = ("cupyx",)
#: and this too where the run may reach the library transposes and SpMV (cuSPARSE through cupyx, which imports
#: SciPy: ~0.2 s holding the GIL)
SPARSE_LIBRARY_MODULES = ("cupyx.scipy.sparse",)


def may_use_sparse_library(edges_bound: int | None) -> bool:
    """Whether a run whose graph holds at most ``edges_bound`` edges (None: unknown) may reach cupyx's sparse
    module: the library transposes from their thresholds on (``algorithms.edge_index``,
    ``algorithms.pagerank_kernels``)."""
    return edges_bound is None or edges_bound >= min(LIBRARY_TRANSPOSE_MIN_EDGES_GPU, TRANSPOSE_LIBRARY_MIN_EDGES)


def device_warm_up(xp, modules, sparse_library: bool = True) -> None:
    """cupyx (and its sparse module where ``sparse_library``: :func:`may_use_sparse_library`), the context,
    thrust's first sorts, the kernel modules ``modules`` (module names), in that order; the kernel modules side
    by side, one thread each (:func:`preload_all`).  A run without ``sparse_library`` that reaches the sparse
    module after all imports it there (once)."""
    try:
        if xp is not np:
            for name in LIBRARY_MODULES + (SPARSE_LIBRARY_MODULES if sparse_library else ()):
                importlib.import_module(name)
        for dtype in (np.int64, np.int32):
            keys = xp.arange(8, dtype=dtype)[::-1]
            xp.sort(keys)                                # thrust's sort (the context first)
            xp.argsort(keys, kind="stable")              # and its stable sort by key
        if xp is not np:
            resolve_kernels.library_sort_loaded()        # the batches may sort by the library from now on
        preload_all(xp, modules)
    except Exception as exc:                             # the batch path meets it again and reports it
        log.debug("device warm-up: %s: %s", type(exc).__name__, exc)


def preload_all(xp, modules) -> None:
    """Compile (where CuPy's cache has them not) and load the kernel modules ``modules`` (module names), each on a
    thread of its own: NVRTC gives up the interpreter lock while it compiles, so on a machine whose cache is empty
    the modules compile side by side (GraphVine's alone took 2.8 s on an H100) instead of one after the other; with
    the cache they are read and loaded.  The first error is raised once all are done."""
    preload_side_by_side(xp, [k for k in (getattr(importlib.import_module(name), "_kernels", None) for name in modules)
                              if k is not None and hasattr(k, "preload")])


def preload_side_by_side(xp, kernels) -> None:
    """``k.preload(xp)`` for each of ``kernels``, each on a thread of its own (one alone on this thread)."""
    if len(kernels) < 2:
        for k in kernels:
            k.preload(xp)
        return
    with ThreadPoolExecutor(max_workers=len(kernels), thread_name_prefix="vinestream-compile") as pool:
        for done in [pool.submit(k.preload, xp) for k in kernels]:
            done.result()


def start(fn: Callable[[], None] | None) -> threading.Thread | None:
    """Run ``fn`` on a daemon thread (None: nothing); the process's exit waits for it (bounded)."""
    if fn is None:
        return None
    # a run stopped in its first moments (Ctrl-C at start-up) ended the process while this thread was inside
    # NVRTC or CuPy's module loading: the exit waits for it, as for the early CUDA context's
    return start_exit_waited(fn, "vinestream-warm-up")
