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
import time
from contextlib import contextmanager
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
    if isinstance(a, CountedArray):
        _transfer("to_numpy")
        return a.view(np.ndarray)
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


# -- counting device -> host transfers (the host-sync budget) ---------------------------------
class TransferCounter:
    """Device -> host transfers seen while :func:`count_transfers` is active, by kind.

    ``count`` is the total; ``kinds`` maps a kind (``int``, ``float``, ``bool``, ``index``,
    ``item``, ``tolist``, ``to_numpy``, ``mask``, ``nonzero``, ``repeat``) to its count.  ``mark()`` and
    ``since(mark)`` measure one stretch of code.
    """

    def __init__(self, trace: bool = False):
        self.count = 0
        self.kinds: dict[str, int] = {}
        self.trace = trace
        self.sites: dict[str, int] = {}       # "file:line" of the caller -> count (when tracing)

    def add(self, kind: str) -> None:
        self.count += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if self.trace:
            import sys
            frame = sys._getframe(2)
            while frame is not None and ("numpy" in frame.f_code.co_filename
                                         or frame.f_code.co_filename == __file__):
                frame = frame.f_back
            if frame is not None:
                site = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
                self.sites[site] = self.sites.get(site, 0) + 1

    def mark(self) -> int:
        return self.count

    def since(self, mark: int) -> int:
        return self.count - mark


_COUNTERS: list[TransferCounter] = []


def _transfer(kind: str) -> None:
    """Count one transfer, unless NumPy itself is the caller (its internals are one call of ours)."""
    import sys
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is not None and frame.f_globals.get("__name__", "").startswith("numpy"):
        return
    for counter in _COUNTERS:
        counter.add(kind)


class CountedArray(np.ndarray):
    """A NumPy array that reports every operation which, on a GPU, is a device -> host transfer.

    The same call sites that make CuPy copy to the host (``int()``, ``float()``, ``bool()``
    and ``__index__`` of a 0-d array, ``.item()``, ``.tolist()``, :func:`to_numpy`, a
    boolean-mask index, ``nonzero`` and ``repeat`` with an array of repeats, which must learn
    their result size) are counted here,
    so the sync-budget tests run in CI on NumPy.  Scalars a NumPy operation would return are
    kept as 0-d arrays, as CuPy keeps them on the device.
    """

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        out = np.asarray(arr).view(CountedArray)
        return out

    def __getitem__(self, key):
        if isinstance(key, np.ndarray) and key.dtype == np.bool_:
            _transfer("mask")
        elif isinstance(key, tuple) and any(isinstance(k, np.ndarray) and k.dtype == np.bool_ for k in key):
            _transfer("mask")
        out = super().__getitem__(key)
        if isinstance(out, np.generic):
            return np.asarray(out).view(CountedArray)
        return out

    def __int__(self):
        _transfer("int")
        return int(self.view(np.ndarray)[()]) if self.ndim == 0 else int(self.view(np.ndarray))

    def __float__(self):
        _transfer("float")
        return float(self.view(np.ndarray))

    def __bool__(self):
        _transfer("bool")
        return bool(self.view(np.ndarray))

    def __index__(self):
        _transfer("index")
        return self.view(np.ndarray).__index__()

    def item(self, *args):
        _transfer("item")
        return self.view(np.ndarray).item(*args)

    def tolist(self):
        _transfer("tolist")
        return self.view(np.ndarray).tolist()

    def nonzero(self):
        _transfer("nonzero")
        return tuple(a.view(CountedArray) for a in self.view(np.ndarray).nonzero())


# NumPy functions that create or combine arrays: their results become CountedArray while counting.
_WRAPPED = ("zeros", "empty", "full", "ones", "arange", "asarray", "array", "concatenate", "stack",
            "where", "searchsorted", "cumsum", "diff", "sort", "argsort", "bincount",
            "lexsort", "zeros_like", "empty_like", "full_like", "ones_like", "ascontiguousarray")
_COUNTED = {"nonzero": "nonzero", "flatnonzero": "nonzero", "argwhere": "nonzero", "unique": "nonzero",
            "count_nonzero": None}


def _wrap_result(out):
    if type(out) is np.ndarray:
        return out.view(CountedArray)
    if isinstance(out, tuple):
        return tuple(_wrap_result(o) for o in out)
    if isinstance(out, np.generic):
        return np.asarray(out).view(CountedArray)
    return out


