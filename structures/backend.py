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

import atexit
import ctypes
import os
import threading
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
    defer_cupyx_extras()          # before CuPy's first elementwise operation imports cupyx
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


def _requested(name: str | None) -> str:
    """The backend asked for, normalised: ``name``, or the env var when None (default auto)."""
    if name is None:
        name = os.environ.get(ENV_VAR, "auto") or "auto"
    return name.strip().lower()


def get_backend(name: str | None = None) -> ModuleType:
    """Return the array module for ``name`` (auto|cpu|gpu; None reads the env var)."""
    from_env = name is None and bool(os.environ.get(ENV_VAR))
    name = _requested(name)
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}{f' (from ${ENV_VAR})' if from_env else ''}: choose one of "
                           f"{', '.join(BACKENDS)}")
    if name == "cpu":
        return np
    if name == "gpu":
        return _import_cupy()
    try:
        return _import_cupy()
    except BackendError:
        return np


#: the CUDA libraries a GPU run loads at its first kernel (NVRTC: CuPy asks it for the GPU's architecture even for
#: a kernel in its cache) and its first PageRank (cuBLAS, through ``cupy.dot``), by the names CuPy finds them by
EARLY_LIBRARIES = ("nvrtc", "cublas")
#: how long a process's exit waits for :func:`start_primary_context`'s thread
EXIT_WAIT_SECONDS = 30.0


def start_primary_context(name: str | None = None) -> threading.Thread | None:
    """Make the CUDA primary context of device 0 (the device a command line run uses) on a thread, through the
    driver API, then load the EARLY_LIBRARIES there, and return the thread; None where the backend is ``cpu`` or
    ``$VINESTREAM_EARLY_CONTEXT`` is 0.

    A fresh process otherwise makes the context at its first device allocation, after ``import cupy``: 0.15-0.3 s
    on an H200 (bench-results/2026-11-26-session12/call9) spent one after the other; and it loads NVRTC at its first
    kernel (a ``dlopen`` of 0.14 s on an H100, inside the run's window: bench-results/2026-11-26-session14/call7)
    and cuBLAS at the first PageRank (0.02-0.03 s).  ctypes releases the GIL during the driver's calls and a
    ``dlopen``, so here they happen while the interpreter imports CuPy; CuPy's runtime then finds the primary
    context made and takes it, and ``cuda.pathfinder``, which CuPy loads the libraries through, hands back the
    ones loaded here (it keeps what it loaded).  Errors (no driver, no device, no library) are left for the
    backend's own checks to meet and report."""
    if _requested(name) == "cpu" or os.environ.get("VINESTREAM_EARLY_CONTEXT", "1") == "0":
        return None

    def make() -> None:
        try:
            driver = ctypes.CDLL("libcuda.so.1")
            device, context = ctypes.c_int(), ctypes.c_void_p()
            if driver.cuInit(0) == 0 and driver.cuDeviceGet(ctypes.byref(device), 0) == 0:
                driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)      # kept for the process
        except (OSError, AttributeError):      # no driver library here: the backend says so if it matters
            return
        try:
            from cuda.pathfinder import load_nvidia_dynamic_lib
            for library in EARLY_LIBRARIES:
                load_nvidia_dynamic_lib(library)
        except Exception:                      # no finder or no library: CuPy meets it again where it matters
            pass

    return start_exit_waited(make, "vinestream-cuda-context")


def start_exit_waited(target, name: str) -> threading.Thread:
    """Run ``target`` on a daemon thread ``name`` that the process's exit waits for, at most EXIT_WAIT_SECONDS.

    A process that ended while such a thread was inside native code (the driver, a ``dlopen``, NVRTC) aborted at
    interpreter exit ("malloc(): invalid size" after a usage error found in the first tenth of a second; "FATAL:
    exception not rethrown" at Ctrl-C: exit -6, on an H100); bounded, since a driver that hangs must not hang the
    exit too."""
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    atexit.register(thread.join, EXIT_WAIT_SECONDS)
    return thread


