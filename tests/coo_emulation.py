"""Serial host emulation of structures/coo_kernels.SOURCE (tests only).

The exact kernel source is compiled with g++ behind the prelude of
:mod:`tests.graphvine_emulation` (CUDA built-ins as host code, the grid-stride loop as
a loop over all threads in a chosen order: forward, reverse or a seeded shuffle), so
COO's fused path runs on NumPy arrays in CI and its every launch is counted.
"""
from __future__ import annotations

from contextlib import contextmanager

from tests.graphvine_emulation import BLOCK_BUILTINS, PRELUDE, available, compile_library  # noqa: F401 (available re-exported)
from tests.graphvine_emulation import HostLauncher as GraphVineHostLauncher
from vinestream.structures import coo_kernels as ck

# a one-block kernel runs as ONE thread (blockDim.x == 1) whose block loops visit their iterations in
# the chosen order; barriers are trivial, shared memory is static
_BLOCK_PRELUDE = r"""
#define COO_GRID_LOOP(t, n) GV_GRID_LOOP(t, n)
#define COO_BLOCK_LOOP(t, n) GV_GRID_LOOP(t, n)
"""
_lib = None


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(PRELUDE + BLOCK_BUILTINS + _BLOCK_PRELUDE + ck.SOURCE, "coo")
    return _lib


class HostLauncher(GraphVineHostLauncher):
    """Stands in for ``coo_kernels.launcher``; counts launches per kernel (and for count_operations)."""

    library = staticmethod(lambda: _library())

    def blocks(self, xp, name, grid, block, args):
        """Stands in for ``coo_kernels.block_launcher`` (one block here)."""
        assert int(grid) == 1
        self(xp, name, 1, args)


@contextmanager
def emulated(order: int = 0, seed: int = 1):
    """Both COO launchers replaced by one :class:`HostLauncher` (yielded) inside the block."""
    launcher = HostLauncher(order, seed)
    saved = ck.launcher, ck.block_launcher
    ck.launcher, ck.block_launcher = launcher, launcher.blocks
    try:
        yield launcher
    finally:
        ck.launcher, ck.block_launcher = saved
