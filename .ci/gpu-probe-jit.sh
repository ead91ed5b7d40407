#!/bin/bash
# Whether CuPy's precompiled CUB kernels carry SASS for this GPU or are JIT-compiled from PTX at first use, and
# whether the driver's JIT cache (~/.nv/ComputeCache) keeps them from one process to the next.
set -u
cub=$(python3 -c 'import cupy.cuda.cub as c; print(c.__file__)')
echo "cub: $cub"
env | grep -i "CUDA_CACHE\|CUDA_MODULE\|CUPY_" || echo "(no CUDA_CACHE / CUDA_MODULE / CUPY_ variables)"
python3 -c 'import cupy; print("cupy", cupy.__version__, "cuda runtime", cupy.cuda.runtime.runtimeGetVersion(), "driver", cupy.cuda.runtime.driverGetVersion())'
echo "elf archs:"; cuobjdump --list-elf "$cub" 2>&1 | sed 's/.*\.\(sm_[0-9a-z]*\)\..*/\1/' | sort | uniq -c | head
echo "ptx archs:"; cuobjdump --list-ptx "$cub" 2>&1 | sed 's/.*\.\(sm_[0-9a-z]*\)\..*/\1/' | sort | uniq -c | head
ls -la ~/.nv 2>&1 | head -3; du -sh ~/.nv/ComputeCache 2>/dev/null
for i in 1 2 3; do
  python3 - <<'PY'
import time, cupy as cp, numpy as np
a = cp.arange(228000, dtype=np.int64); m = a % 3 == 0; cp.cuda.Device().synchronize()
out = {}
for name, f in (("cumsum_bool", lambda: cp.cumsum(m)), ("cumsum_int32", lambda: cp.cumsum(m, dtype=np.int32)),
                ("sort_int64", lambda: cp.sort(a)), ("argsort_int64", lambda: cp.argsort(a)),
                ("searchsorted", lambda: cp.searchsorted(a, a[:10]))):
    t = time.perf_counter(); f(); cp.cuda.Device().synchronize(); out[name] = round((time.perf_counter() - t) * 1e3, 2)
print(out)
PY
  du -sh ~/.nv/ComputeCache 2>/dev/null
done