#: NumPy's submodules that SciPy's array-API layer imports and no run uses (see :func:`defer_numpy_extras`).  Not
#: ``numpy.ma``: pyarrow reads ``numpy.ma.MaskedArray`` whenever it builds an array, from the results writer's thread
#: and the main one at once, and Python 3.11's LazyLoader is not thread-safe: a resumed replay failed with "module
#: 'numpy.ma' has no attribute 'MaskedArray'" where pandas (which imports it) was not loaded first
NUMPY_EXTRAS = ("numpy.f2py", "numpy.testing")
#: CuPy's subpackage that ``import cupyx`` runs and no run uses: ``cupyx.linalg.sparse`` imports
#: ``cupyx.scipy.sparse`` and with it SciPy (see :func:`defer_cupyx_extras`)
CUPYX_EXTRAS = ("cupyx.linalg",)


def defer_numpy_extras(names=NUMPY_EXTRAS) -> list[str]:
    """Make NumPy's submodules ``names`` load at their first use instead of at SciPy's import; return the
    names deferred (none where ``$VINESTREAM_LAZY_IMPORTS`` is 0, and none already imported).

    SciPy's array-API layer (``scipy._lib._array_api``, which ``scipy.sparse`` imports) does
    ``from numpy import *``, and NumPy 2 lists its submodules in ``__all__``, so that line imports
    ``numpy.f2py`` and ``numpy.testing`` (and ``numpy.ma``) although nothing then uses them.  A GPU run
    imported SciPy at its first elementwise operation (CuPy imports ``cupyx`` then, and ``cupyx`` imported
    ``scipy.sparse``: see :func:`defer_cupyx_extras`, which now keeps it out), inside the replay's window and
    holding the GIL; those three were 0.17-0.3 s of its 0.28-0.48 s there (bench-results/
    2026-11-26-session12/call1/importtime.txt).  Each is registered as an
    :class:`importlib.util.LazyLoader` module, and set as NumPy's attribute so that ``numpy.__getattr__`` is not
    asked: the star import binds it without running it, and its first attribute access runs it as an import
    would.  That first access must not come from two threads at once (Python 3.11's LazyLoader is not
    thread-safe), which is why ``numpy.ma``, read by pyarrow on every thread that builds an array, is no longer
    among :data:`NUMPY_EXTRAS`."""
    if os.environ.get("VINESTREAM_LAZY_IMPORTS", "1") == "0":
        return []
    import importlib.util
    import sys
    deferred = []
    for name in names:
        parent, _, child = name.rpartition(".")
        if name in sys.modules or parent not in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            continue
        spec.loader = importlib.util.LazyLoader(spec.loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)                  # lazy: runs the module at its first attribute access
        setattr(sys.modules[parent], child, module)
        deferred.append(name)
    return deferred


def defer_cupyx_extras(names=CUPYX_EXTRAS) -> list[str]:
    """Make ``cupyx.linalg`` run at its first use instead of at ``import cupyx``; return the names deferred
    (none where ``$VINESTREAM_LAZY_IMPORTS`` is 0, where ``cupyx`` is imported already or is not installed).

    CuPy imports ``cupyx`` at a process's first elementwise operation, and ``cupyx/__init__`` runs
    ``from cupyx import linalg``, whose ``sparse`` part imports ``cupyx.scipy.sparse`` and SciPy: 190 of the
    210 ms that the replay's warm-up thread spent importing ``cupyx``, holding the GIL in the run's window
    while the pipeline was built and its first batches applied (H100, bench-results/2026-11-26-session18/
    call1/sample-coo.txt).  No run uses ``cupyx.linalg``; what uses ``cupyx.scipy.sparse`` (the library
    transposes and SpMV of large graphs) imports it itself.

    A LazyLoader module (as :func:`defer_numpy_extras` makes) does not do here: the package's
    ``from cupyx import linalg`` reads the module's ``__spec__``, which runs it.  So the module is made from its
    spec without running it (its ``__spec__``, ``__path__`` and ``__file__`` set, so that its submodules import as
    before) and put in ``sys.modules`` before ``cupyx`` is imported; a module ``__getattr__`` (PEP 562) runs its
    code, once and under a lock, at the first attribute it lacks."""
    if os.environ.get("VINESTREAM_LAZY_IMPORTS", "1") == "0":
        return []
    import importlib.machinery
    import importlib.util
    import sys
    deferred = []
    for name in names:
        parent = name.rpartition(".")[0]
        if name in sys.modules or parent in sys.modules:         # an imported package has run it already
            continue
        try:
            package = importlib.util.find_spec(parent)             # a top-level package: found, not imported
            if package is None or package.submodule_search_locations is None:
                continue
            spec = importlib.machinery.PathFinder.find_spec(name, package.submodule_search_locations)
        except (ImportError, ValueError):
            continue
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        module.__getattr__ = _run_on_first_use(module, spec)
        sys.modules[name] = module
        deferred.append(name)
    return deferred


