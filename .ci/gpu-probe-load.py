#!/usr/bin/env python3
"""Which step of a kernel's first use waits for the device: RawModule.compile() (the module's load),
get_function (the function's load, lazy loading), or the first launch.  A ~50 ms kernel is queued before each.

    python3 .ci/gpu-probe-load.py            (one JSON line; CUDA_MODULE_LOADING as the environment sets it)
"""
import json
import os
import time

import cupy as cp
import numpy as np

out = {"CUDA_MODULE_LOADING": os.environ.get("CUDA_MODULE_LOADING")}
spin = cp.RawKernel(r'''
extern "C" __global__ void spin(long long cycles, int* flag) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
    if (threadIdx.x == 0) flag[0] = 1;
}''', "spin")
flag = cp.zeros(1, dtype=np.int32)
spin((1,), (1,), (np.int64(1000), flag))
cp.cuda.Device().synchronize()
rate = cp.cuda.Device().attributes["ClockRate"] * 1e3


def timed(label, fn, busy_ms=50.0):
    cp.cuda.Device().synchronize()
    spin((1,), (1,), (np.int64(busy_ms * 1e-3 * rate), flag))
    t = time.perf_counter()
    r = fn()
    host = time.perf_counter() - t
    cp.cuda.Device().synchronize()
    out[label] = {"host_ms": round(host * 1e3, 3), "waited": host * 1e3 > 0.6 * busy_ms}
    return r


src = "\n".join(f'extern "C" __global__ void k{i}(float* a, int n) {{ int t = blockIdx.x * blockDim.x + threadIdx.x;'
                f' if (t < n) a[t] += {i}.0f + {time.time_ns() % 1000}; }}' for i in range(4))
mod = cp.RawModule(code=src)
timed("module_compile", mod.compile)
f0 = timed("get_function_0", lambda: mod.get_function("k0"))
f1 = timed("get_function_1", lambda: mod.get_function("k1"))
a = cp.zeros(1024, dtype=np.float32)
timed("launch_0_first", lambda: f0((4,), (256,), (a, np.int32(1024))))
timed("launch_0_second", lambda: f0((4,), (256,), (a, np.int32(1024))))
timed("launch_1_first", lambda: f1((4,), (256,), (a, np.int32(1024))))
f2 = mod.get_function("k2")
timed("launch_2_first_after_get_earlier", lambda: f2((4,), (256,), (a, np.int32(1024))))
timed("get_and_launch_3", lambda: mod.get_function("k3")((4,), (256,), (a, np.int32(1024))))
# the same from the disk cache in a second module object (a fresh process's case, source already compiled)
mod2 = cp.RawModule(code=src)
timed("cached_module_compile", mod2.compile)
timed("cached_get_function", lambda: mod2.get_function("k0"))
print(json.dumps(out), flush=True)
