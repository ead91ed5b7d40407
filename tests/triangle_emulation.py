"""Serial host emulation of algorithms/triangle_kernels.SOURCE (tests only).

The exact kernel source is compiled with g++ behind the GraphVine emulation's
prelude (CUDA built-ins as host code, the grid-stride loop as a loop over all
threads in a chosen order) plus shared memory as a static and ``__syncthreads``
as nothing: the whole launch is one host "thread", so the block sum is the
launch sum.  ``HostLauncher`` stands in for ``triangle_kernels.launcher`` so the
fused path of the Triangles job runs on NumPy arrays.
"""
from __future__ import annotations

import ctypes

import numpy as np

from tests.graphvine_emulation import PRELUDE, _arg, available, compile_library
from vinestream.algorithms import triangle_kernels as tk

TRI_PRELUDE = PRELUDE + r"""
static inline unsigned int atomicAdd(unsigned int* a, unsigned int v) { unsigned int o = *a; *a += v; return o; }
#define TRI_GRID_LOOP GV_GRID_LOOP
#define __shared__ static
#define __syncthreads()
"""

_lib = None

__all__ = ["HostLauncher", "available"]


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(TRI_PRELUDE + tk.SOURCE, "tri")
    return _lib


class HostLauncher:
    """Runs a launch serially on the host, threads in ``order`` (0 forward, 1 reverse, 2 shuffled)."""

    def __init__(self, order: int = 0, seed: int = 1):
        self.order, self.seed = order, seed
        self.launches: dict[str, int] = {}
        self.items: dict[str, int] = {}

    def __call__(self, xp, name, n, args):
        assert xp is np
        for a in args:
            assert not isinstance(a, np.ndarray) or a.dtype.itemsize in (4, 8)
        lib = _library()
        lib.gv_set_order(ctypes.c_int(self.order), ctypes.c_longlong(self.seed))
        self.launches[name] = self.launches.get(name, 0) + 1
        self.items[name] = self.items.get(name, 0) + int(n)
        getattr(lib, name)(*[_arg(a) for a in args])
