"""Every CUDA kernel source of the project compiles with nvcc for sm_90 without a warning (skipped without nvcc).

CI has no GPU, so this is where a kernel source that would not build on the device fails first;
each kernel's behaviour is tested by its own host emulation and device tests.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from vinestream.algorithms import bfs_kernels, pagerank_kernels, triangle_kernels
from vinestream.stream.batching import resolve_kernels, vertex_map_kernels
from vinestream.stream.events import cudf_decode
from vinestream.structures import (
    contiguous_kernels,
    coo_kernels,
    faimgraph_kernels,
    gpma_kernels,
    graphvine_kernels,
    slabhash_kernels,
)

NVCC = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if os.path.exists("/usr/local/bin/nvcc") else None)

# (name, source, the kernels the launcher asks for, how a kernel's definition reads, intrinsics it must use)
SOURCES = [
    ("bfs", bfs_kernels.SOURCE, bfs_kernels.KERNELS, "void {}(", ()),
    ("pagerank", pagerank_kernels.SOURCE, pagerank_kernels.KERNELS, ("({},", "void {}("), ()),
    ("triangles", triangle_kernels.SOURCE, triangle_kernels.KERNELS, 'extern "C" __global__\nvoid {}(', ()),
    ("contiguous", contiguous_kernels.SOURCE, contiguous_kernels.KERNELS, "void {}(", ()),
    ("faimgraph", faimgraph_kernels.SOURCE, faimgraph_kernels.KERNELS, "void {}(", ()),
    ("gpma", gpma_kernels.SOURCE, gpma_kernels.KERNELS, "void {}(", ()),
    ("graphvine", graphvine_kernels.SOURCE, graphvine_kernels.KERNELS, "void {}(", ()),
    ("coo", coo_kernels.SOURCE, coo_kernels.KERNELS, ("void {}(", "__launch_bounds__(COO_BLOCK)\n{}("),
     ("__syncthreads",)),
    ("slabhash", slabhash_kernels.SOURCE, slabhash_kernels.KERNELS, "void {}(",
     ("__ballot_sync", "__ffs", "__shfl_sync", "atomicCAS")),
    ("cudf-line-screen", cudf_decode._SCREEN_SOURCE, ("screen_lines",), "void {}(", ()),
    ("small-batch", resolve_kernels.SOURCE, resolve_kernels.KERNELS, "__launch_bounds__(RS_THREADS)\n{}(",
     ("__syncthreads", "atomicMax")),
    ("vertex-map", vertex_map_kernels.SOURCE, vertex_map_kernels.KERNELS, "{}(", ("__syncthreads",)),
]


@pytest.mark.skipif(NVCC is None, reason="needs nvcc")
@pytest.mark.parametrize("name, source, kernels, definition, intrinsics", SOURCES, ids=[s[0] for s in SOURCES])
def test_kernel_source_compiles_for_sm90(tmp_path, name, source, kernels, definition, intrinsics):
    cu = tmp_path / f"{name}.cu"
    cu.write_text(source)
    res = subprocess.run([NVCC, "-arch=sm_90", "-Werror", "all-warnings", "-c", "-o", os.devnull, str(cu)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    for kernel in kernels:      # defined (a macro instantiation or a plain definition), not just named
        forms = (definition,) if isinstance(definition, str) else definition
        assert any(form.format(kernel) in source for form in forms), kernel
    for intrinsic in intrinsics:
        assert intrinsic in source