def _wrapping(fn, kind=None):
    def wrapped(*args, **kwargs):
        if kind:
            _transfer(kind)
        return _wrap_result(fn(*args, **kwargs))
    wrapped.__wrapped__ = fn
    return wrapped


def _counted_repeat(fn):
    """``repeat`` with an array of repeats: the output size is their sum, which a GPU must read back
    (``array_ops.repeat`` does one transfer there), so it counts as one; a scalar repeat does not."""
    def wrapped(a, repeats, *args, **kwargs):
        if np.ndim(repeats) > 0:
            _transfer("repeat")
        return _wrap_result(fn(a, repeats, *args, **kwargs))
    wrapped.__wrapped__ = fn
    return wrapped


@contextmanager
def count_transfers(trace: bool = False):
    """Count device -> host transfers on NumPy (see :class:`CountedArray`); yields a TransferCounter.

    While active, NumPy's array-creating functions return :class:`CountedArray`, so
    arrays built inside the block (a pipeline, its structure and jobs, their batches)
    report the operations that would synchronise a GPU.  Nested counters all count.
    """
    counter = TransferCounter(trace)
    first = not _COUNTERS
    saved = {}
    if first:
        for name in _WRAPPED:
            saved[name] = getattr(np, name)
            setattr(np, name, _wrapping(saved[name]))
        for name, kind in _COUNTED.items():
            saved[name] = getattr(np, name)
            setattr(np, name, _wrapping(saved[name], kind))
        saved["repeat"] = np.repeat
        np.repeat = _counted_repeat(saved["repeat"])
    _COUNTERS.append(counter)
    try:
        yield counter
    finally:
        _COUNTERS.remove(counter)
        if first:
            for name, fn in saved.items():
                setattr(np, name, fn)


# -- phase timing without host syncs ---------------------------------------------------------
class PhaseSeconds(dict):
    """Seconds per phase.  On a GPU a phase is a pair of CUDA events recorded on the stream, and
    their elapsed times are read (one wait on the last event) only when someone reads the dict;
    on the CPU the phases are ``perf_counter`` differences, stored at once."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._pending: list = []

    def _resolve(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        pending[-1][2].synchronize()
        import cupy
        for phase, start, end in pending:
            dict.__setitem__(self, phase, dict.get(self, phase, 0.0) + cupy.cuda.get_elapsed_time(start, end) / 1e3)

    def add_events(self, phase: str, start, end) -> None:
        self._pending.append((phase, start, end))

    def absorb(self, other: PhaseSeconds) -> None:
        """Add ``other``'s phases (pending ones stay pending)."""
        for phase, sec in dict.items(other):
            dict.__setitem__(self, phase, dict.get(self, phase, 0.0) + sec)
        self._pending.extend(getattr(other, "_pending", []))

    def __getitem__(self, key):
        self._resolve()
        return dict.__getitem__(self, key)

    def __iter__(self):
        self._resolve()
        return dict.__iter__(self)

    def __len__(self):
        self._resolve()
        return dict.__len__(self)

    def __contains__(self, key):
        self._resolve()
        return dict.__contains__(self, key)

    def __eq__(self, other):
        self._resolve()
        return dict.__eq__(self, other)

    __hash__ = None

    def __repr__(self):
        self._resolve()
        return dict.__repr__(self)

    def get(self, key, default=None):
        self._resolve()
        return dict.get(self, key, default)

    def items(self):
        self._resolve()
        return dict.items(self)

    def keys(self):
        self._resolve()
        return dict.keys(self)

    def values(self):
        self._resolve()
        return dict.values(self)

    def copy(self):
        self._resolve()
        return dict(self)


@contextmanager
def phase_timer(xp: ModuleType, seconds: PhaseSeconds, phase: str):
    """Time the block into ``seconds[phase]`` (added): CUDA events on a GPU (no host sync), perf_counter on the CPU."""
    if xp is np or not isinstance(seconds, PhaseSeconds):
        if xp is not np:
            synchronize(xp)
        start = time.perf_counter()
        yield
        if xp is not np:
            synchronize(xp)
        dict.__setitem__(seconds, phase, dict.get(seconds, phase, 0.0) + time.perf_counter() - start)
        return
    start, end = xp.cuda.Event(), xp.cuda.Event()
    start.record()
    yield
    end.record()
    seconds.add_events(phase, start, end)
