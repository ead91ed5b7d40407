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
    assert ran["both"] > 0 and ran["one_read"] > 0            # edge_phases_counted's one-read path ran
    if log_min == 8:
        assert ran["compactions"] > 3                           # compactions between edge phases ran
    for kernel in ck.KERNELS:
        assert launcher.launches.get(kernel, 0) > 0, kernel


def test_fused_phases_cost_four_and_two_operations(emulated):
    """An insert of a 1,000-edge batch: find with its prefix sum (one block), one read, place, the log's
    merge; a delete: find with its prefix sum and the release of the found slots (one block), one read (the
    index is not rewritten: the freed slots kill their entries)."""
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
            assert c.since(mark) == (4 if insert else 2), (op, c.kinds)
            assert sum(v for k, v in c.kinds.items() if k.startswith("launch:")) == (3 if insert else 1), c.kinds
    assert g.memory()["index_log_entries"] > 0 and g.memory()["index_dead_entries"] > 0     # no compaction yet


def test_fused_is_the_default_only_on_a_gpu():
    assert create("coo", np).fused is False


def test_fused_index_entries_die_with_their_slots_and_revive(emulated):
    from tests.test_coo_csr import slot_reuse_scenarios
    emulated()
    g = create("coo", np, index_log_min=1 << 20)
    g.fused = True
    slot_reuse_scenarios(g)


def _graph_with_edges(rng, log_min: int, fused: bool):
    g = create("coo", np, index_log_min=log_min, fused=fused)
    g.fused = fused
    g.insert_new_vertices(np.arange(500, dtype=np.int32), 500)
    s, d = rng.integers(0, 500, 2000), rng.integers(0, 500, 2000)
    g.insert_edges_counted(CSRBatch.from_edges(np, s, d, np.ones(2000, np.float32)))
    g._compact_index()                        # everything in the main part: the dead-entry limit is main / 4
    return g, np.unique((s.astype(np.int64) << 32) | d)


def _disjoint_batches(rng, keys, n_del: int):
    """Deletes of ``n_del`` live keys and 20 absent ones; inserts of new keys and of 50 live ones (upserts)."""
    dkeys = np.concatenate([keys[:n_del], (np.int64(600) << 32) + np.arange(20)])
    fresh = rng.integers(0, 500, (2, 1000))
    ikeys = np.concatenate([np.setdiff1d(np.unique((fresh[0].astype(np.int64) << 32) | fresh[1]), dkeys),
                            keys[-50:]])
    ikeys = np.unique(ikeys)
    dels = CSRBatch.from_edges(np, dkeys >> 32, dkeys & 0xFFFFFFFF)
    ins = CSRBatch.from_edges(np, ikeys >> 32, ikeys & 0xFFFFFFFF, rng.random(len(ikeys)).astype(np.float32))
    return ins, dels


def test_both_edge_phases_cost_one_read(emulated):
    """``edge_phases_counted``: the delete's find and release and the insert's find queued, one read of
    both totals, then the insert's place and the log's merge: four launches (the delete's find and release
    are one), one transfer (the two phases one after the other read twice)."""
    from vinestream.structures.backend import count_transfers
    emulated()
    rng = np.random.default_rng(5)
    g, keys = _graph_with_edges(rng, 4096, True)
    ins, dels = _disjoint_batches(rng, keys, 300)
    with count_transfers() as t, count_operations() as c:
        new_mask, n_new, del_mask, n_gone = g.edge_phases_counted(ins, dels)
    assert n_gone == 300 and int(del_mask.sum()) == 300 and n_new == int(np.count_nonzero(new_mask)) > 0
    assert t.count == 1, t.kinds
    assert sorted(k for k in c.kinds if k.startswith("launch:")) == [
        "launch:coo_delete_block", "launch:coo_find_block", "launch:coo_index_merge", "launch:coo_insert_place"]
    assert all(v == 1 for k, v in c.kinds.items() if k.startswith("launch:")), c.kinds
    assert g.combined_phases == {"one_read": 1, "insert_again": 0}


@pytest.mark.parametrize("order", [0, 2])
def test_both_edge_phases_when_the_delete_compacts(emulated, order):
    """A delete that kills over a quarter of the index compacts it before the insert: the insert's found
    positions are stale, and it runs again from its find; the state is the array program's, slot for slot."""
    from tests.coo_fused_support import assert_same_state
    emulated(order, 3)
    fused, keys = _graph_with_edges(np.random.default_rng(9), 8, True)
    ref, _ = _graph_with_edges(np.random.default_rng(9), 8, False)
    ins, dels = _disjoint_batches(np.random.default_rng(4), keys, len(keys) // 2)
    new1, nn1, del1, ng1 = fused.edge_phases_counted(ins, dels)
    del2, ng2 = ref.delete_edges_counted(dels)
    new2, nn2 = ref.insert_edges_counted(ins)
    np.testing.assert_array_equal(new1, new2)
    np.testing.assert_array_equal(del1, del2)
    assert (nn1, ng1) == (nn2, ng2) and ng1 == len(keys) // 2
    assert fused.combined_phases == {"one_read": 1, "insert_again": 1}
    assert_same_state(fused, ref, "after both phases")


def test_whole_adjacency_reads_nothing_and_matches_the_array_program(emulated):
    """The whole graph's CSR on the fused path: the compaction and the row kernels, no read (the total is the
    live edge count the host keeps); rows equal the array program's, edge for edge."""
    from vinestream.structures.backend import count_transfers, to_numpy
    emulated()
    rng = np.random.default_rng(11)
    graphs = []
    for fused in (True, False):
        g, keys = _graph_with_edges(np.random.default_rng(11), 4096, fused)
        ins, dels = _disjoint_batches(np.random.default_rng(12), keys, 300)
        g.delete_edges_counted(dels)
        g.insert_edges_counted(ins)                # the log and dead entries both hold something
        graphs.append(g)
    fused_g, plain = graphs
    assert fused_g.memory()["index_log_entries"] > 0 and fused_g.memory()["index_dead_entries"] > 0
    with count_transfers() as t:
        csr = fused_g.adjacency()
        assert t.count == 0, t.kinds
    ref = plain.adjacency()
    offsets, ref_offsets = to_numpy(csr.offsets), to_numpy(ref.offsets)
    assert offsets.tolist() == ref_offsets.tolist() and int(offsets[-1]) == fused_g.num_edges
    for row in rng.choice(500, 60, replace=False):
        a, b = offsets[row], offsets[row + 1]
        got = sorted(zip(to_numpy(csr.cols)[a:b].tolist(), to_numpy(csr.weights)[a:b].tolist()))
        want = sorted(zip(to_numpy(ref.cols)[a:b].tolist(), to_numpy(ref.weights)[a:b].tolist()))
        assert got == want
