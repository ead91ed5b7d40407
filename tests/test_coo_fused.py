"""COO's fused edge phases (structures/coo_kernels.py), their kernels emulated on the host with g++:
the same state as the array program, slot for slot, whatever order a launch's threads run in."""
from __future__ import annotations

from contextlib import ExitStack

import numpy as np
import pytest

from tests import coo_emulation as emu
from tests.coo_fused_support import run_pair
from vinestream.structures import coo_kernels as ck
from vinestream.structures.backend import count_operations
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create

pytestmark = pytest.mark.skipif(not emu.available(), reason="needs g++ for the host emulation of the COO kernels")


@pytest.fixture
def emulated():
    with ExitStack() as stack:
        yield lambda order=0, seed=1: stack.enter_context(emu.emulated(order, seed))


@pytest.mark.parametrize("log_min", [4096, 8], ids=["log", "compacting"])
@pytest.mark.parametrize("order, seed", [(0, 1), (1, 1), (2, 7), (2, 12345)])
def test_fused_path_matches_array_program(emulated, order, seed, log_min, monkeypatch):
    monkeypatch.setattr(ck, "BLOCK_FIND_MAX", 50)     # batches of 0-50 edges: coo_find_block; 400: coo_find
    launcher = emulated(order, seed)
    ran = run_pair(np, seed=seed + order, log_min=log_min)
    assert ran["new"] > 0 and ran["gone"] > 0                 # both phases really moved edges
    if log_min == 8:
        assert ran["compactions"] > 3                           # compactions between edge phases ran
    for kernel in ck.KERNELS:
        assert launcher.launches.get(kernel, 0) > 0, kernel


def test_fused_phases_cost_four_and_three_operations(emulated):
    """An insert of a 1,000-edge batch: find with its prefix sum (one block), one read, place, the log's
    merge; a delete: find with its prefix sum, one read, free (the index is not rewritten: the freed slots
    kill their entries)."""
    emulated()
    rng = np.random.default_rng(3)
    with count_operations() as c:
        g = create("coo", np)
        g.fused = True
        g.insert_new_vertices(np.arange(500), 500)
        for op in ("insert_edges_counted", "insert_edges_counted", "delete_edges_counted"):
            s, d = rng.integers(0, 500, 1000), rng.integers(0, 500, 1000)
            batch = CSRBatch.from_edges(np, s, d, np.ones(1000, np.float32))
            c.kinds.clear()
            mark = c.mark()
            _, n = getattr(g, op)(batch)
            assert n > 0
            insert = op == "insert_edges_counted"
            assert c.since(mark) == (4 if insert else 3), (op, c.kinds)
            assert sum(v for k, v in c.kinds.items() if k.startswith("launch:")) == (3 if insert else 2), c.kinds
    assert g.memory()["index_log_entries"] > 0 and g.memory()["index_dead_entries"] > 0     # no compaction yet


def test_fused_is_the_default_only_on_a_gpu():
    assert create("coo", np).fused is False


def test_fused_index_entries_die_with_their_slots_and_revive(emulated):
    from tests.test_coo_csr import slot_reuse_scenarios
    emulated()
    g = create("coo", np, index_log_min=1 << 20)
    g.fused = True
    slot_reuse_scenarios(g)
