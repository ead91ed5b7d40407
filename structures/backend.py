"""The array backend: one code base over NumPy (CPU) or CuPy (CUDA GPU).

Every structure and algorithm is written once against an array namespace
``xp`` and receives it explicitly (``structure.xp``) or derives it from its
inputs with :func:`array_module`.  Only this module imports CuPy.

Choosing the backend: ``--backend auto|cpu|gpu`` or the environment variable
``VINESTREAM_BACKEND``; ``auto`` (the default) takes CuPy when it imports and a
CUDA device answers, NumPy otherwise.  Asking for ``gpu`` where there is none
raises :class:`BackendError` with a one-line reason (the CLI prints it and
exits 2, no traceback).

A few scatter primitives differ between the two libraries (``np.add.at`` versus
``cupyx.scatter_add``); they are wrapped here so that structure code stays
backend-neutral.
"""
from __future__ import annotations

import os
from types import ModuleType

import numpy as np

BACKENDS = ("auto", "cpu", "gpu")
ENV_VAR = "VINESTREAM_BACKEND"


class BackendError(RuntimeError):
    """The requested backend cannot be used on this machine."""


def _import_cupy() -> ModuleType:
    """Import CuPy and check that a CUDA device answers; BackendError otherwise."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install raising anything
        raise BackendError(
            f"backend 'gpu' needs CuPy ({type(exc).__name__}: {exc}); "
            "install vinestream[cuda12] or vinestream[cuda13]") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise BackendError(f"backend 'gpu': no usable CUDA device ({exc})") from None
    if count < 1:
        raise BackendError("backend 'gpu': CuPy found no CUDA device")
    return cupy


def get_backend(name: str | None = None) -> ModuleType:
    """Return the array module for ``name`` (auto|cpu|gpu; None reads the env var)."""
    if name is None:
        name = os.environ.get(ENV_VAR, "auto") or "auto"
    name = name.strip().lower()
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}: choose one of {', '.join(BACKENDS)}")
    if name == "cpu":
        return np
    if name == "gpu":
        return _import_cupy()
    try:
        return _import_cupy()
    except BackendError:
        return np


def backend_name(xp: ModuleType) -> str:
    """'gpu' for CuPy, 'cpu' for NumPy."""
    return "cpu" if xp is np else "gpu"


def is_gpu(xp: ModuleType) -> bool:
    return xp is not np


def array_module(*arrays) -> ModuleType:
    """The namespace (numpy or cupy) that owns ``arrays`` (numpy when none is a CuPy array)."""
    for a in arrays:
        if a is not None and type(a).__module__.startswith("cupy"):
            import cupy
            return cupy
    return np


def to_numpy(a) -> np.ndarray:
    """Copy a device array to the host (no-op for NumPy arrays and None)."""
    if a is None or isinstance(a, np.ndarray):
        return a
    if hasattr(a, "get"):
        return a.get()
    return np.asarray(a)


def asarray(xp: ModuleType, a, dtype=None):
    """``a`` as an ``xp`` array (host <-> device copies as needed)."""
    if xp is np:
        return np.asarray(to_numpy(a), dtype=dtype)
    return xp.asarray(a, dtype=dtype)


def _ufunc_at(xp: ModuleType, name: str):
    """``xp.<name>.at`` (NumPy, CuPy >= 14), or None on an older CuPy."""
    return getattr(getattr(xp, name), "at", None)


def scatter_add(xp: ModuleType, target, index, values) -> None:
    """target[index] += values, accumulating repeated indices (in place)."""
    at = _ufunc_at(xp, "add")
    if at is not None:
        at(target, index, values)
    else:
        import cupyx
        cupyx.scatter_add(target, index, values)


_SIGN_BIT = np.uint64(1 << 63)


def _scatter_extreme(xp: ModuleType, ufunc: str, target, index, values) -> None:
    """target[index] = ufunc(target[index], values) on the device.

    CuPy's atomics have no signed 64-bit max/min: int64 is mapped to uint64 by
    flipping the sign bit, which keeps the order, and mapped back after.
    """
    at = _ufunc_at(xp, ufunc)
    if at is None:
        import cupyx
        at = getattr(cupyx, "scatter_max" if ufunc == "maximum" else "scatter_min")
    if target.dtype == np.int64:
        flipped = target.view(np.uint64) ^ _SIGN_BIT
        at(flipped, index, xp.asarray(values, dtype=np.int64).view(np.uint64) ^ _SIGN_BIT)
        target[...] = (flipped ^ _SIGN_BIT).view(np.int64)
    else:
        at(target, index, xp.asarray(values).astype(target.dtype, copy=False))


def scatter_max(xp: ModuleType, target, index, values) -> None:
    """target[index] = max(target[index], values), over repeated indices (in place)."""
    if xp is np:
        np.maximum.at(target, index, values)
    else:
        _scatter_extreme(xp, "maximum", target, index, values)


def scatter_min(xp: ModuleType, target, index, values) -> None:
    """target[index] = min(target[index], values), over repeated indices (in place)."""
    if xp is np:
        np.minimum.at(target, index, values)
    else:
        _scatter_extreme(xp, "minimum", target, index, values)


def repeat_index(xp: ModuleType, counts):
    """For each output slot of ``repeat(arange(len(counts)), counts)``, its segment index (int64).

    ``cupy.repeat`` only takes host-side counts, so on the device this is a
    prefix sum and a searchsorted over the segment ends.
    """
    counts = xp.asarray(counts, dtype=np.int64)
    if xp is np:
        return np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if ends.shape[0] else 0
    return xp.searchsorted(ends, xp.arange(total, dtype=np.int64), side="right")


def repeat(xp: ModuleType, values, counts):
    """``values[i]`` repeated ``counts[i]`` times (counts may live on the device)."""
    if xp is np:
        return np.repeat(values, counts)
    return values[repeat_index(xp, counts)]


def unique_inverse(xp: ModuleType, values):
    """(sorted distinct values, index of each input in them), from one argsort.

    Faster than ``unique(return_inverse=True)`` + ``searchsorted`` on both
    backends (NumPy 2's hash-based unique is slow on int64 ids).
    """
    n = int(values.shape[0])
    if n == 0:
        return values[:0], xp.zeros(0, dtype=np.int64)
    order = xp.argsort(values)          # equal values need no particular order here
    ordered = values[order]
    starts = xp.ones(n, dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    inverse = xp.empty(n, dtype=np.int64)
    inverse[order] = xp.cumsum(starts) - 1
    return ordered[starts], inverse


def bincount(xp: ModuleType, x, minlength: int = 0, weights=None):
    """``xp.bincount`` that also accepts an empty ``x`` (CuPy raises on it)."""
    if x.shape[0] == 0:
        dtype = np.int64 if weights is None else np.result_type(weights.dtype, np.float64)
        return xp.zeros(minlength, dtype=dtype)
    return xp.bincount(x, weights=weights, minlength=minlength)


def synchronize(xp: ModuleType) -> None:
    """Wait for queued device work (for honest phase timings); no-op on NumPy."""
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()


def free_device_cache(xp: ModuleType) -> None:
    """Return CuPy's cached but unused device blocks to the driver (after an out-of-memory)."""
    if xp is not np:
        xp.get_default_memory_pool().free_all_blocks()


def device_memory_bytes(xp: ModuleType) -> int:
    """Bytes the array library holds on the device (CuPy's memory pool); 0 on NumPy."""
    if xp is np:
        return 0
    return int(xp.get_default_memory_pool().used_bytes())


def nbytes(*arrays) -> int:
    """Total bytes of the given arrays (None ignored)."""
    return int(sum(a.nbytes for a in arrays if a is not None))
