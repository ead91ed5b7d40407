"""A random batch stream run through two COO graphs, one fused and one the array program, whose
whole state must agree after every batch (slot for slot): shared by the CPU test (kernels emulated
on the host) and the GPU test (kernels on CuPy)."""
from __future__ import annotations

import numpy as np

from vinestream.structures.backend import to_numpy
from vinestream.structures.csr_types import CSR, CSRBatch
from vinestream.structures.registry import create

STATE = ("row_idx", "col_idx", "value", "deleted", "v_d", "_keys", "_slots", "_log_keys", "_log_slots")


def assert_same_state(a, b, where) -> None:
    for name in STATE:
        np.testing.assert_array_equal(to_numpy(getattr(a, name)), to_numpy(getattr(b, name)),
                                      err_msg=f"{where}: {name}")
    assert (a.head, a.tail, a.high_water, a.num_edges) == (b.head, b.tail, b.high_water, b.num_edges), where


def both_phases(xp, rng, fused, ref, vertices: int, step: int, ran: dict) -> None:
    """``edge_phases_counted(inserts, deletes)`` on the fused graph against the delete phase then the insert
    phase on the array program: disjoint key sets (as resolve hands them over), deletes of live and absent
    edges, inserts of new and existing ones; masks, counts and the whole state agree."""
    live = np.flatnonzero(to_numpy(ref.row_idx) >= 0)
    k = int(rng.choice([1, 20, 60, 300]))
    pick = rng.choice(live, min(k, live.size), replace=False) if live.size else np.zeros(0, np.int64)
    ks = np.concatenate([to_numpy(ref.row_idx)[pick], rng.integers(0, vertices, k)]).astype(np.int64)
    kd = np.concatenate([to_numpy(ref.col_idx)[pick], rng.integers(0, vertices, k)]).astype(np.int64)
    keys = np.unique((ks << 32) | kd)
    rng.shuffle(keys)
    half = len(keys) // 2
    dkeys, ikeys = keys[:half], keys[half:]
    dels = CSRBatch.from_edges(xp, xp.asarray(dkeys >> 32), xp.asarray(dkeys & 0xFFFFFFFF))
    ins = CSRBatch.from_edges(xp, xp.asarray(ikeys >> 32), xp.asarray(ikeys & 0xFFFFFFFF),
                              xp.asarray(rng.random(len(ikeys)).astype(np.float32)))
    new1, nn1, del1, ng1 = fused.edge_phases_counted(ins, dels)
    del2, ng2 = ref.delete_edges_counted(dels)
    new2, nn2 = ref.insert_edges_counted(ins)
    np.testing.assert_array_equal(to_numpy(new1), to_numpy(new2), err_msg=f"step {step} both: insert mask")
    np.testing.assert_array_equal(to_numpy(del1), to_numpy(del2), err_msg=f"step {step} both: delete mask")
    assert (nn1, ng1) == (nn2, ng2), step
    assert_same_state(fused, ref, f"step {step} both")
    ran["both"] += 1
    ran["new"] += nn1
    ran["gone"] += ng1


def rows_sorted(csr):
    """A CSR on the host with each row's entries sorted by column (then weight)."""
    offsets, cols, weights = (to_numpy(x) for x in (csr.offsets, csr.cols, csr.weights))
    rows = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
    order = np.lexsort((weights, cols, rows))
    return CSR(offsets=offsets, cols=cols[order], weights=weights[order])


