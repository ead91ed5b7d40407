"""PageRank, static and incremental (dynamic frontier), as array programs over ``xp``.

Definition (networkx ``pagerank(G, alpha=0.85, weight=None)``): with damping
``d``, ``n`` live vertices, out-degrees ``k`` and the dangling vertices (k = 0)
spreading their rank uniformly,

    x[v] = d * sum_{u -> v} x[u] / k[u]  +  d * (dangling mass) / n  +  (1 - d) / n.

**The unnormalised form.**  Everything on the right except the first term is
one scalar ``c`` shared by all vertices, so ``x = c * z`` where ``z`` solves

    z = 1 + d * P^T z          (P: the row-stochastic matrix of the real edges)

and ``c = 1 / sum(z)`` because ``x`` sums to 1.  ``z`` does not depend on ``n``
nor on which vertices are dangling: adding or removing a vertex, or making one
dangling, changes ``z`` only along the edges that changed, and the teleport and
dangling terms (which change *everyone's* rank) are recovered exactly by the
final normalisation.  This is what lets the incremental form stay local when
``n`` changes: no rescaling, no global fallback.

**Residual push.**  Both forms keep ``z`` and its residual
``r = 1 + d P^T z - z`` (exact, for the current graph).  Pushing a vertex ``u``
moves ``r[u]`` into ``z[u]`` and adds ``d * r[u] / k[u]`` to the residual of
each out-neighbour; a synchronous push of *all* vertices is one Jacobi / power
iteration (``static``: start from ``z = 0, r = 1``).  The reported ranks are
``(z + r) / sum(z + r)``, i.e. one pending iteration applied for free.

**Incremental** (the dynamic frontier of Sahu et al., "DF-PageRank", in push
form): a batch changes the contribution ``d z[u] / k[u]`` of every source ``u``
whose out-edges changed, so the residual is corrected exactly at those
sources' old and new out-neighbours (old ones are the new ones minus the
inserted plus the deleted edges, so only ``adjacency(changed sources)`` is
read).  Vertices whose residual exceeds the threshold form the frontier; each
round pushes the frontier and the vertices whose residual then exceeds the
threshold form the next one, so the frontier grows while rank changes are
large and dies out when they fall under the tolerance.  When the frontier is
a large part of the graph a round is done as a dense sweep over the full CSR
instead, and a batch larger than ``fallback_fraction`` of the edges goes
straight to dense sweeps (warm-started: still far fewer than from scratch).

**Tolerance.**  ``tol`` bounds the L1 change of the normalised ranks per
iteration, as in networkx (networkx scales it by ``n``; here it is a true L1
bound, ``sum |dx| < tol``, which is stricter).  The static form stops when
``sum |r| < tol * sum z``.  The incremental form leaves at most
``theta = frontier_tol * sum z`` in any vertex's residual, with
``frontier_tol = tol / n`` by default, so ``sum |r| < tol * sum z`` holds
there too and both forms carry the same error bound ``tol * d / (1 - d)``.
A larger ``frontier_tol`` trades that bound for a smaller frontier.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from vinestream.structures.array_ops import bincount, edge_keys, member, row_ids, scatter_add, unique_sorted
from vinestream.structures.backend import to_numpy
from vinestream.structures.base import DynamicGraph
from vinestream.structures.delta import BatchDelta

from .base import Job, grow

FLOAT = np.float64


def transpose_spmv(xp, csr, capacity: int, use_library: bool = True):
    """``x -> A^T x`` over ``capacity`` slots for the unweighted out-CSR ``csr`` (one pull per vertex).

    The array-program form is a gather plus a weighted ``bincount``.  Where
    ``scipy.sparse`` (NumPy) or ``cupyx.scipy.sparse`` (CuPy) is installed the
    dense sweeps use its SpMV on the same offsets and columns instead (cuSPARSE on
    the GPU, no atomics); the array program stays the reference and the tests
    check that both agree.
    """
    offsets = csr.offsets
    rows_now = offsets.shape[0] - 1
    if rows_now < capacity:
        offsets = xp.concatenate([offsets, xp.full(capacity - rows_now, offsets[-1], dtype=offsets.dtype)])
    elif rows_now > capacity:
        offsets = offsets[: capacity + 1]
    if use_library:
        try:
            if xp is np:
                import scipy.sparse as sp
            else:
                import cupyx.scipy.sparse as sp
            a = sp.csr_matrix((xp.ones(csr.num_edges, dtype=FLOAT), csr.cols, offsets),
                              shape=(capacity, capacity))
            at = a.T
            return lambda x: at @ x
        except (ImportError, ValueError, TypeError):    # no sparse library, or a matrix it refuses
            pass
    rows = row_ids(xp, offsets)
    return lambda x: bincount(xp, csr.cols, capacity, weights=x[rows])


class PageRank(Job):
    name = "pagerank"

    def __init__(self, xp=np, *, damping: float = 0.85, tol: float = 1e-6, max_iter: int = 1000,
                 fallback_fraction: float = 0.1, dense_fraction: float = 0.25,
                 frontier_tol: float | None = None, library_spmv: bool = True, **params):
        super().__init__(xp, **params)
        self.damping = float(damping)
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.fallback_fraction = float(fallback_fraction)   # changed edges / |E| above which: dense sweeps
        self.dense_fraction = float(dense_fraction)         # frontier edges / |E| above which a round is dense
        self.frontier_tol = frontier_tol
        self.library_spmv = bool(library_spmv)             # dense sweeps through scipy / cupyx SpMV
        self.z = xp.zeros(0, dtype=FLOAT)
        self.r = xp.zeros(0, dtype=FLOAT)
        self._ready = False

    # -- building blocks ---------------------------------------------------------------
    def _dense_sweeps(self, graph: DynamicGraph, live_mask, limit: int) -> tuple[int, int]:
        """Push every vertex each round (Jacobi) until ``sum |r| < tol * sum z``; (rounds, edges)."""
        xp, d = self.xp, self.damping
        csr = graph.adjacency()
        deg = xp.diff(csr.offsets).astype(FLOAT)
        cap = self.z.shape[0]
        spmv = transpose_spmv(xp, csr, cap, self.library_spmv)
        inv_deg = xp.where(deg > 0, d / xp.maximum(deg, 1), 0.0)
        inv_deg = grow(xp, inv_deg, cap, 0.0)[:cap]
        live = live_mask.astype(FLOAT)
        rounds = edges = 0
        while rounds < limit:
            # one host sync per sweep: the residual's L1 norm and the total rank mass together
            residual, total = xp.stack([xp.abs(self.r).sum(), self.z.sum() + self.r.sum()]).tolist()
            if residual < self.tol * total:
                break
            self.z += self.r
            # One SpMV: every edge u -> v carries d * r[u] / k[u] into r[v]; dead slots get nothing.
            self.r = xp.asarray(spmv(self.r * inv_deg), dtype=FLOAT) * live
            rounds += 1
            edges += csr.num_edges
        return rounds, edges

    def _frontier_rounds(self, graph: DynamicGraph, live_mask, candidates, num_edges: int):
        """Push only vertices whose residual exceeds the threshold; dense sweeps once it is wide."""
        xp, d = self.xp, self.damping
        n = max(int(live_mask.sum()), 1)
        frontier_tol = self.frontier_tol if self.frontier_tol is not None else self.tol / n
        theta = frontier_tol * float((self.z + self.r).sum())
        rounds = edges = visited = 0
        frontier = candidates[xp.abs(self.r[candidates]) > theta]
        touched = xp.zeros(self.z.shape[0], dtype=bool)
        while frontier.shape[0] and rounds < self.max_iter:
            deg = graph.degree(frontier).astype(FLOAT)
            if float(deg.sum()) > self.dense_fraction * max(num_edges, 1):
                touched[:] = True
                more, dense_edges = self._dense_sweeps(graph, live_mask, self.max_iter - rounds)
                return rounds + more, edges + dense_edges, n, True
            touched[frontier] = True
            rf = self.r[frontier]
            self.r[frontier] = 0.0
            self.z[frontier] += rf
            adj = graph.adjacency(frontier)
            owner = row_ids(xp, adj.offsets)
            push = xp.where(deg > 0, d * rf / xp.maximum(deg, 1), 0.0)
            scatter_add(xp, self.r, adj.cols, push[owner])
            edges += adj.num_edges
            rounds += 1
            cand = unique_sorted(xp, xp.concatenate([frontier, adj.cols.astype(frontier.dtype)]))
            frontier = cand[xp.abs(self.r[cand]) > theta]
        visited = int(touched.sum())
        return rounds, edges, visited, False

    # -- the two forms -------------------------------------------------------------------
    def run_static(self, graph: DynamicGraph, vertex_map) -> None:
        xp = self.xp
        live, live_mask = self._remember_live(graph)
        cap = int(live_mask.shape[0])
        self.z = xp.zeros(cap, dtype=FLOAT)
        self.r = live_mask.astype(FLOAT)          # residual of z = 0 is 1 everywhere
        rounds, edges = self._dense_sweeps(graph, live_mask, self.max_iter)
        self._ready = True
        self.work = {"mode": "static", "iterations": rounds, "edges_touched": edges,
                     "frontier": int(live.shape[0])}

    def update(self, graph: DynamicGraph, delta: BatchDelta, vertex_map) -> None:
        xp, d = self.xp, self.damping
        if not self._ready:
            return self.run_static(graph, vertex_map)
        live, live_mask = self._remember_live(graph)
        cap = int(live_mask.shape[0])
        self.z = grow(xp, self.z, cap, 0.0)
        self.r = grow(xp, self.r, cap, 0.0)
        edges = 0
        corrected = xp.zeros(0, dtype=np.int64)      # every vertex whose residual the corrections moved

        # 1. Exact residual corrections at the changed sources' old and new out-neighbours.
        ins_s, ins_d = delta.inserted_src, delta.inserted_dst
        del_s, del_d = delta.deleted_src, delta.deleted_dst
        sources = unique_sorted(xp, xp.concatenate([ins_s, del_s]).astype(np.int32))
        removed = xp.asarray(delta.vertices_removed, dtype=np.int64)
        added = xp.asarray(delta.vertices_added, dtype=np.int64)
        if sources.shape[0]:
            z_src = self.z[sources]
            was_removed = xp.zeros(cap, dtype=bool)
            was_removed[removed] = True
            survives = ~was_removed[sources]
            adj = graph.adjacency(sources)                          # new out-rows (rows after the batch)
            k_new = xp.diff(adj.offsets).astype(FLOAT)
            n_ins = bincount(xp, xp.searchsorted(sources, ins_s), sources.shape[0])
            n_del = bincount(xp, xp.searchsorted(sources, del_s), sources.shape[0])
            k_old = k_new - n_ins + n_del
            owner = row_ids(xp, adj.offsets)
            edges += adj.num_edges + del_s.shape[0]
            # old out-set = (new out-set minus inserted) plus deleted; survivors of removed slots
            # are not in the new rows (a removed vertex's new row belongs to its slot's new owner).
            inserted_keys = unique_sorted(xp, edge_keys(xp, ins_s, ins_d))
            kept = ~member(xp, inserted_keys, edge_keys(xp, sources[owner], adj.cols)) & survives[owner]
            old_share = xp.where(k_old > 0, d * z_src / xp.maximum(k_old, 1), 0.0)
            scatter_add(xp, self.r, adj.cols[kept], -old_share[owner[kept]])
            del_owner = xp.searchsorted(sources, del_s)
            scatter_add(xp, self.r, del_d, -old_share[del_owner])
            # Slots removed in this batch lose their values; slots (re)used start from z = 0, r = 1.
            self.z[removed] = 0.0
            self.r[removed] = 0.0
            self.z[added] = 0.0
            self.r[added] = 1.0
            new_share = xp.where(survives & (k_new > 0), d * z_src / xp.maximum(k_new, 1), 0.0)
            scatter_add(xp, self.r, adj.cols, new_share[owner])
            corrected = adj.cols.astype(np.int64)
        else:
            self.z[removed] = 0.0
            self.r[removed] = 0.0
            self.z[added] = 0.0
            self.r[added] = 1.0
        self.r[~live_mask] = 0.0
        self.z[~live_mask] = 0.0

        # 2. Propagate: a dynamic frontier, or dense sweeps when the batch is large.
        num_edges = int(graph.num_edges)
        if delta.num_changed_edges > self.fallback_fraction * max(num_edges, 1):
            rounds, more = self._dense_sweeps(graph, live_mask, self.max_iter)
            mode, visited = "fallback", int(live.shape[0])
        else:
            touched = xp.concatenate([corrected, del_d.astype(np.int64), added])
            touched = unique_sorted(xp, touched)
            touched = touched[live_mask[touched]] if touched.shape[0] else touched
            rounds, more, visited, went_dense = self._frontier_rounds(graph, live_mask, touched, num_edges)
            mode = "incremental+dense" if went_dense else "incremental"
        self.work = {"mode": mode, "iterations": rounds, "edges_touched": edges + more,
                     "frontier": visited}

    # -- results ---------------------------------------------------------------------------
    def ranks(self):
        """Normalised ranks over all slots (0 on dead slots)."""
        zz = self.z + self.r
        total = float(zz.sum())
        return zz / total if total > 0 else zz

    def output(self, vertex_map) -> pa.Table:
        rank = to_numpy(self.ranks()[self._live])
        return pa.table({"vertex": self._vertex_column(vertex_map), "rank": pa.array(rank, pa.float64())})

    def summary(self) -> dict:
        return {"pagerank_iterations": int(self.work.get("iterations", 0)),
                "pagerank_frontier": int(self.work.get("frontier", 0)),
                "pagerank_edges_touched": int(self.work.get("edges_touched", 0))}

    def state(self) -> dict:
        return self._host(z=self.z, r=self.r, live=self._live)

    def load_state(self, state: dict) -> None:
        self.z = self._device(state["z"], FLOAT)
        self.r = self._device(state["r"], FLOAT)
        self._live = self._device(state["live"], np.int32)
        self._ready = True
