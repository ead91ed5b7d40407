"""Serial host emulation of structures/graphvine_kernels.SOURCE (tests only).

The exact kernel source is compiled with g++ behind a small prelude that maps the
CUDA built-ins to host code and replaces the grid-stride loop by a loop over all
threads in a chosen order (forward, reverse, or a seeded shuffle).  Running the
threads in several orders is a cheap check that no result depends on which
thread of a launch runs first (each location has one writer), and the whole
fused path of GraphVine can then run on NumPy arrays: index arithmetic, the
prefix-sum pop, the compaction pairing, are all exercised without a GPU.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile

import numpy as np

from vinestream.structures import graphvine_kernels as gk
from vinestream.structures.backend import count_launch

PRELUDE = r"""
#include <cstdint>
#include <cstring>
static inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, sizeof f); return f; }
struct gv_dim { unsigned int x; };
static gv_dim blockIdx = {0}, threadIdx = {0}, blockDim = {1}, gridDim = {1};
#define __global__
#define __device__ static inline
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline unsigned long long atomicAdd(unsigned long long* a, unsigned long long v)
{ unsigned long long o = *a; *a += v; return o; }
static inline int atomicAdd(int* a, int v) { int o = *a; *a += v; return o; }
static inline unsigned int atomicAdd(unsigned int* a, unsigned int v) { unsigned int o = *a; *a += v; return o; }
// thread order: 0 forward, 1 reverse, 2 a multiplicative shuffle (seeded)
static int gv_order = 0;
static long long gv_seed = 1;
extern "C" void gv_set_order(int order, long long seed) { gv_order = order; gv_seed = seed | 1; }
static inline long long gv_thread(long long q, long long n)
{
    if (gv_order == 1) return n - 1 - q;
    if (gv_order == 2) {          // a rotation and a stride coprime with n: a permutation of [0, n)
        long long stride = 1;
        for (long long c = gv_seed % n; c > 1; --c) {
            long long a = c, b = n; while (b) { long long r = a % b; a = b; b = r; }
            if (a == 1) { stride = c; break; }
        }
        return (q * stride + gv_seed) % n;
    }
    return q;
}
#define GV_GRID_LOOP(t, n) \
    for (long long _q = 0, t = 0; _q < (n) && ((t = gv_thread(_q, (n))), 1); ++_q)