def _run_on_first_use(module, spec):
    """A module ``__getattr__`` that runs ``module``'s code (its ``spec``'s loader) at the first attribute it
    lacks, once, then answers from it.  Other threads wait for the run; the module's own code, on the running
    thread, finds what it has not defined yet missing (so ``from pkg.mod import sub`` imports the submodule)."""
    lock = threading.RLock()
    state = {"running": False, "done": False}

    def __getattr__(attr):
        with lock:
            if state["running"]:                 # the module's own code, re-entering on this thread
                raise AttributeError(attr)
            if not state["done"]:
                state["running"] = True
                try:
                    spec.loader.exec_module(module)
                finally:
                    state["running"] = False
                state["done"] = True
                if module.__dict__.get("__getattr__") is __getattr__:
                    del module.__getattr__
        return getattr(module, attr)
    return __getattr__


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


def _on_device(arrays) -> list[int]:
    """The indices of the device (CuPy) arrays among ``arrays``: not None, not NumPy."""
    return [i for i, a in enumerate(arrays) if a is not None and not isinstance(a, np.ndarray) and hasattr(a, "get")]


def _packed_starts(sizes) -> np.ndarray:
    """Byte offsets of parts of ``sizes`` bytes packed one after another, each at a multiple of 8 bytes (so that
    the host views are aligned for any dtype); the last entry is the packed length."""
    return np.concatenate([[0], np.cumsum([-(-int(n) // 8) * 8 for n in sizes])]).astype(np.int64)


def to_numpy_all(arrays) -> list:
    """Copy several arrays to the host in one device -> host transfer (one sync instead of one per
    array): the device arrays are packed as bytes into one buffer, copied, and split back.  Host arrays
    and None pass through."""
    arrays = list(arrays)
    counted = [isinstance(a, CountedArray) for a in arrays]
    if any(counted):                       # the counting backend: one transfer, as on a device
        _transfer("to_numpy")
        return [a.view(np.ndarray) if c else to_numpy(a) for a, c in zip(arrays, counted)]
    on_device = _on_device(arrays)
    if len(on_device) < 2:
        return [to_numpy(a) for a in arrays]
    out = list(arrays)
    xp = array_module(arrays[on_device[0]])
    parts = [xp.ascontiguousarray(arrays[i]).reshape(-1) for i in on_device]
    sizes = [p.nbytes for p in parts]
    starts = _packed_starts(sizes)
    packed = xp.empty(int(starts[-1]), dtype=np.uint8)
    for p, at, n in zip(parts, starts, sizes):
        if n:
            packed[at:at + n] = p.view(np.uint8)
    host = packed.get()
    for i, p, at, n in zip(on_device, parts, starts, sizes):
        out[i] = host[at:at + n].view(p.dtype).reshape(arrays[i].shape)
    return out


def as_contiguous(xp: ModuleType, a, dtype=None):
    """``a`` as a C-contiguous ``xp`` array of ``dtype`` (default: its own): ``a`` itself when it already
    is one.  CuPy's ``asarray`` and ``ascontiguousarray`` cost microseconds of host time even when they
    return their argument, which a small batch's dozens of them turn into a visible share of its time."""
    if isinstance(a, xp.ndarray) and (dtype is None or a.dtype == dtype) and a.flags.c_contiguous:
        return a
    return xp.ascontiguousarray(xp.asarray(a, dtype=dtype))


def asarray(xp: ModuleType, a, dtype=None):
    """``a`` as an ``xp`` array (host <-> device copies as needed)."""
    if xp is np:
        return np.asarray(to_numpy(a), dtype=dtype)
    return xp.asarray(a, dtype=dtype)


def pinned_empty(xp: ModuleType, n: int, dtype) -> np.ndarray:
    """A NumPy array of ``n`` items in page-locked host memory, the target of asynchronous device -> host
    copies (what ``cupyx.empty_pinned`` gives, from CuPy's pinned memory pool); ordinary memory on NumPy.

    (Session 11 wrote this to keep ``cupyx``, whose first use imports SciPy, off the first batch's path;
    CuPy itself imports ``cupyx`` at a process's first elementwise operation (bench-results/
    2026-11-26-session12/call12); SciPy no longer comes with it, :func:`defer_cupyx_extras`.)"""
    dtype = np.dtype(dtype)
    if xp is np:
        return np.empty(int(n), dtype=dtype)
    memory = xp.cuda.alloc_pinned_memory(max(int(n) * dtype.itemsize, 1))
    return np.ndarray((int(n),), dtype=dtype, buffer=memory)     # the array keeps the memory alive


_MULTIPROCESSORS: dict = {}


def multiprocessors(xp: ModuleType) -> int:
    """The current device's multiprocessor count, asked once per device (``Device.attributes`` queries
    every attribute: a fraction of a millisecond of host time a call); 1 on NumPy (the host emulations
    run one block)."""
    if xp is np:
        return 1
    dev = xp.cuda.Device()
    sms = _MULTIPROCESSORS.get(dev.id)
    if sms is None:
        sms = _MULTIPROCESSORS[dev.id] = int(dev.attributes["MultiProcessorCount"])
    return sms


class HostCopy:
    """Device arrays on their way to the host (:func:`to_numpy_async`); :meth:`result` waits for them."""

    def __init__(self, arrays: list, event=None, counted: bool = False):
        self._arrays, self._event, self._counted = arrays, event, counted

    def result(self) -> list:
        """The host arrays (NumPy), once the copies are done (a wait on the copies' event, GIL released)."""
        if self._event is not None:
            self._event.synchronize()
            self._event = None
        if self._counted:
            _transfer("to_numpy")
            self._counted = False
        return self._arrays


def to_numpy_async(arrays) -> HostCopy:
    """Copy 1-D arrays to the host without waiting: on a GPU each into one page-locked buffer (a ``cudaMemcpyAsync``
    each on the current stream, one event after them), so that what the stream runs next cannot change them and
    the host waits only when it reads them (:meth:`HostCopy.result`, from any thread); on NumPy copies made now
    (the arrays may change in place afterwards).  None passes through."""
    arrays = list(arrays)
    on_device = _on_device(arrays)
    if not on_device:
        counted = any(isinstance(a, CountedArray) for a in arrays)
        return HostCopy([None if a is None else np.array(a.view(np.ndarray) if isinstance(a, CountedArray) else a)
                         for a in arrays], counted=counted)
    import cupy
    out = list(arrays)
    sizes = [int(arrays[i].nbytes) for i in on_device]
    starts = _packed_starts(sizes)
    host = pinned_empty(cupy, int(starts[-1]), np.uint8)
    stream = cupy.cuda.get_current_stream()
    for i, at, n in zip(on_device, starts, sizes):
        a = cupy.ascontiguousarray(arrays[i])
        if n:
            a.data.copy_to_host_async(ctypes.c_void_p(host.ctypes.data + int(at)), n, stream)
        out[i] = host[at:at + n].view(a.dtype).reshape(a.shape)
    event = cupy.cuda.Event()
    event.record(stream)
    return HostCopy(out, event)


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
    """Count one transfer (or, for a kind of :data:`_SYNCING`, one wait for the device without a copy), unless
    NumPy itself is the caller (its internals are one call of ours)."""
    import sys
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is not None and frame.f_globals.get("__name__", "").startswith("numpy"):
        return
    for counter in _COUNTERS:
        counter.add(kind)
    if kind not in _SYNCING.values():
        _operation(f"read:{kind}", nested_too=True)   # a device -> host copy is an operation too


class CountedArray(np.ndarray):
    """A NumPy array that reports every operation which, on a GPU, is a device -> host transfer.

    The same call sites that make CuPy copy to the host (``int()``, ``float()``, ``bool()``
    and ``__index__`` of a 0-d array, ``.item()``, ``.tolist()``, :func:`to_numpy`, a
    boolean-mask index, ``nonzero`` and ``repeat`` with an array of repeats, which must learn
    their result size) are counted here, and so are the sorts, which copy nothing but wait for the
    device (CuPy's are thrust's, whose policy synchronises the stream after each sort),
    so the sync-budget tests run in CI on NumPy.  Scalars a NumPy operation would return are
    kept as 0-d arrays, as CuPy keeps them on the device.
    """

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        with _nested():
            return np.asarray(arr).view(CountedArray)

    def __getitem__(self, key):
        if isinstance(key, np.ndarray) and key.dtype == np.bool_:
            _transfer("mask")
        elif isinstance(key, tuple) and any(isinstance(k, np.ndarray) and k.dtype == np.bool_ for k in key):
            _transfer("mask")
        if _is_advanced(key):
            _operation("gather")
        with _nested():
            out = super().__getitem__(key)
            if isinstance(out, np.generic):
                return np.asarray(out).view(CountedArray)
            return out

    def __setitem__(self, key, value):
        _operation("scatter" if _is_advanced(key) else "fill")
        with _nested():
            super().__setitem__(key, value)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """Every ufunc call (``a + b``, ``xp.minimum``, ``add.at``, a ``sum``'s reduce) is one kernel."""
        _operation(ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}")
        outs = kwargs.get("out")
        kwargs = {k: tuple(_plain(o) for o in v) if k == "out" else _plain(v) for k, v in kwargs.items()}
        with _nested():
            result = getattr(ufunc, method)(*(_plain(x) for x in inputs), **kwargs)
            if outs is not None:
                return outs[0] if len(outs) == 1 else outs
            return _wrap_result(result)

    def __array_function__(self, func, types, args, kwargs):
        """A NumPy function over counted arrays (``compress``, ``concatenate``, ...): one operation,
        unless it only makes a view or reads metadata; what it calls inside is not counted again."""
        if func.__name__ not in _NO_LAUNCH:
            _operation(func.__name__)
        with _nested():
            return super().__array_function__(func, types, args, kwargs)

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

    def astype(self, dtype, *args, **kwargs):
        """A conversion is one kernel; ``copy=False`` to the same dtype is no operation (as on CuPy)."""
        copy = kwargs.get("copy", args[3] if len(args) > 3 else True)
        if copy or np.dtype(dtype) != self.dtype:
            _operation("astype")
        with _nested():
            return np.ndarray.astype(self, dtype, *args, **kwargs)


def _counted_method(name):
    method = getattr(np.ndarray, name)
    kind = _SYNCING.get(name)

    def counted(self, *args, **kwargs):
        _operation(name)
        with _nested():
            if kind:
                _transfer(kind)
            return _wrap_result(method(self, *args, **kwargs))
    counted.__name__ = name
    counted.__doc__ = method.__doc__
    return counted


#: operations that wait for the device on CuPy without a copy: its sorts are thrust's, whose ``par`` policy waits for
#: the stream at the end of each sort (a host sync as a read is one; session 15 found two a batch in the resolve ahead)
_SYNCING = {"sort": "sort", "argsort": "sort", "lexsort": "sort"}

# methods that launch a kernel (or a copy) on CuPy: one operation each
_COUNTED_METHODS = ("sum", "any", "all", "max", "min", "mean", "prod", "argmax", "argmin", "cumsum", "cumprod",
                    "fill", "copy", "sort", "argsort", "searchsorted", "take", "put", "compress", "repeat",
                    "clip", "round", "flatten", "dot", "partition", "argpartition", "std", "var", "trace",
                    "diagonal", "choose", "byteswap", "ptp")
for _name in _COUNTED_METHODS:
    if hasattr(np.ndarray, _name):
        setattr(CountedArray, _name, _counted_method(_name))
del _name

# NumPy functions that only make a view or read metadata (no launch on CuPy)
_NO_LAUNCH = frozenset({
    "reshape", "ravel", "transpose", "squeeze", "expand_dims", "atleast_1d", "atleast_2d", "atleast_3d",
    "shape", "ndim", "size", "result_type", "can_cast", "may_share_memory", "shares_memory", "broadcast_to",
    "broadcast_arrays", "swapaxes", "moveaxis", "iscomplexobj", "isrealobj", "min_scalar_type", "ascontiguousarray",
})


def _plain(a):
    return a.view(np.ndarray) if isinstance(a, CountedArray) else a


def _is_advanced(key) -> bool:
    """Whether an index is a gather/scatter (an array or list inside it), not a view."""
    if isinstance(key, tuple):
        return any(_is_advanced(k) for k in key)
    return isinstance(key, (np.ndarray, list)) and not (isinstance(key, np.ndarray) and key.ndim == 0
                                                          and key.dtype.kind in "iu")


# NumPy functions that create or combine arrays: their results become CountedArray while counting.
_WRAPPED = ("zeros", "empty", "full", "ones", "arange", "asarray", "array", "concatenate", "stack",
            "where", "searchsorted", "cumsum", "diff", "bincount", "zeros_like", "empty_like", "full_like",
            "ones_like", "ascontiguousarray")
_COUNTED = {"nonzero": "nonzero", "flatnonzero": "nonzero", "argwhere": "nonzero", "unique": "nonzero",
            "count_nonzero": None, **_SYNCING}


def _wrap_result(out):
    if type(out) is np.ndarray:
        return out.view(CountedArray)
    if isinstance(out, tuple):
        return tuple(_wrap_result(o) for o in out)
    if isinstance(out, np.generic):
        return np.asarray(out).view(CountedArray)
    return out


def _wrapping(fn, kind=None):
    name = fn.__name__
    counts = name not in _NO_LAUNCH_CREATE

    def wrapped(*args, **kwargs):
        if counts and not (name in _MAYBE_COPY and _is_noop_conversion(args, kwargs)):
            _operation(name)
        with _nested():
            if kind:
                _transfer(kind)
            return _wrap_result(fn(*args, **kwargs))
    wrapped.__wrapped__ = fn
    return wrapped


# allocations without a kernel (CuPy's pool hands out memory; nothing runs on the device)
_NO_LAUNCH_CREATE = frozenset({"empty", "empty_like"})
# conversions that are no operation when the input already is an array of the asked dtype
_MAYBE_COPY = frozenset({"asarray", "ascontiguousarray"})


def _is_noop_conversion(args, kwargs) -> bool:
    a = args[0] if args else kwargs.get("a")
    if not isinstance(a, CountedArray):        # a host object: a copy to the device
        return False
    dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
    return (dtype is None or np.dtype(dtype) == a.dtype) and a.flags.c_contiguous


def _counted_repeat(fn):
    """``repeat`` with an array of repeats: the output size is their sum, which a GPU must read back
    (``array_ops.repeat`` does one transfer there), so it counts as one; a scalar repeat does not."""
    def wrapped(a, repeats, *args, **kwargs):
        _operation("repeat")
        with _nested():
            if np.ndim(repeats) > 0:
                _transfer("repeat")
            return _wrap_result(fn(a, repeats, *args, **kwargs))
    wrapped.__wrapped__ = fn
    return wrapped


_PATCHED: dict = {}


def _patch_numpy() -> None:
    """While any counter is active, NumPy's array-creating functions return CountedArray."""
    if _PATCHED:
        return
    for name in _WRAPPED:
        _PATCHED[name] = getattr(np, name)
        setattr(np, name, _wrapping(_PATCHED[name]))
    for name, kind in _COUNTED.items():
        _PATCHED[name] = getattr(np, name)
        setattr(np, name, _wrapping(_PATCHED[name], kind))
    _PATCHED["repeat"] = np.repeat
    np.repeat = _counted_repeat(_PATCHED["repeat"])


def _unpatch_numpy() -> None:
    if _COUNTERS or _OP_COUNTERS:
        return
    for name, fn in _PATCHED.items():
        setattr(np, name, fn)
    _PATCHED.clear()


@contextmanager
def count_transfers(trace: bool = False):
    """Count device -> host transfers, and sorts (waits for the device), on NumPy (see :class:`CountedArray`);
    yields a TransferCounter.

    While active, NumPy's array-creating functions return :class:`CountedArray`, so
    arrays built inside the block (a pipeline, its structure and jobs, their batches)
    report the operations that would synchronise a GPU.  Nested counters all count.
    """
    counter = TransferCounter(trace)
    _patch_numpy()
    _COUNTERS.append(counter)
    try:
        yield counter
    finally:
        _COUNTERS.remove(counter)
        _unpatch_numpy()


# -- counting device operations (the launch budget) ---------------------------------------------
_OP_COUNTERS: list[TransferCounter] = []
_DEPTH = [0]          # > 0 inside a counted operation: what it does inside is that one operation


@contextmanager
def _nested():
    _DEPTH[0] += 1
    try:
        yield
    finally:
        _DEPTH[0] -= 1


def _operation(kind: str, nested_too: bool = False) -> None:
    """Count one device operation (a kernel launch or a copy), unless it runs inside another."""
    if not _OP_COUNTERS or (_DEPTH[0] and not nested_too):
        return
    for counter in _OP_COUNTERS:
        counter.add(kind)


def count_launch(name: str) -> None:
    """Count one fused-kernel launch (``RawKernels.launch`` and the host emulations tests substitute)."""
    _operation(f"launch:{name}", nested_too=True)


@contextmanager
def count_operations(trace: bool = False):
    """Count, on NumPy, every operation that on CuPy is a kernel launch or a copy; yields a counter.

    A batch's GPU cost at small sizes is the host's dispatch of its device operations, so
    their number is the budget.  While active, arrays built inside the block are
    :class:`CountedArray`, and each of these counts one (``counter.kinds`` by name):

    * a ufunc call on a counted array (``a + b``, ``a == b``, ``xp.minimum``, ``add.at``, and the
      reduction behind ``sum``/``any``);
    * a NumPy function over counted arrays (``where``, ``searchsorted``, ``compress``...) and the
      creating functions (``zeros``, ``full``, ``arange``, ``concatenate``, ``asarray`` of a host
      object or with a conversion); ``empty`` is an allocation, not a launch, and views
      (slices, ``reshape``) are free;
    * a gather or scatter (an index holding an array), any assignment ``a[...] = v``;
    * the methods that compute (``sum``, ``any``, ``astype`` unless a no-op, ``fill``, ``copy``...);
    * each device -> host read (``int()``, ``.tolist()``... as :func:`count_transfers` counts them);
    * each fused-kernel launch (:func:`count_launch`).

    What NumPy does inside one of these is not counted again.
    """
    counter = TransferCounter(trace)
    _patch_numpy()
    _OP_COUNTERS.append(counter)
    try:
        yield counter
    finally:
        _OP_COUNTERS.remove(counter)
        _unpatch_numpy()


# -- phase timing without host syncs ---------------------------------------------------------
class PhaseSeconds(dict):
    """Seconds per phase.  On a GPU a phase is a pair of CUDA events recorded on the stream, and
    their elapsed times are read (one wait on the last event) only when someone reads the dict;
    on the CPU the phases are ``perf_counter`` differences, stored at once."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._pending: list = []
        self._last_end = None             # the end event of the last phase timed into this dict

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
def phase_timer(xp: ModuleType, seconds: PhaseSeconds, phase: str, chain: bool = False):
    """Time the block into ``seconds[phase]`` (added): CUDA events on a GPU (no host sync), perf_counter on the CPU.

    ``chain``: the phase directly follows the last one timed into ``seconds``, whose end event is its start
    (one event and one record less per phase: a small batch's phases are a few tenths of a millisecond)."""
    if xp is np or not isinstance(seconds, PhaseSeconds):
        if xp is not np:
            synchronize(xp)
        start = time.perf_counter()
        yield
        if xp is not np:
            synchronize(xp)
        dict.__setitem__(seconds, phase, dict.get(seconds, phase, 0.0) + time.perf_counter() - start)
        return
    start = seconds._last_end if chain and seconds._last_end is not None else None
    if start is None:
        start = xp.cuda.Event()
        start.record()
    yield
    end = xp.cuda.Event()
    end.record()
    seconds.add_events(phase, start, end)
    seconds._last_end = end
