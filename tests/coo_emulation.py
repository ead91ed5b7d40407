"""Serial host emulation of structures/coo_kernels.SOURCE (tests only).

The exact kernel source is compiled with g++ behind the prelude of
:mod:`tests.graphvine_emulation` (CUDA built-ins as host code, the grid-stride loop as
a loop over all threads in a chosen order: forward, reverse or a seeded shuffle), so
COO's fused path runs on NumPy arrays in CI and its every launch is counted.
"""
from __future__ import annotations

from tests.graphvine_emulation import PRELUDE, available, compile_library  # noqa: F401 (available re-exported)
from tests.graphvine_emulation import HostLauncher as GraphVineHostLauncher
from vinestream.structures import coo_kernels as ck

_lib = None


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(PRELUDE + "#define COO_GRID_LOOP(t, n) GV_GRID_LOOP(t, n)\n" + ck.SOURCE, "coo")
    return _lib


class HostLauncher(GraphVineHostLauncher):
    """Stands in for ``coo_kernels.launcher``; counts launches per kernel (and for count_operations)."""

    library = staticmethod(lambda: _library())
