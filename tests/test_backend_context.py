"""``structures.backend.start_primary_context``: the GPU's primary context made on a thread through the driver
API while a command line run imports CuPy; nothing on the CPU backend or when turned off, no error where
there is no driver; on a GPU, CuPy runs on that context afterwards."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from tests.backends import cupy_or_skip
from vinestream.structures import backend


def test_nothing_on_the_cpu_backend_or_when_turned_off(monkeypatch):
    assert backend.start_primary_context("cpu") is None
    monkeypatch.setenv(backend.ENV_VAR, "cpu")
    assert backend.start_primary_context(None) is None
    monkeypatch.delenv(backend.ENV_VAR)
    monkeypatch.setenv("VINESTREAM_EARLY_CONTEXT", "0")
    assert backend.start_primary_context("gpu") is None


def test_no_driver_is_no_error(monkeypatch):
    """Where libcuda cannot be loaded the thread ends quietly (the backend's own checks report a missing GPU)."""
    def missing(name, *args, **kwargs):
        raise OSError(f"{name}: cannot open shared object file")
    monkeypatch.setattr(ctypes, "CDLL", missing)
    errors = []
    monkeypatch.setattr("threading.excepthook", lambda hook_args: errors.append(hook_args.exc_value))
    thread = backend.start_primary_context("auto")
    thread.join(10)
    assert not thread.is_alive() and not errors


@pytest.mark.gpu
def test_cupy_runs_on_the_context_made_ahead():
    cp = cupy_or_skip()
    thread = backend.start_primary_context("gpu")
    thread.join(60)
    a = cp.arange(1000, dtype=cp.int64)
    assert int((a * 2).sum()) == 999 * 1000
    assert np.array_equal(cp.asnumpy(cp.sort(a[::-1])), np.arange(1000))


@pytest.mark.gpu
def test_the_early_libraries_are_loaded_before_cupy_is_imported():
    """In a fresh interpreter the thread loads NVRTC and cuBLAS (EARLY_LIBRARIES) before anything imports CuPy, and
    CuPy then compiles and multiplies on them."""
    import subprocess
    import sys
    cupy_or_skip()
    code = """
import sys
from vinestream.structures import backend
backend.start_primary_context("gpu").join(120)
assert "cupy" not in sys.modules
maps = open("/proc/self/maps").read()
print("nvrtc" if "libnvrtc" in maps else "", "cublas" if "libcublas" in maps else "")
import cupy
a = cupy.arange(10, dtype=cupy.float64)
print(float(a.dot(a)), int((a * 2).sum()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[0].split() == ["nvrtc", "cublas"], out.stdout
    assert lines[1].split() == ["285.0", "90"], out.stdout


def test_the_exit_waits_for_the_context_thread(tmp_path):
    """A process that ended while the thread was inside the driver or a dlopen (a usage error found at once:
    `replay --block-size 99999999999999999999` on an H100) aborted at interpreter exit with "malloc(): invalid
    size" (-6 for 2).  The exit now waits for the thread: here a driver whose cuInit takes 1 s, in a process that
    exits at once, still writes its mark at the thread's end."""
    import subprocess
    import sys
    mark = tmp_path / "done"
    code = f"""
import ctypes, time
class Driver:
    def cuInit(self, flags):
        time.sleep(1.0)
        open({str(mark)!r}, "w").write("ok")
        return 1                       # "no device": the thread ends here
ctypes.CDLL = lambda name, *a, **k: Driver()
from vinestream.structures import backend
backend.start_primary_context("gpu")
raise SystemExit(2)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert mark.exists() and mark.read_text() == "ok"
