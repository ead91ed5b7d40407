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


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fused_matches_array_program_on_cupy(seed):
    ran = run_pair(cupy, seed=seed, steps=40)
    assert ran["new"] > 0 and ran["gone"] > 0


def test_fused_is_the_gpu_default_and_launches():
    g = create("coo", cupy)
    assert g.fused
    launches = []
    saved = ck.launcher

    def counting(xp, name, n, args):
        launches.append(name)
        saved(xp, name, n, args)
    ck.launcher = counting
    try:
        from vinestream.structures.csr_types import CSRBatch
        g.insert_new_vertices(cupy.arange(100), 100)
        rng = np.random.default_rng(0)
        s, d = cupy.asarray(rng.integers(0, 100, 500)), cupy.asarray(rng.integers(0, 100, 500))
        mask, n = g.insert_edges_counted(CSRBatch.from_edges(cupy, s, d, cupy.ones(500, cupy.float32)))
        assert n == int(mask.sum()) == g.num_edges > 0
    finally:
        ck.launcher = saved
    assert launches == ["coo_find", "coo_insert_place", "coo_index_merge"]
