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


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(PRELUDE + gk.SOURCE, "gv")
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


class HostLauncher:
    """Stands in for ``graphvine_kernels.launcher``; counts launches per kernel."""

    def __init__(self, order: int = 0, seed: int = 1):
        self.order, self.seed = order, seed
        self.launches: dict[str, int] = {}

    def __call__(self, xp, name, n, args):
        assert xp is np
        count_launch(name)
        lib = _library()
        lib.gv_set_order(ctypes.c_int(self.order), ctypes.c_longlong(self.seed))
        self.launches[name] = self.launches.get(name, 0) + 1
        _count("kernel")
        getattr(lib, name)(*[_arg(a) for a in args])


# ---------------------------------------------------------------------------------------------
# counting the device operations a call would issue on CuPy, on NumPy (until backend grows one)
# ---------------------------------------------------------------------------------------------
class OpCounts(dict):
    """Device operations by kind: ``ufunc`` (elementwise / reduction), ``function`` (cumsum, sort,
    searchsorted, where, concatenate, ...), ``gather`` / ``scatter`` (fancy indexing), ``astype``,
    ``create`` (zeros / full / arange / ...: a fill kernel on CuPy, ``empty`` included as an
    allocation), and ``kernel`` (fused launches, counted by :class:`HostLauncher`)."""

    sites = None          # "file:line" -> count, when tracing

    @property
    def total(self) -> int:
        return sum(self.values())


_OP_COUNTS: list[OpCounts] = []
_DEPTH = [0]
_CREATE = ("zeros", "empty", "full", "ones", "arange", "zeros_like", "empty_like", "full_like",
           "ones_like")


def _count(kind: str) -> None:
    if _DEPTH[0] == 0:
        for c in _OP_COUNTS:
            c[kind] = c.get(kind, 0) + 1
            if c.sites is not None:
                import sys
                f = sys._getframe(1)
                while f is not None and (f.f_code.co_filename == __file__
                                         or "/numpy/" in f.f_code.co_filename):
                    f = f.f_back
                if f is not None:
                    site = f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno}"
                    c.sites[site] = c.sites.get(site, 0) + 1


def _is_index_array(key) -> bool:
    if isinstance(key, np.ndarray):
        return key.ndim > 0
    if isinstance(key, tuple):
        return any(isinstance(k, np.ndarray) and k.ndim > 0 for k in key)
    return False


class OpArray(np.ndarray):
    """A NumPy array that counts what CuPy would launch for each operation on it."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _count("ufunc")
        _DEPTH[0] += 1
        try:
            args = [i.view(np.ndarray) if isinstance(i, OpArray) else i for i in inputs]
            if "out" in kwargs:
                kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, OpArray) else o
                                      for o in kwargs["out"])
            out = getattr(ufunc, method)(*args, **kwargs)
        finally:
            _DEPTH[0] -= 1
        return _as_op(out)

    def __array_function__(self, func, types, args, kwargs):
        _count("function")
        _DEPTH[0] += 1
        try:
            out = func._implementation(*_plain(args), **_plain(kwargs))
        finally:
            _DEPTH[0] -= 1
        return _as_op(out)

    def __getitem__(self, key):
        if _is_index_array(key):
            _count("gather")
        return _as_op(super().__getitem__(_plain(key)))

    def __setitem__(self, key, value):
        if _is_index_array(key) or isinstance(value, np.ndarray) or _DEPTH[0] == 0:
            _count("scatter" if _is_index_array(key) else "fill")
        super().__setitem__(_plain(key), _plain(value))

    def astype(self, *args, **kwargs):
        _count("astype")
        return _as_op(self.view(np.ndarray).astype(*args, **kwargs))

    def copy(self, *args, **kwargs):
        _count("copy")
        return _as_op(self.view(np.ndarray).copy(*args, **kwargs))


def _plain(x):
    if isinstance(x, OpArray):
        return x.view(np.ndarray)
    if isinstance(x, tuple):
        return tuple(_plain(i) for i in x)
    if isinstance(x, list):
        return [_plain(i) for i in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _as_op(x):
    if type(x) is np.ndarray:
        return x.view(OpArray)
    if isinstance(x, np.generic):
        return np.asarray(x).view(OpArray)
    if isinstance(x, tuple):
        return tuple(_as_op(i) for i in x)
    return x


def as_counted(g):
    """View every array attribute of structure ``g`` as an :class:`OpArray` (in place)."""
    for k, v in list(vars(g).items()):
        if type(v) is np.ndarray:
            setattr(g, k, v.view(OpArray))
    return g


class count_ops:
    """``with count_ops() as c:`` counts the device operations of NumPy code (see :class:`OpCounts`)
    on :class:`OpArray` inputs and on arrays created inside the block; a :class:`HostLauncher`
    active inside adds its launches as ``kernel``."""

    def __init__(self, trace: bool = False):
        self.trace = trace

    def __enter__(self):
        self.counts = OpCounts()
        if self.trace:
            self.counts.sites = {}
        if not _OP_COUNTS:
            self._saved = {n: getattr(np, n) for n in (*_CREATE, "asarray", "ascontiguousarray")}
            for n in _CREATE:
                np_fn = self._saved[n]

                def created(*a, _fn=np_fn, **k):
                    _count("create")
                    return _as_op(_fn(*_plain(a), **_plain(k)))
                setattr(np, n, created)
            for n in ("asarray", "ascontiguousarray"):
                np_fn = self._saved[n]

                def converted(a, *rest, _fn=np_fn, **k):
                    out = _fn(_plain(a), *rest, **k)
                    if isinstance(a, np.ndarray) and out is not a.view(np.ndarray) and \
                            not np.shares_memory(out, a):
                        _count("astype")               # a conversion copies on the device
                    return _as_op(out)
                setattr(np, n, converted)
        else:
            self._saved = None
        _OP_COUNTS.append(self.counts)
        return self.counts

    def __exit__(self, *exc):
        _OP_COUNTS.remove(self.counts)
        if self._saved is not None:
            for n, fn in self._saved.items():
                setattr(np, n, fn)
        return False
