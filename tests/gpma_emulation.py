"""Serial host emulation of structures/gpma_kernels.SOURCE (tests only).

The GraphVine emulation's prelude (CUDA built-ins mapped to host code, the grid-stride
loop replaced by a loop over all threads in a chosen order) in front of the GPMA
kernel source, built with g++; the fused path of GPMA then runs on NumPy arrays.
"""
from __future__ import annotations

from tests.graphvine_emulation import PRELUDE, OrderedLauncher, _arg, available, compile_library  # noqa: F401
from vinestream.structures import gpma_kernels as pk

_lib = None


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(PRELUDE + pk.SOURCE, "gpma")
    return _lib


class HostLauncher(OrderedLauncher):
    """Stands in for ``gpma_kernels.launcher``; threads run in ``order`` (0 forward, 1 reverse, 2 shuffled)."""

    library = staticmethod(lambda: _library())
