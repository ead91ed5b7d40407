#!/usr/bin/env python3
"""Whether CuPy's cumsum waits for the device, and what its first call costs in a fresh process.

    python3 .ci/gpu-probe-scan.py            (prints one JSON line)

A kernel that spins ~SPIN ms is queued first; a call that returns before it ends did not wait.
"""
import json
import time

T0 = time.perf_counter()
import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402

out = {"import_cupy_s": round(time.perf_counter() - T0, 4)}
from cupy._core import _accelerator  # noqa: E402

out["routine_accelerators"] = [int(a) for a in _accelerator.get_routine_accelerators()]
out["reduction_accelerators"] = [int(a) for a in _accelerator.get_reduction_accelerators()]
spin = cp.RawKernel(r'''
extern "C" __global__ void spin(long long cycles, int* flag) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
    if (threadIdx.x == 0) flag[0] = 1;
}''', "spin")
flag = cp.zeros(1, dtype=np.int32)
spin((1,), (1,), (np.int64(1000), flag))
cp.cuda.Device().synchronize()
rate = cp.cuda.Device().attributes["ClockRate"] * 1e3          # kHz -> Hz


def timed(label, fn, busy_ms=50.0):
    """Host seconds of fn() with a kernel of busy_ms queued before it, and whether it returned before it ended."""
    cp.cuda.Device().synchronize()
    spin((1,), (1,), (np.int64(busy_ms * 1e-3 * rate), flag))
    t = time.perf_counter()
    fn()
    host = time.perf_counter() - t
    cp.cuda.Device().synchronize()
    total = time.perf_counter() - t
    out[label] = {"host_ms": round(host * 1e3, 3), "until_idle_ms": round(total * 1e3, 3),
                  "waited": host * 1e3 > 0.6 * busy_ms}


n = 228_000
mask = cp.random.random(n) < 0.9
vals = cp.arange(n, dtype=np.int64)
t = time.perf_counter()
import cupy.cuda.cub  # noqa: E402

out["import_cub_ms"] = round((time.perf_counter() - t) * 1e3, 3)
timed("cumsum_bool_first", lambda: cp.cumsum(mask))
timed("cumsum_bool_second", lambda: cp.cumsum(mask))
timed("cumsum_bool_third", lambda: cp.cumsum(mask))
timed("cumsum_int32", lambda: cp.cumsum(mask.view(np.uint8), dtype=np.int32))
timed("cumsum_int64", lambda: cp.cumsum(vals))
timed("astype_int64", lambda: mask.astype(np.int64))
timed("empty_new_size", lambda: cp.empty(n + 12345, dtype=np.int64))
timed("zeros", lambda: cp.zeros(n, dtype=np.int64))
timed("argsort", lambda: cp.argsort(vals))
timed("searchsorted", lambda: cp.searchsorted(vals, vals[:1000]))
timed("nonzero_free_where", lambda: cp.where(mask, vals, -1))
timed("sum_to_device", lambda: mask.sum())
timed("scatter_add", lambda: cp.add.at(vals, vals[:100] % 7, 1))
for k in range(3):
    def compact2():
        rank = cp.cumsum(mask) - 1
        o = cp.empty(n + 1, dtype=np.int64)
        o[cp.where(mask, rank, n)] = vals
    timed(f"compact_{k}", compact2)
print(json.dumps(out), flush=True)
