"""The array backends a test runs on: NumPy always, CuPy when a CUDA device answers."""
import numpy as np
import pytest


def _cupy_or_none():
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception:
        return None
    return None


cupy = _cupy_or_none()
HAS_GPU = cupy is not None

#: parametrize values: numpy, and cupy marked `gpu` (skipped without a device)
BACKENDS = [pytest.param(np, id="numpy"),
            pytest.param(cupy, id="cupy", marks=[pytest.mark.gpu,
                         pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")])]


def cupy_or_skip():
    """CuPy, or skip the calling test where no CUDA device answers."""
    if not HAS_GPU:
        pytest.skip("needs CuPy and a CUDA device")
    return cupy
