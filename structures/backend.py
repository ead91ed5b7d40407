"""The array backend: one code base over NumPy (CPU) or CuPy (CUDA GPU).

Every structure and algorithm is written once against an array namespace
``xp`` and receives it explicitly (``structure.xp``) or derives it from its
inputs with :func:`array_module`.  Only this module imports CuPy.

Choosing the backend: ``--backend auto|cpu|gpu`` or the environment variable
``VINESTREAM_BACKEND``; ``auto`` (the default) takes CuPy when it imports and a
CUDA device answers, NumPy otherwise.  Asking for ``gpu`` where there is none
raises :class:`BackendError` with a one-line reason (the CLI prints it and
exits 2, no traceback).

Array helpers that must paper over NumPy/CuPy differences (scatter, repeat,
bincount) live in :mod:`structures.array_ops`; this module only picks ``xp``
and moves data between host and device.
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


def synchronize(xp: ModuleType) -> None:
    """Wait for queued device work (for honest phase timings); no-op on NumPy."""
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()


def free_device_cache(xp: ModuleType) -> None:
    """Return CuPy's cached but unused device blocks to the driver (after an out-of-memory)."""
    if xp is not np:
        xp.get_default_memory_pool().free_all_blocks()


def device_memory_bytes(xp: ModuleType | None) -> int:
    """Memory in use where the graph lives: CuPy's pool on a GPU, the process's resident set on the CPU."""
    if xp is not None and xp is not np:
        return int(xp.get_default_memory_pool().used_bytes())
    return resident_bytes()


def resident_bytes() -> int:
    """Current resident set size of this process (Linux /proc; 0 where unavailable)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def nbytes(*arrays) -> int:
    """Total bytes of the given arrays (None ignored)."""
    return int(sum(a.nbytes for a in arrays if a is not None))