def run_pair(xp, seed: int, steps: int = 30, vertices: int = 200, log_min: int = 4096) -> dict:
    """Random insert / delete / vertex-delete batches (capacity growth included) through a fused and an
    array-program COO graph on ``xp``: masks, counts, state and queries agree.  Returns what ran."""
    rng = np.random.default_rng(seed)
    fused = create("coo", xp, edge_capacity=16, vertex_capacity=8, fused=True, index_log_min=log_min)
    ref = create("coo", xp, edge_capacity=16, vertex_capacity=8, fused=False, index_log_min=log_min)
    fused.fused = True             # on NumPy the option alone is off (no CuPy); the caller emulates the kernels
    ran = {"insert": 0, "delete": 0, "new": 0, "gone": 0, "compactions": 0, "both": 0}
    for g in (fused, ref):
        g.insert_new_vertices(xp.arange(vertices, dtype=np.int32), vertices)     # int32: the fused path
    for step in range(steps):
        k = int(rng.choice([0, 1, 5, 50, 400]))
        s, d = rng.integers(0, vertices, k), rng.integers(0, vertices, k)
        w = rng.random(k).astype(np.float32)
        batch = CSRBatch.from_edges(xp, xp.asarray(s), xp.asarray(d), xp.asarray(w))
        op = "delete_edges_counted" if step % 3 == 2 else "insert_edges_counted"
        if step % 4 == 3:          # both phases at once (edge_phases_counted, one read) on disjoint key sets
            both_phases(xp, rng, fused, ref, vertices, step, ran)
        (m1, n1), (m2, n2) = getattr(fused, op)(batch), getattr(ref, op)(batch)
        np.testing.assert_array_equal(to_numpy(m1), to_numpy(m2), err_msg=f"step {step} {op} mask")
        assert n1 == n2 == int(np.count_nonzero(to_numpy(m1))), (step, op)
        ran["delete" if op.startswith("delete") else "insert"] += 1
        ran["gone" if op.startswith("delete") else "new"] += n1
        if step % 7 == 6:                       # vertex deletions free slots into the queue as well
            dead = xp.asarray(rng.choice(vertices, 3, replace=False))
            r1, r2 = fused.delete_live_vertices(dead), ref.delete_live_vertices(dead)
            for x, y in zip(r1, r2):
                np.testing.assert_array_equal(to_numpy(x), to_numpy(y))
            for g in (fused, ref):
                g.insert_new_vertices(dead.astype(np.int32), vertices)
        assert_same_state(fused, ref, f"step {step} {op}")
        qs, qd = xp.asarray(rng.integers(0, vertices, 100)), xp.asarray(rng.integers(0, vertices, 100))
        np.testing.assert_array_equal(to_numpy(fused.edge_weights(qs, qd)), to_numpy(ref.edge_weights(qs, qd)))
        np.testing.assert_array_equal(to_numpy(fused.contains(qs, qd)), to_numpy(ref.contains(qs, qd)))
        for size in (30, 150, None):            # rows of some vertices (repeats allowed), both count kernels;
            vs = None if size is None else xp.asarray(rng.integers(0, vertices, size))
            if size is None and step % 10 != 9:     # every row (this compacts both indexes) now and then
                continue
            a, b = fused.adjacency(vs), ref.adjacency(vs)
            if size is None:
                # the array program compacts its index for the whole graph, the kernels read it in place (rows
                # as the main part's entries, then the log's): the same rows, in another order within a row
                a, b = rows_sorted(a), rows_sorted(b)
                fused._compact_index()          # the states compared below stay slot for slot
            for name in ("offsets", "cols", "weights"):
                np.testing.assert_array_equal(to_numpy(getattr(a, name)), to_numpy(getattr(b, name)),
                                              err_msg=f"step {step} adjacency {name}")
        if step % 5 == 4:                       # queries of live edges too (random pairs are mostly absent)
            live = to_numpy(ref.row_idx) >= 0
            ls, ld = xp.asarray(to_numpy(ref.row_idx)[live]), xp.asarray(to_numpy(ref.col_idx)[live])
            assert bool(to_numpy(fused.contains(ls, ld)).all())
            np.testing.assert_array_equal(to_numpy(fused.edge_weights(ls, ld)), to_numpy(ref.edge_weights(ls, ld)))
    ran["compactions"] = ref.compactions
    ran.update(fused.combined_phases)
    return ran
