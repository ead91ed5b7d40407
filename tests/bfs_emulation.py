"""Serial host emulation of algorithms/bfs_kernels.SOURCE (tests only).

The kernel source is compiled with g++ behind the GraphVine emulation's prelude
(CUDA built-ins as host code, the grid-stride loop as a loop over all threads in
a chosen order), shared memory as statics and ``__syncthreads`` as nothing, and
the warp intrinsics for a warp of one lane: a vote is the lane's own predicate,
a shuffle returns the lane's own value; the repair kernels' warp loops (``BFSR_WARP_LOOP``) become
grid loops over warps of one lane.  ``HostLauncher`` stands in for
``bfs_kernels.launcher`` so the whole direction-optimizing BFS runs on NumPy.
"""
from __future__ import annotations

from tests.graphvine_emulation import PRELUDE, OrderedLauncher, available, compile_library
from vinestream.algorithms import bfs_kernels as bk

BFS_PRELUDE = PRELUDE + r"""
#define BFS_GRID_LOOP GV_GRID_LOOP
#define BFS_LANE() 0
#define __shared__ static
#define __syncthreads()
static inline int atomicCAS(int* a, int expected, int desired)
{ int o = *a; if (o == expected) *a = desired; return o; }
static inline int atomicMin(int* a, int v) { int o = *a; if (v < o) *a = v; return o; }
static inline unsigned int __activemask() { return 1u; }
static inline unsigned int __ballot_sync(unsigned int, bool p) { return p ? 1u : 0u; }
static inline int __ffs(unsigned int x) { return __builtin_ffs((int)x); }
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline unsigned long long __shfl_sync(unsigned int, unsigned long long v, int) { return v; }
#define BFSR_WARP 1
#define BFSR_WARP_LOOP GV_GRID_LOOP
#define BFSR_BALLOT(p) ((p) ? 1u : 0u)
#define BFSR_SYNCWARP()
static inline int atomicOr(int* a, int v) { int o = *a; *a |= v; return o; }
static inline int atomicExch(int* a, int v) { int o = *a; *a = v; return o; }
static inline unsigned long long atomicMin(unsigned long long* a, unsigned long long v)
{ unsigned long long o = *a; if (v < o) *a = v; return o; }
"""

_lib = None

__all__ = ["HostLauncher", "available"]


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(BFS_PRELUDE + bk.SOURCE, "bfs")
    return _lib


class HostLauncher(OrderedLauncher):
    """Runs a launch serially on the host, threads in ``order`` (0 forward, 1 reverse, 2 shuffled)."""

    library = staticmethod(lambda: _library())
