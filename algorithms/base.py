"""The interface the pipeline drives every analytics job through.

A job has a *static* form (compute from scratch on the structure's CSR) and an
*incremental* form (bring the previous result up to date with one
:class:`~stream.delta.BatchDelta`, falling back to the static form when that is
cheaper or when the delta cannot be followed).  Results live on internal ids
over ``graph.vertex_capacity`` slots; dead slots are ignored and every output
speaks external ids through the vertex map.

Call order (``stream/pipeline.py``): ``run_static`` once (or after a delta the
pipeline cannot merge), then ``update`` after each batch, then ``summary``, and
``output`` only when a sink asks for it.  ``update`` and ``summary`` never pass
over all vertices or edges: the live set is followed from the delta
(:meth:`Job._follow_live`) and summaries are kept as running counts; only
``output`` (one row per live vertex) and ``run_static`` are whole-graph
passes. ``work`` describes the last call, so that incremental and static runs
can be compared by what they did, not only by how long they took.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import pyarrow as pa

from vinestream.structures.array_ops import fill_at
from vinestream.structures.backend import asarray, to_numpy, to_numpy_all, to_numpy_async
from vinestream.structures.base import DynamicGraph
from vinestream.structures.delta import BatchDelta


class Job(ABC):
    """One analytics job (PageRank, BFS, triangles) over a dynamic graph."""

    #: job name (``--jobs NAME``; the output directory ``OUT/<name>/``)
    name: str = ""

    def __init__(self, xp=np, **params):
        self.xp = xp
        self.params = params
        #: counters of the last run_static/update: edges_touched, iterations, mode, ...
        self.work: dict = {}
        self._live_mask = xp.zeros(0, dtype=bool)  # live slots at the last call (grows geometrically)
        self._live_ids = None                      # its nonzero ids, computed when an output asks

    # -- computing ---------------------------------------------------------------
    @abstractmethod
    def run_static(self, graph: DynamicGraph, vertex_map) -> None:
        """Compute the result from scratch on ``graph``."""

    @abstractmethod
    def update(self, graph: DynamicGraph, delta: BatchDelta, vertex_map) -> None:
        """Bring the result up to date: ``graph`` is already the state after ``delta``."""

    # -- results -----------------------------------------------------------------
    def columns(self, vertex_map) -> dict:
        """The output as ``{name: (xp array, validity mask or None)}``, one row per live vertex,
        ``vertex`` (external int64 ids) first; arrays stay on the job's device.  Here: the live rows of
        :meth:`slot_columns` (a job that gives none overrides this)."""
        slots = self.slot_columns(vertex_map)
        if slots is None:
            raise NotImplementedError(f"{type(self).__name__} gives neither columns nor slot_columns")
        live = self._live
        out = {"vertex": self._vertex_column(vertex_map)}
        for name, (values, valid, dtype) in slots[1].items():
            out[name] = (values[live].astype(dtype, copy=False), None if valid is None else valid[live])
        return out

    def output(self, vertex_map) -> pa.Table:
        """One row per live vertex: ``vertex`` (external int64 id) and the job's value columns (host Arrow)."""
        return arrow_table(self.columns(vertex_map))

    def slot_columns(self, vertex_map):
        """:meth:`columns` over every slot instead of the live ones: ``(live mask, {name: (values, validity mask or
        None, dtype)})`` without ``vertex``, the arrays on the job's device and at least as long as the live
        mask's live part, ``dtype`` the column's (cast on the host).  What :func:`snapshot_tables` copies without
        reading how many vertices are live; None where a job does not give it (its :meth:`columns` are used)."""
        return None

    @abstractmethod
    def summary(self) -> dict:
        """Scalars for ``summary.parquet`` (names prefixed by the job, e.g. ``pagerank_iterations``)."""

    # -- checkpoints -------------------------------------------------------------
    @abstractmethod
    def state(self) -> dict:
        """Host (NumPy) arrays and scalars from which ``load_state`` restores the job exactly."""

    @abstractmethod
    def load_state(self, state: dict) -> None:
        """Restore what ``state`` returned (arrays are moved to ``self.xp``)."""

    # -- helpers for subclasses --------------------------------------------------
    @property
    def _live(self):
        """Live internal ids (int32, ascending): a pass over the slots, so only outputs call it."""
        if self._live_ids is None:
            self._live_ids = self.xp.nonzero(self._live_mask)[0].astype(np.int32)
        return self._live_ids

    def _set_live(self, ids, capacity: int) -> None:
        """Restore the live set from ids (checkpoints), over at least ``capacity`` slots."""
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        cap = max(int(capacity), int(ids.max()) + 1 if ids.shape[0] else 0)
        self._live_mask = xp.zeros(cap, dtype=bool)
        self._live_mask[ids] = True
        self._live_ids = None

    def _remember_live(self, graph: DynamicGraph):
        """Static form: the live vertices and a live mask over ``graph.vertex_capacity`` (a pass over all slots)."""
        xp = self.xp
        live = xp.asarray(graph.vertices(), dtype=np.int32)
        mask = xp.zeros(int(graph.vertex_capacity), dtype=bool)
        mask[live.astype(np.intp) if xp is np else live] = True     # NumPy scatters faster on intp
        self._live_mask, self._live_ids = mask, live
        return live, mask

    def _follow_live(self, graph: DynamicGraph, delta: BatchDelta):
        """Incremental form: the live mask brought up to date from the delta alone (O(batch)).

        The mask grows geometrically when the structure's vertex capacity passes it,
        so its length (the job's capacity) changes only O(log V) times.
        """
        xp = self.xp
        need = int(graph.vertex_capacity)
        mask = self._live_mask
        if mask.shape[0] < need:
            mask = grow(xp, mask, max(need, 2 * int(mask.shape[0])), False)
        # the ids as they come (int32 on a GPU): a cast of each would be one more launch per job and batch
        removed = delta.vertices_removed if isinstance(delta.vertices_removed, xp.ndarray) \
            else xp.asarray(delta.vertices_removed, dtype=np.int64)
        added = delta.vertices_added if isinstance(delta.vertices_added, xp.ndarray) \
            else xp.asarray(delta.vertices_added, dtype=np.int64)
        if removed.shape[0]:
            fill_at(xp, mask, removed, False)
        if added.shape[0]:
            fill_at(xp, mask, added, True)
        self._live_mask = mask
        self._live_ids = None
        return mask

    def _vertex_column(self, vertex_map):
        """The ``vertex`` output column: external ids of the live vertices (int64, on the device)."""
        return self.xp.asarray(vertex_map.external(self._live), dtype=np.int64), None

    def _host(self, **arrays) -> dict:
        return {k: to_numpy(v) for k, v in arrays.items()}

    def _device(self, a, dtype=None):
        return asarray(self.xp, a, dtype=dtype)


