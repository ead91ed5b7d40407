"""Serial host emulation of structures/coo_kernels.SOURCE (tests only).

The exact kernel source is compiled with g++ behind the prelude of
:mod:`tests.graphvine_emulation` (CUDA built-ins as host code, the grid-stride loop as
a loop over all threads in a chosen order: forward, reverse or a seeded shuffle), so
COO's fused path runs on NumPy arrays in CI and its every launch is counted.
"""
from __future__ import annotations

import ctypes

import numpy as np

from tests.graphvine_emulation import PRELUDE, available, compile_library  # noqa: F401 (available re-exported)
from vinestream.structures import coo_kernels as ck
from vinestream.structures.backend import count_launch

_lib = None


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(PRELUDE + "#define COO_GRID_LOOP(t, n) GV_GRID_LOOP(t, n)\n" + ck.SOURCE, "coo")
    return _lib


def _arg(a):
    if isinstance(a, np.ndarray):
        assert a.flags.c_contiguous, "kernel arrays must be contiguous"
        return ctypes.c_void_p(a.ctypes.data)
    if isinstance(a, np.int64):
        return ctypes.c_longlong(int(a))
    if isinstance(a, np.int32):
        return ctypes.c_int(int(a))
    raise TypeError(f"kernel argument of type {type(a)}")


class HostLauncher:
    """Stands in for ``coo_kernels.launcher``; counts launches per kernel (and for count_operations)."""

    def __init__(self, order: int = 0, seed: int = 1):
        self.order, self.seed = order, seed
        self.launches: dict[str, int] = {}

    def __call__(self, xp, name, n, args):
        assert xp is np
        count_launch(name)
        lib = _library()
        lib.gv_set_order(ctypes.c_int(self.order), ctypes.c_longlong(self.seed))
        self.launches[name] = self.launches.get(name, 0) + 1
        getattr(lib, name)(*[_arg(a) for a in args])
