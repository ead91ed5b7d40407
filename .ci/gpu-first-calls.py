#!/usr/bin/env python3
"""A fresh process's first-call costs on the GPU, one by one (ms): import CuPy, cuInit, the context, a
first allocation, a first element-wise kernel (from the disk cache), thrust's sort, CUB's scan, importing
cupyx.scipy.sparse, a cuSPARSE handle and a csr2csc, a RawModule load, a graph capture.  JSON on stdout."""
import json
import time

out = {}


def step(name, fn):
    t = time.perf_counter()
    fn()
    out[name] = round((time.perf_counter() - t) * 1e3, 2)


step("import_cupy", lambda: __import__("cupy"))
import cupy  # noqa: E402

step("cuinit_device_count", lambda: cupy.cuda.runtime.getDeviceCount())
step("context_first_alloc", lambda: cupy.empty(1))
step("alloc_64MB", lambda: cupy.empty(1 << 26, dtype=cupy.uint8))
a = cupy.arange(1 << 16, dtype=cupy.int64)
step("first_elementwise_arange_done", lambda: cupy.cuda.Device().synchronize())
step("elementwise_new_1", lambda: (a * 3 + 1).astype(cupy.float32).sum().item())
step("elementwise_new_2", lambda: cupy.where(a > 5, a, -a).max().item())
step("thrust_sort", lambda: cupy.sort(a[::-1]).sum().item())
step("cub_cumsum", lambda: cupy.cumsum(a).sum().item())
step("argsort_stable", lambda: cupy.argsort(a[::-1], kind="stable").sum().item())
step("import_cupyx_sparse", lambda: __import__("cupyx.scipy.sparse"))


def _csr():
    import cupyx.scipy.sparse as sp
    m = sp.csr_matrix((cupy.ones(1000, dtype=cupy.float32), cupy.arange(1000, dtype=cupy.int32) % 100,
                       cupy.arange(0, 1001, 10, dtype=cupy.int32)), shape=(100, 100))
    m.T.tocsr().sum()


step("cusparse_first_transpose", _csr)
step("cusparse_second_transpose", _csr)
src = 'extern "C" __global__ void k(int* x) { x[threadIdx.x] += 1; }'
step("rawmodule_load", lambda: cupy.RawModule(code=src).get_function("k"))
x = cupy.zeros(32, dtype=cupy.int32)
f = cupy.RawModule(code=src).get_function("k")


def _graph():
    s = cupy.cuda.Stream(non_blocking=True)
    s.begin_capture()
    with s:
        for _ in range(24):
            f((1,), (32,), (x,))
    g = s.end_capture()
    g.launch(cupy.cuda.get_current_stream())
    cupy.cuda.Device().synchronize()


step("graph_capture_24_launch", _graph)
step("graph_capture_24_again", _graph)


def _launches():
    for _ in range(240):
        f((1,), (32,), (x,))
    cupy.cuda.Device().synchronize()


step("direct_240_launches", _launches)
print(json.dumps(out))