def arrow_table(columns: dict) -> pa.Table:
    """``{name: (xp array, validity mask or None)}`` (as :meth:`Job.columns` gives) as a host Arrow table,
    every array copied in one device -> host transfer (an output has 2-4 device arrays, and a copy of
    its own each waits for the device each time)."""
    return arrow_tables({None: columns})[None]


def arrow_tables(columns_by_job: dict) -> dict:
    """``{job: columns}`` as ``{job: host Arrow table}``, every array of every job in one device -> host
    transfer: a sink that writes all of an epoch's outputs waits for the device once, not once a job."""
    host = iter(to_numpy_all(a for columns in columns_by_job.values()
                             for values, valid in columns.values() for a in (values, valid)))
    tables = {}
    for job, columns in columns_by_job.items():
        data = {}
        for name in columns:
            values, valid = next(host), next(host)
            data[name] = pa.array(values, mask=None if valid is None else ~valid)
        tables[job] = pa.table(data)
    return tables


def _keeps_output(job) -> bool:
    """Whether ``job.output`` is :meth:`Job.output` (its table made from its columns), not a replacement of its
    class or of the instance."""
    return getattr(job.output, "__func__", None) is Job.output


def snapshot_tables(jobs, vertex_map):
    """Start copying the jobs' outputs to the host now, without a wait; return a function that makes the tables
    (``{job name: output table}``, equal to :func:`job_tables`'), waiting for the copies only then, or None
    where a job gives no :meth:`Job.slot_columns` or replaces :meth:`Job.output`.

    Every slot's values and each job's live mask go to the host by one asynchronous copy (``to_numpy_async``:
    the stream runs the next batch after them, so later updates cannot change them); the host picks the live
    rows.  On a GPU a sink thereby lets the next batch start while its tables are made on its own thread: the
    columns' form reads how many vertices are live (``nonzero``) and waits for the jobs to finish."""
    jobs = list(jobs)
    slots = [job.slot_columns(vertex_map) if _keeps_output(job) else None for job in jobs]
    if any(s is None for s in slots):
        return None
    ext = vertex_map.external_of
    arrays, layout = [], []

    def add(a):
        arrays.append(a)
        return len(arrays) - 1

    longest = 0
    for job, (mask, cols) in zip(jobs, slots):
        n = min([int(mask.shape[0]), int(ext.shape[0])] + [int(v.shape[0]) for v, _, _ in cols.values()])
        longest = max(longest, n)
        layout.append((job.name, add(mask[:n]),
                       {name: (add(v[:n]), None if m is None else add(m[:n]), dtype)
                        for name, (v, m, dtype) in cols.items()}))
    at_ext = add(ext[:longest])
    copy = to_numpy_async(arrays)

    def tables() -> dict:
        host = copy.result()
        out = {}
        for name, at_mask, cols in layout:
            live = np.flatnonzero(host[at_mask])
            data = {"vertex": pa.array(host[at_ext][live].astype(np.int64, copy=False))}
            for col, (at_v, at_m, dtype) in cols.items():
                values = host[at_v][live].astype(dtype, copy=False)
                data[col] = pa.array(values, mask=None if at_m is None else ~host[at_m][live])
            out[name] = pa.table(data)
        return out
    return tables


def job_tables(jobs, vertex_map) -> dict:
    """``{job name: job.output(vertex_map)}``, the jobs that keep :meth:`Job.output` as it is copied together
    (:func:`arrow_tables`), any other through its own ``output``."""
    jobs = list(jobs)
    together = {job.name: job.columns(vertex_map) for job in jobs if _keeps_output(job)}
    tables = arrow_tables(together) if together else {}
    return {job.name: tables[job.name] if job.name in tables else job.output(vertex_map) for job in jobs}


def grow(xp, a, capacity: int, fill):
    """``a`` extended with ``fill`` up to ``capacity`` entries (vertex capacity only grows)."""
    if a.shape[0] >= capacity:
        return a
    out = xp.full(capacity, fill, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out

