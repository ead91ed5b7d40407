"""Serial host emulation of algorithms/triangle_kernels.SOURCE (tests only).

The exact kernel source is compiled with g++ behind the GraphVine emulation's
prelude (CUDA built-ins as host code, the grid-stride loop as a loop over all
threads in a chosen order) plus shared memory as a static and ``__syncthreads``
as nothing: the whole launch is one host "thread", so the block sum is the
launch sum.  ``HostLauncher`` stands in for ``triangle_kernels.launcher`` so the
fused path of the Triangles job runs on NumPy arrays.
"""
from __future__ import annotations

import numpy as np

from tests.graphvine_emulation import PRELUDE, OrderedLauncher, available, compile_library
from vinestream.algorithms import triangle_kernels as tk

TRI_PRELUDE = PRELUDE + r"""
#define TRI_GRID_LOOP GV_GRID_LOOP
#define __shared__ static
#define __syncthreads()
// block-level kernels: the block is one thread and its warp one lane (TRI_WARP 1); a block-wide
// loop visits its iterations in the launch's order; dynamic shared memory is a static array
#define TRI_WARP 1
#define TRI_BLOCK_LOOP(i, n) GV_GRID_LOOP(i, (long long)(n))
#define TRI_DYNAMIC_SHARED(T, name) static T name[TRI_EMU_SHARED_BYTES / sizeof(T)]
#define TRI_EMU_SHARED_BYTES (1 << 18)
#define __syncwarp()
static inline int atomicCAS(int* a, int cmp, int val) { int o = *a; if (o == cmp) *a = val; return o; }
template <typename T> static inline T __shfl_sync(unsigned int, T x, int) { return x; }
template <typename T> static inline T __shfl_xor_sync(unsigned int, T x, int) { return x; }
template <typename T> static inline T __shfl_up_sync(unsigned int, T x, int) { return x; }
"""
SHARED_BYTES = 1 << 18

_lib = None

__all__ = ["HostLauncher", "available"]


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(TRI_PRELUDE + tk.SOURCE, "tri")
    return _lib


class HostLauncher(OrderedLauncher):
    """Runs a launch serially on the host, threads in ``order`` (0 forward, 1 reverse, 2 shuffled)."""

    library = staticmethod(lambda: _library())

    def __init__(self, order: int = 0, seed: int = 1):
        super().__init__(order, seed)
        self.items: dict[str, int] = {}

    def __call__(self, xp, name, n, args):
        for a in args:
            assert not isinstance(a, np.ndarray) or a.dtype.itemsize in (4, 8)
        self.items[name] = self.items.get(name, 0) + int(n)
        super().__call__(xp, name, n, args)

    def blocks(self, xp, name, grid, block, args, shared_mem=0):
        """A block-level launch: the kernels take their tasks from a counter, so one host "block"
        of one thread runs them all (``grid`` and ``block`` only have to be valid)."""
        assert grid >= 1 and block >= 32 and block % 32 == 0 and 0 <= shared_mem <= SHARED_BYTES
        self(xp, name, 1, args)