"""

_lib = None


def available() -> bool:
    return shutil.which("g++") is not None


def compile_library(source: str, name: str) -> ctypes.CDLL:
    """``source`` built as a host shared library with g++ (cached on disk by its hash), loaded."""
    tag = hashlib.sha1(source.encode()).hexdigest()[:12]
    d = os.path.join(tempfile.gettempdir(), f"{name}-emu-{os.getuid()}")
    os.makedirs(d, exist_ok=True)
    so = os.path.join(d, f"{name}-{tag}.so")
    if not os.path.exists(so):
        cpp = os.path.join(d, f"{name}-{tag}.cpp")
        with open(cpp, "w") as f:
            f.write(source)
        tmp = so + f".{os.getpid()}"
        subprocess.run(["g++", "-O1", "-shared", "-fPIC", "-x", "c++", cpp, "-o", tmp], check=True)
        os.replace(tmp, so)
    return ctypes.CDLL(so)


# The block built-ins of the one-block kernels (GraphVine's, and the shared block sort and scan of
# structures/block_primitives that resolve, the vertex map and COO include).  A one-block kernel runs as
# ONE thread (blockDim.x == 1: a block scan's warp shuffles and the barriers are trivial) whose block
# loops visit their items in the launcher's order.
BLOCK_BUILTINS = r"""
#define __shared__ static
#define __launch_bounds__(...)
static inline void __syncthreads() {}
static inline void __syncwarp(unsigned int = 0xffffffffu) {}
static inline long long __shfl_up_sync(unsigned int, long long x, unsigned int) { return x; }
"""

# GraphVine's own atomics (not in PRELUDE, which other kernel emulations extend with theirs).
GV_PRELUDE = r"""
#define GV_HOST_ATOMIC_MAX
// the emulation's checks inside the kernels: a shift tile's write into the slot of an entry whose tile it did not
// wait for (run serially, the tiles before it have all run: the write would land right here and race on a GPU)
#define GV_EMULATED
static long long gv_unwaited_writes = 0;
extern "C" long long gv_take_unwaited_writes() { long long n = gv_unwaited_writes; gv_unwaited_writes = 0; return n; }
static inline void gv_atomic_max(unsigned long long* a, unsigned long long v) { if (v > *a) *a = v; }
static inline unsigned int atomicCAS(unsigned int* a, unsigned int cmp, unsigned int v)
{ unsigned int o = *a; if (o == cmp) *a = v; return o; }
static inline long long atomicMin(long long* a, long long v) { long long o = *a; if (v < o) *a = v; return o; }
static inline int atomicMax(int* a, int v) { int o = *a; if (v > o) *a = v; return o; }
static inline int atomicMin(int* a, int v) { int o = *a; if (v < o) *a = v; return o; }
static inline unsigned int atomicExch(unsigned int* a, unsigned int v) { unsigned int o = *a; *a = v; return o; }
static inline void __threadfence() {}
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
// a warp of one lane (gv_scan's look-back: blockDim.x == 1 makes it one tile at a time)
static inline unsigned int __ballot_sync(unsigned int, bool p) { return p ? 1u : 0u; }
static inline int __ffs(unsigned int x) { return __builtin_ffs((int)x); }
static inline long long __shfl_down_sync(unsigned int, long long, unsigned int) { return 0; }
static inline long long __shfl_sync(unsigned int, long long x, int) { return x; }
static inline unsigned int __activemask() { return 1u; }
#define GV_BLOCK_LOOP(i, n) GV_GRID_LOOP(i, n)
""" + BLOCK_BUILTINS


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(PRELUDE + GV_PRELUDE + gk.SOURCE, "gv")
    return _lib


def _arg(a):
    if isinstance(a, np.ndarray):
        a = a.view(np.ndarray)
        assert a.flags.c_contiguous, "kernel arrays must be contiguous"
        return ctypes.c_void_p(a.ctypes.data)
    if isinstance(a, np.int64):
        return ctypes.c_longlong(int(a))
    if isinstance(a, np.int32):
        return ctypes.c_int(int(a))
    raise TypeError(f"kernel argument of type {type(a)}")


class OrderedLauncher:
    """A serial host run of one emulation library's kernels (``library``), threads in ``order`` (0 forward,
    1 reverse, 2 seeded shuffle); counts launches per kernel.  Each kernel module's emulation subclasses it
    with its own ``library`` (and its own launch shapes through :meth:`ordered`)."""

    library = staticmethod(lambda: _library())

    def __init__(self, order: int = 0, seed: int = 1):
        self.order, self.seed = order, seed
        self.launches: dict[str, int] = {}

    def ordered(self, name: str):
        """The library, set to this launcher's thread order, with the launch of ``name`` counted."""
        lib = self.library()
        lib.gv_set_order(ctypes.c_int(self.order), ctypes.c_longlong(self.seed))
        self.launches[name] = self.launches.get(name, 0) + 1
        return lib

    def __call__(self, xp, name, n, args):
        assert xp is np
        getattr(self.ordered(name), name)(*[_arg(a) for a in args])


class HostLauncher(OrderedLauncher):
    """Stands in for ``graphvine_kernels.launcher``: :class:`OrderedLauncher`, each launch also counted by
    the counting backend (as the real launcher counts it)."""

    def inserts_written(self) -> int:
        """Launches that wrote an insert's edges into the pool (the fused path ran): gv_insert_write (the
        one-sync path, the rows' side) or gv_insert_scatter (the key-side path of large batches)."""
        return self.launches.get("gv_insert_write", 0) + self.launches.get("gv_insert_scatter", 0)

    def __call__(self, xp, name, n, args):
        assert xp is np
        count_launch(name)
        super().__call__(xp, name, n, args)
        if name in gk.SHIFT_KERNELS:
            take = _library().gv_take_unwaited_writes
            take.restype = ctypes.c_longlong
            unwaited = take()
            assert unwaited == 0, f"{name}: {unwaited} writes into slots whose tiles were not waited for"

