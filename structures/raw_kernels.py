"""Compiling and launching a project CUDA source with CuPy (the fused GPU paths' plumbing).

A kernel module keeps its CUDA source as one string, compiles it once with
``cupy.RawModule`` on first use, and launches ``extern "C"`` kernels over ``n``
work items with grid-stride loops (``launch``), or on a fixed grid of thread blocks
(``launch_blocks``, for kernels whose blocks synchronise their threads).  Tests replace a module's ``launcher`` with a
serial host emulation of the same source.
"""
from __future__ import annotations

import threading

import numpy as np

from .backend import count_launch

THREADS = 256
MAX_BLOCKS = 65535 * 16           # grid-stride loops cover the rest


class RawKernels:
    """One CUDA source, compiled lazily; ``launch(xp, name, n, args)`` runs kernel ``name``."""

    def __init__(self, source: str, what: str):
        self.source = source
        self.what = what              # for the error on a backend without CuPy
        self._module = None
        self._functions = {}          # name -> cupy Function (get_function costs ~10 us a call)
        self._lock = threading.Lock()  # one module load when a warm-up thread and a launch race for it

    def launch(self, xp, name: str, n: int, args: tuple) -> None:
        count_launch(name)
        if not hasattr(xp, "RawModule"):
            raise RuntimeError(f"the fused {self.what} kernels need CuPy (use fused=False on NumPy)")
        blocks = min(max((int(n) + THREADS - 1) // THREADS, 1), MAX_BLOCKS)
        self._function(xp, name)((blocks,), (THREADS,), args)

    def _function(self, xp, name: str):
        """Kernel ``name`` of the module, compiled on first use and cached."""
        f = self._functions.get(name)
        if f is None:
            with self._lock:
                module = self._module
                if module is None:
                    module = xp.RawModule(code=self.source)
                f = self._functions[name] = module.get_function(name)    # compiles a new module
                self._module = module          # published compiled: readers without the lock see it ready
        return f

    def preload(self, xp) -> None:
        """Compile (or read from CuPy's cache) and load the module now: a warm-up thread's share of what the
        first launch would pay (``stream/app/warm_up.py``)."""
        with self._lock:
            if self._module is None:
                module = xp.RawModule(code=self.source)
                module.compile()
                self._module = module          # published compiled (see _function)

    def launch_blocks(self, xp, name: str, grid: int, block: int, args: tuple, shared_mem: int = 0) -> None:
        """Run kernel ``name`` on exactly ``grid`` blocks of ``block`` threads (block-level kernels that
        synchronise their threads, such as one-block sorts), with ``shared_mem`` bytes of dynamic shared
        memory."""
        count_launch(name)
        if not hasattr(xp, "RawModule"):
            raise RuntimeError(f"the fused {self.what} kernels need CuPy (use fused=False on NumPy)")
        self._function(xp, name)((int(grid),), (int(block),), args, shared_mem=int(shared_mem))


def i64(x):
    """A kernel argument passed as a C ``long long``."""
    return np.int64(x)


def i32(x):
    """A kernel argument passed as a C ``int``."""
    return np.int32(x)
