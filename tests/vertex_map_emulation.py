"""Host emulation of the vertex map's kernels (``stream/batching/vertex_map_kernels.SOURCE``, tests only).

The exact source is compiled with g++ behind the GraphVine emulation's prelude (CUDA
built-ins as host code, a loop over all threads in a chosen order: forward, reverse or a
seeded shuffle) plus the block built-ins: a block runs as ONE thread (``blockDim.x == 1``,
so the scan's partial sums and the barriers are trivial) whose ``VM_LOOP`` phases visit
their iterations in the chosen order.  A result that depended on the order of a loop's
iterations shows up as a difference between orders.
"""
from __future__ import annotations

import numpy as np

from tests.graphvine_emulation import BLOCK_BUILTINS, PRELUDE, OrderedLauncher, _arg, available, compile_library
from vinestream.stream.batching import vertex_map_kernels as vk
from vinestream.structures.backend import count_launch

__all__ = ["HostLauncher", "available", "emulated"]

_BLOCK_PRELUDE = r"""
#define VM_LOOP(i, n) GV_GRID_LOOP(i, n)
#define VM_GRID_LOOP(t, n) GV_GRID_LOOP(t, n)
#define vm_TILE 16          // small sort tiles: the tests exercise tiles and cross-tile stages (see resolve's)
"""
_lib = None


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(PRELUDE + BLOCK_BUILTINS + _BLOCK_PRELUDE + vk.SOURCE, "vertex-map")
    return _lib


class HostLauncher(OrderedLauncher):
    """Stands in for both of ``vertex_map_kernels``' launchers; counts launches per kernel."""

    library = staticmethod(lambda: _library())

    def _run(self, name, args, grid=1):
        lib = self.ordered(name)
        converted = [_arg(a) for a in args]
        for _ in range(int(grid)):
            getattr(lib, name)(*converted)

    def grid(self, xp, name, n, args):
        """``launcher``: a grid-stride kernel over ``n`` items."""
        assert xp is np
        count_launch(name)
        self._run(name, args)

    def blocks(self, xp, name, grid, block, args):
        """``block_launcher``: a block kernel (one block here)."""
        assert xp is np and int(grid) == 1
        count_launch(name)
        self._run(name, args, grid)


class emulated:
    """``with emulated(order, seed) as launcher:`` the vertex map's kernels run on the host."""

    def __init__(self, order: int = 0, seed: int = 1):
        self.launcher = HostLauncher(order, seed)

    def __enter__(self) -> HostLauncher:
        self._saved = vk.launcher, vk.block_launcher
        vk.launcher, vk.block_launcher = self.launcher.grid, self.launcher.blocks
        return self.launcher

    def __exit__(self, *exc) -> None:
        vk.launcher, vk.block_launcher = self._saved
