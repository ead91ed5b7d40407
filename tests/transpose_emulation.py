"""Serial host emulation of algorithms/transpose_kernels.SOURCE (tests only).

The exact kernel source is compiled with g++ behind the GraphVine emulation's prelude (CUDA
built-ins as host code, the grid-stride loop as a loop over all threads in a chosen order:
forward, reverse or a seeded shuffle); a block kernel runs as one block of one thread whose
block loops (over a queue's rows, over a row's comparators) visit their items in that order,
shared memory is a static array and ``__syncthreads`` nothing.  ``HostLauncher`` and its
``blocks`` stand in for ``transpose_kernels.launcher`` / ``block_launcher``.
"""
from __future__ import annotations

from tests.graphvine_emulation import PRELUDE, OrderedLauncher, available, compile_library
from vinestream.algorithms import transpose_kernels as tk

SHARED_BYTES = 4 * tk.LARGE

TP_PRELUDE = PRELUDE + r"""
#define TP_GRID_LOOP GV_GRID_LOOP
#define TP_BLOCK_LOOP(i, n) GV_GRID_LOOP(i, (long long)(n))
#define TP_ROW_LOOP(q, n) GV_GRID_LOOP(q, (long long)(n))
#define TP_DYNAMIC_SHARED(T, name) static T name[TP_EMU_SHARED_BYTES / sizeof(T)]
#define TP_EMU_SHARED_BYTES """ + str(SHARED_BYTES) + r"""
#define __syncthreads()
"""

_lib = None

__all__ = ["HostLauncher", "available"]


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(TP_PRELUDE + tk.SOURCE, "transpose")
    return _lib


class HostLauncher(OrderedLauncher):
    """Runs a launch serially on the host, threads in ``order`` (0 forward, 1 reverse, 2 shuffled)."""

    library = staticmethod(lambda: _library())

    def blocks(self, xp, name, grid, block, args, shared_mem=0):
        """A block-level launch: the kernel loops over its queue, so one host block of one thread runs
        it all (``grid`` and ``block`` only have to be valid, the row has to fit the shared memory)."""
        assert grid >= 1 and block >= 32 and block % 32 == 0 and 0 <= shared_mem <= SHARED_BYTES
        self(xp, name, 1, args)
