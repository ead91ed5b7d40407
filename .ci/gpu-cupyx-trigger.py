#!/usr/bin/env python3
"""Which CuPy operation makes CuPy import cupyx (and SciPy): each candidate in a fresh process, then whether
cupyx.linalg (a sign the lazy cupyx module ran) and scipy are in sys.modules.

    python3 .ci/gpu-cupyx-trigger.py
"""
import subprocess
import sys

CANDIDATES = {
    "nothing": "pass",
    "a+1": "a + 1",
    "a==b": "a == b",
    "m&n": "m & n",
    "m|n": "m | n",
    "~m": "~m",
    "i&j": "i & j",
    "bitwise_and(m,n)": "cp.bitwise_and(m, n)",
    "logical_and(m,n)": "cp.logical_and(m, n)",
    "m*n": "m * n",
    "where": "cp.where(m, a, b)",
    "sort": "cp.sort(a)",
    "argsort": "cp.argsort(a)",
    "cumsum": "cp.cumsum(a)",
    "nonzero": "cp.nonzero(m)",
    "searchsorted": "cp.searchsorted(a, b)",
    "a[m]": "a[m]",
    "a[i]": "a[i % 10]",
    "concatenate": "cp.concatenate([a, b])",
    "unique": "cp.unique(a)",
    "sum": "a.sum()",
    "astype": "a.astype(cp.int32)",
    "RawKernel": "cp.RawKernel('extern \"C\" __global__ void k(int* x){x[0]=1;}', 'k')((1,), (1,), (i,))",
    "ElementwiseKernel": "cp.ElementwiseKernel('int64 x', 'int64 y', 'y = x + 1', 'ek')(a)",
}
PRELUDE = ("import sys, cupy as cp; a = cp.arange(10); b = cp.arange(10)[::-1].copy(); m = a > 3; n = b > 3; "
           "i = cp.arange(10, dtype=cp.int32); j = i + 1; cp.cuda.Device().synchronize(); "
           "before = 'cupyx.linalg' in sys.modules; ")
for name, op in CANDIDATES.items():
    code = PRELUDE + op + "; cp.cuda.Device().synchronize(); " + \
        "print(before, 'cupyx.linalg' in sys.modules, 'scipy' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    print(f"{name:<20} {r.stdout.strip()} {r.stderr.strip()[-200:]}", flush=True)
