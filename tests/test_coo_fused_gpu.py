"""COO on CuPy: the fused kernels (fused=True, the GPU default) against the array program (fused=False).

Both run on the device from the same batches; after every batch the whole state (COO arrays, queue
ring and counters, key index) must be equal slot for slot, as must masks, counts and weight queries.
Run on a GPU box: ``python -m pytest -m gpu tests/test_coo_fused_gpu.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.backends import HAS_GPU, cupy
from tests.coo_fused_support import run_pair
from vinestream.structures import coo_kernels as ck
from vinestream.structures.registry import create

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")]


@pytest.mark.parametrize("block_max", [50, ck.BLOCK_FIND_MAX], ids=["find-mixed", "find-block"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fused_matches_array_program_on_cupy(seed, block_max, monkeypatch):
    monkeypatch.setattr(ck, "BLOCK_FIND_MAX", block_max)
    ran = run_pair(cupy, seed=seed, steps=40)
    assert ran["new"] > 0 and ran["gone"] > 0


def test_fused_is_the_gpu_default_and_launches():
    g = create("coo", cupy)
    assert g.fused
    launches = []
    saved = ck.launcher, ck.block_launcher

    def counting(xp, name, n, args):
        launches.append(name)
        saved[0](xp, name, n, args)

    def counting_blocks(xp, name, grid, block, args):
        launches.append(name)
        saved[1](xp, name, grid, block, args)
    ck.launcher, ck.block_launcher = counting, counting_blocks
    try:
        from vinestream.structures.csr_types import CSRBatch
        g.insert_new_vertices(cupy.arange(100), 100)
        rng = np.random.default_rng(0)
        s, d = cupy.asarray(rng.integers(0, 100, 500)), cupy.asarray(rng.integers(0, 100, 500))
        mask, n = g.insert_edges_counted(CSRBatch.from_edges(cupy, s, d, cupy.ones(500, cupy.float32)))
        assert n == int(mask.sum()) == g.num_edges > 0
    finally:
        ck.launcher, ck.block_launcher = saved
    assert launches == ["coo_find_block", "coo_insert_place", "coo_index_merge"]
