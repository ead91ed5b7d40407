"""Host emulation of the small-batch kernels (``stream/batching/resolve_kernels.SOURCE``, tests only).

The exact kernel source is compiled with g++ behind the GraphVine emulation's
prelude (CUDA built-ins as host code) plus the block-level built-ins: a block
runs as ONE thread (``blockDim.x == 1``, so the scans' partial sums and the
barriers are trivial) whose ``RS_LOOP`` phases between barriers visit their
iterations in a chosen order (forward, reverse, or a seeded shuffle).  A phase
whose result depended on the order of its iterations (two writers of one
location, a read of another iteration's write) shows up as a difference between
orders.  A launch of ``grid`` blocks runs them one after another.
"""
from __future__ import annotations

import ctypes

import numpy as np

from tests.graphvine_emulation import BLOCK_BUILTINS, PRELUDE, OrderedLauncher, _arg, available, compile_library
from vinestream.stream.batching import resolve_kernels as rk

__all__ = ["HostLauncher", "available", "emulated"]

_BLOCK_PRELUDE = r"""
static inline long long atomicMax(long long* a, long long v) { long long o = *a; if (v > o) *a = v; return o; }
#define RS_LOOP(i, n) GV_GRID_LOOP(i, n)
// 16-pair sort tiles (2048 on the GPU), so that the test batches exercise both the shared-memory tiles
// and the stages whose stride passes a tile
#define rs_TILE 16
"""
_WRAPPER = r"""
extern "C" void rs_set_block(unsigned int b) { blockIdx.x = b; }
"""
_lib = None


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(PRELUDE + BLOCK_BUILTINS + _BLOCK_PRELUDE + rk.SOURCE + _WRAPPER, "resolve")
    return _lib


class HostLauncher(OrderedLauncher):
    """Stands in for ``resolve_kernels.launcher`` (block launches: ``grid`` blocks in turn); counts launches
    per kernel."""

    library = staticmethod(lambda: _library())

    def __call__(self, xp, name, grid, block, args):
        assert xp is np
        lib = self.ordered(name)
        converted = [_arg(a) for a in args]
        for b in range(int(grid)):
            lib.rs_set_block(ctypes.c_uint(b))
            getattr(lib, name)(*converted)


class emulated:
    """``with emulated(order, seed) as launcher:`` the small-batch kernels run on the host."""

    def __init__(self, order: int = 0, seed: int = 1):
        self.launcher = HostLauncher(order, seed)

    def __enter__(self) -> HostLauncher:
        self._saved, rk.launcher = rk.launcher, self.launcher
        return self.launcher

    def __exit__(self, *exc) -> None:
        rk.launcher = self._saved
