"""hornet on CuPy: the fused kernels (fused=True) against the array program (fused=False).

Both run on the device from the same batches; after every batch the whole state
(vertex arrays, pool, allocator bookkeeping) must be equal, as must masks, removed
edges, queries, adjacency and memory counters, and the layout invariants hold.
Run on a GPU box: ``VINESTREAM_BACKEND=gpu python3 -m pytest tests/test_hornet_fused_gpu.py``.
"""
from __future__ import annotations

import pytest

from tests import contiguous_support as cs
from tests.backends import cupy_or_skip


@pytest.mark.gpu
@pytest.mark.parametrize("opts", [
    {}, {"block_array_entries": 4},
    {"block_array_entries": 1024, "min_block_size": 8, "linear_scan_max": 8}])
@pytest.mark.parametrize("seed", [0, 1])
def test_fused_matches_array_program_on_random_batches(opts, seed):
    cp = cupy_or_skip()
    fused, _ = cs.fused_vs_array_on_device(cp, "hornet", opts, seed, nv=3000, steps=14, max_batch=20000)
    assert int(cp.asnumpy(fused.degree_).max()) > 100      # hub rows moved through many sizes


@pytest.mark.gpu
def test_fused_bulk_build_and_batches_on_rmat():
    cp = cupy_or_skip()
    cs.fused_vs_array_bulk_rmat(cp, "hornet", {})
