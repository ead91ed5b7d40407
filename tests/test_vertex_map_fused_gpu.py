"""The vertex map on CuPy: the fused kernels (the GPU default) against the array program, state for state,
and the coo pipeline's vertex phase on both paths.

Run on a GPU box: ``python -m pytest -m gpu tests/test_vertex_map_fused_gpu.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.test_vertex_map_fused import assert_same_state
from vinestream.stream.batching.vertex_map import VertexMap
from vinestream.structures.backend import to_numpy

cp = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu


def _host(vm: VertexMap) -> VertexMap:
    """A NumPy copy of ``vm``'s state arrays (for assert_same_state)."""
    copy = VertexMap(np, fused=False)
    for name in ("base_keys", "base_values", "extra_keys", "extra_values", "free", "external_of"):
        setattr(copy, name, to_numpy(getattr(vm, name)))
    copy.next_id, copy._count, copy._tombstones = vm.next_id, vm._count, vm._tombstones
    return copy


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("min_pending", [1, 64, 10**9])
def test_fused_matches_array_program_on_cupy(seed, min_pending):
    rng = np.random.default_rng(seed)
    fused = VertexMap(cp, capacity=4, min_pending=min_pending)
    array = VertexMap(cp, capacity=4, min_pending=min_pending, fused=False)
    assert fused.fused and not array.fused
    for step in range(60):
        keys = np.unique(rng.integers(-500, 500, int(rng.choice([1, 10, 300, 2000]))))
        if step % 5 == 4:
            keys = np.concatenate([keys, rng.integers(-(2**62), 2**62, 50)])
        keys = cp.asarray(keys if step % 2 else rng.permutation(keys))
        if step % 3 == 2:
            keys = keys[array.lookup(keys) >= 0]
            got, want = fused.release(keys, all_mapped=True), array.release(keys, all_mapped=True)
        else:
            keys = keys[array.lookup(keys) < 0]
            revived = int(array.released(keys).sum()) if step % 4 else None
            got, want = fused.assign(keys, revived=revived), array.assign(keys, revived=revived)
        assert got.tolist() == want.tolist(), step
        assert_same_state(_host(fused), _host(array))
        probe = cp.asarray(rng.integers(-600, 600, 500))
        assert fused.lookup(probe).tolist() == array.lookup(probe).tolist()


def test_coo_pipeline_vertex_phase_fused_equals_array_on_cupy():
    """1,000-event batches with vertex creations and deletions through two coo pipelines on CuPy, one with
    every fused path (the default) and one with the array programs: the same counts and graph each batch."""
    from tests.test_operation_budget import _table
    from vinestream.stream.pipeline import build_pipeline
    rng = np.random.default_rng(5)
    fused, array = build_pipeline(structure="coo", backend="gpu"), build_pipeline(structure="coo", backend="gpu")
    assert fused.vertex_map.fused and fused.structure.fused
    array.vertex_map.fused = array.structure.fused = False
    first = _table(np.ones(20_000, np.int8), rng.integers(0, 3000, 20_000), rng.integers(0, 3000, 20_000))
    fused.apply(first)
    array.apply(first)
    for step in range(6):
        live = to_numpy(array.vertices_external())
        src, dst = rng.choice(live, 1000), rng.choice(live, 1000)
        op = np.where(rng.random(1000) < 0.1, 2, 1).astype(np.int8)
        src[:30] = 10_000 + 100 * step + np.arange(30)        # new vertices every batch
        op[30:45] = 4                                         # vertex deletions
        batch = _table(op, src, dst)
        a, b = fused.apply(batch), array.apply(batch)
        assert a.counts == b.counts and a.counts["vertices_added"] >= 30, step
        edges = [sorted(zip(*(to_numpy(v).tolist() for v in p.edges_external()[:2]))) for p in (fused, array)]
        assert edges[0] == edges[1], step
        assert to_numpy(fused.vertices_external()).tolist() == live_after(array), step


def live_after(pipeline) -> list:
    return to_numpy(pipeline.vertices_external()).tolist()
