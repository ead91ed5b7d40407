"""BFS's in-edge log (algorithms/in_edge_log.InEdgeLog) against a Python set of edges: random net batches
(deletions of live edges, insertions of absent ones, often of the same few keys so that keys are deleted and
inserted again), folded one at a time and several at once; rows and keys equal the set's after every fold."""
from __future__ import annotations

import numpy as np
import pytest

from tests.backends import BACKENDS
from vinestream.algorithms.in_edge_log import InEdgeLog
from vinestream.structures.csr_types import csr_from_edges


def _keys(pairs):
    return np.asarray(sorted((d << 32) | s for s, d in pairs), dtype=np.int64)


def _launcher(xp, fused: bool, order: int):
    """None (the array program), or the fold kernels' launcher: the host emulation on NumPy."""
    if not fused:
        return None
    if xp is np:
        from tests import bfs_emulation as emu
        if not emu.available():
            pytest.skip("needs g++ for the host emulation")
        return emu.HostLauncher(order, seed=5)
    from vinestream.algorithms import bfs_kernels
    return bfs_kernels.launcher


@pytest.mark.parametrize("xp", BACKENDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("fused", [False, True], ids=["arrays", "kernels"])
def test_the_log_follows_net_batches(xp, seed, fused):
    """Both folds of a batch (the array program; the ``bfsl_*`` kernels, threads in any order): the same
    live in-edges, including rows past the snapshot's (vertices that came later)."""
    rng = np.random.default_rng(seed)
    n = 12
    live = {(int(a), int(b)) for a, b in rng.integers(0, n, size=(40, 2)) if a != b}
    s, d = np.asarray(sorted(live)).T
    in_csr = csr_from_edges(xp, xp.asarray(d), xp.asarray(s), None, n)
    log = InEdgeLog(xp, in_csr, launch=_launcher(xp, fused, seed))
    queued = []
    deferred = 0
    for step in range(30):
        dels = [e for e in sorted(live) if rng.random() < 0.15]
        ins = [(int(a), int(b)) for a, b in rng.integers(0, 6, size=(6, 2)) if a != b]
        ins += [(int(a), n + int(b)) for a, b in rng.integers(0, 3, size=(rng.integers(0, 3), 2))]   # new rows
        ins = sorted(set(ins) - live)
        live = (live - set(dels)) | set(ins)
        gone = xp.asarray(_keys([(a, b) for a, b in dels]))
        new = xp.asarray(_keys(ins))
        queued.append((gone[rng.permutation(gone.shape[0])] if gone.shape[0] else gone, new))
        if step % 3 == 2 or rng.random() < 0.5:          # one batch, or the queue of several at once
            log.fold([g for g, _ in queued], [x for _, x in queued])
            queued = []
            rows = np.arange(n + 3)                           # rows first: reading keys settles the log
            owner, cols = log.neighbours(xp.asarray(rows))
            owner = owner.get() if hasattr(owner, "get") else owner
            cols = cols.get() if hasattr(cols, "get") else cols
            assert {(int(c), int(rows[o])) for o, c in zip(owner, cols)} == live
            deferred += int(log.recent_dead.shape[0]) > 0
            if step % 7 == 6:
                got = log.keys
                got = got.get() if hasattr(got, "get") else got
                assert got.tolist() == _keys(live).tolist()
    assert log.take_work() > 0 and log.take_work() == 0
    assert deferred > 0 or xp is not np or fused             # the host's deferred deletions were read
