"""Device probe (session 19): a process for Nsight Compute to profile GraphVine's one-pass shift kernels - R-MAT 22
loaded but for 1e6 edges, which are inserted and deleted twice (ncu takes the second launch of each kernel);
LINEINFO=1 compiles GraphVine's module with -lineinfo; SHIFT picks the large path's shift (session 20's first calls
profiled "table", the form that "tiles" has been since).  ROUND2=1 (session 22): the CUDA profiler is started before
the second round only, for ``ncu --profile-from-start off`` to take every kernel of it."""
import os
import sys

import cupy as cp

from vinestream.stream.bench.structures import rmat_edges
from vinestream.structures import graphvine_kernels as gk
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

if os.environ.get("LINEINFO"):          # source lines in the profile: the module compiled with -lineinfo
    gk._kernels._module = cp.RawModule(code=gk.SOURCE, options=("-lineinfo",))

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 22
src, dst = rmat_edges(cp, scale, 16, seed=0)
keep = src != dst
b = CSRBatch.from_edges(cp, src[keep].astype(cp.int32), dst[keep].astype(cp.int32))
src, dst = b.sources().astype(cp.int32), b.cols
order = cp.random.RandomState(1).permutation(src.shape[0])
src, dst = src[order], dst[order]
init = int(src.shape[0]) - 1_000_000
g = create("graphvine", cp, shift=os.environ.get("SHIFT", "tiles"))
g.insert_edges(CSRBatch.from_edges(cp, src[:init], dst[:init]))
ins = CSRBatch.from_edges(cp, src[init:], dst[init:])
dele = CSRBatch.from_edges(cp, src[init:], dst[init:])
for r in range(2):
    if r == 1 and os.environ.get("ROUND2"):
        cp.cuda.Device().synchronize()
        cp.cuda.profiler.start()
    g.insert_edges(ins)
    g.delete_edges(dele)
cp.cuda.Device().synchronize()
print("done", g.num_edges)
