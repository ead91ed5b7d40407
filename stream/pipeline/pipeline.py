"""Apply validated event batches to a structure and run the jobs: the heart of `replay` and `run`.

One ``apply`` call is one epoch:

    resolve   net effect of the batch (stream.resolve)
    vertices  delete old vertices (their edges go with them), free and re-assign ids
    csr       map edge keys to internal ids and group them by source (CSRBatch)
    delete    delete phase  } disjoint edge sets: independent phases, on two CUDA
    insert    insert phase  } streams when the structure allows it
    edges     the two at once, timed together (``concurrent_phases`` structures, and those with
              ``combined_edge_phases``: coo's fused path reads both phases' sizes in one transfer)
    <job>     each job, incremental from the BatchDelta (every ``jobs_every`` epochs)

On a GPU a batch of at most ``resolve_kernels.CAPACITY`` rows runs resolve, the CSR
batches and the delta as one fused kernel launch each (``small_batch_kernels``; the
array program stays the reference and the path of larger batches and of NumPy).

Every phase is timed without stopping the device (CUDA events on a GPU, read only
when ``BatchResult.seconds`` is read; ``perf_counter`` on the CPU), and a job's
vertex-sized output is computed only when a sink reads ``BatchResult.job_outputs``.
"""
from __future__ import annotations

import functools
import json
import logging
import os
import threading
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vinestream.algorithms import JOB_OPTIONS, JOBS, create_job, job_option_problem
from vinestream.algorithms.base import arrow_table, job_tables, snapshot_tables
from vinestream.stream.batching import resolve_kernels
from vinestream.stream.batching.batcher import split
from vinestream.stream.batching.resolve import EventArrays, net_effect
from vinestream.stream.batching.ttl import EdgeTTL
from vinestream.stream.batching.vertex_map import VertexMap
from vinestream.stream.errors import UsageError
from vinestream.stream.events.device import DeviceEvents, host_events
from vinestream.stream.events.schema import EVENT_SCHEMA, Op, is_vertex_id
from vinestream.structures import registry
from vinestream.structures.array_ops import compact
from vinestream.structures.backend import (
    PhaseSeconds,
    as_contiguous,
    free_device_cache,
    get_backend,
    is_gpu,
    phase_timer,
    to_numpy,
)
from vinestream.structures.base import DynamicGraph, phase_streams
from vinestream.structures.csr_types import VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch
from vinestream.structures.delta import BatchDelta

log = logging.getLogger(__name__)


@dataclass
class _Update:
    """One structure update (a whole batch, or one part of a split batch)."""
    delta: BatchDelta
    counts: dict
    seconds: dict


class JobOutputs(Mapping):
    """``{job name: output table}`` computed on first read (a sink that writes no job outputs
    costs nothing); readable until the pipeline's jobs move on to the next epoch, or at any later time
    once :meth:`snapshot` has been called."""

    def __init__(self, pipeline: Pipeline, jobs):
        self._pipeline = pipeline
        self._generation = pipeline._job_generation
        self._jobs = {job.name: job for job in jobs}
        self._tables: dict = {}
        self._pending = None                 # snapshot(): makes every table from the copies under way
        self._snapshotted = False
        self._lock = threading.Lock()        # a sink's writer thread and the loop may both read

    def snapshot(self) -> None:
        """Take this epoch's outputs now, so that they stay readable after the jobs move on: on a GPU their
        copies to the host start (:func:`algorithms.base.snapshot_tables`) and the tables are made at the first
        read, which may come from another thread while the next batch runs; on NumPy the tables are made now."""
        if self._snapshotted:               # no lock: a writer thread may hold it, waiting for the copies
            return
        with self._lock:
            if self._snapshotted or len(self._tables) == len(self._jobs):
                self._snapshotted = True
                return
            self._check_current(next(iter(self._jobs), ""))
            rest = self._unmade()
            if self._pipeline.on_gpu:
                self._pending = snapshot_tables(rest, self._pipeline.vertex_map)
            if self._pending is None:
                self._tables.update(job_tables(rest, self._pipeline.vertex_map))
            self._snapshotted = True

    def _unmade(self) -> list:
        """The jobs whose tables are not made yet."""
        return [job for name, job in self._jobs.items() if name not in self._tables]

    def _check_current(self, name) -> None:
        if self._pipeline._job_generation != self._generation:
            raise RuntimeError(f"the {name} output of this epoch is gone: the jobs have run again since; "
                               "read job_outputs before the next apply")

    def __getitem__(self, name):
        if name not in self._jobs:
            raise KeyError(name)
        with self._lock:
            if name not in self._tables:
                if self._pending is not None:
                    pending, self._pending = self._pending, None
                    self._tables.update(pending())
                else:
                    self._check_current(name)
                    # every job's table at the first read (a sink writes them all): one wait for the device
                    self._tables.update(job_tables(self._unmade(), self._pipeline.vertex_map))
            return self._tables[name]

    def __iter__(self):
        return iter(self._jobs)

    def __len__(self):
        return len(self._jobs)


@dataclass
class BatchResult:
    """One epoch.  ``delta`` is None only for a batch applied in parts whose deltas cannot be merged
    (vertex slots removed and reused across parts); the jobs still get every part's delta."""
    epoch: int
    delta: BatchDelta | None
    counts: dict
    seconds: dict
    job_summaries: dict = field(default_factory=dict)
    job_outputs: Mapping = field(default_factory=dict)   # job name -> pa.Table (external ids), on read

    def summary_row(self, *, invalid: int | None = None, offsets: dict | None = None,
                    batches: int | None = None) -> dict:
        """The row of ``summary.parquet`` (and of the Kafka results topic) for this epoch.

        ``batches``: the input batches this row stands for (this epoch's, and those before it since the last
        row whose every event was rejected: they have no epoch).  ``offsets`` (``{TopicPartition or (topic,
        partition): next offset}``) are the source positions the epoch includes, stored as a JSON object string.
        """
        row = {"epoch": self.epoch, **self.counts}
        if invalid is not None:
            row["invalid"] = int(invalid)
        if batches is not None:
            row["batches"] = int(batches)
        row.update({f"{phase}_ms": s * 1e3 for phase, s in self.seconds.items()})
        row.update(self.job_summaries)
        if offsets:
            row["source_offsets"] = json.dumps({f"{getattr(tp, 'topic', tp[0])}:{getattr(tp, 'partition', tp[-1])}":
                                                int(o) for tp, o in offsets.items()}, sort_keys=True)
        return row


class Pipeline:
    """Event batches in, an up-to-date graph and job results out.

    ``apply(events)`` applies one validated batch (``EVENT_SCHEMA``) to ``structure`` as
    one epoch: its net effect, the vertex phase, the delete and insert phases, then the
    jobs (incrementally from the batch's :class:`BatchDelta`, every ``jobs_every``
    epochs).  ``edges()``, ``vertices()`` and ``results()`` read the state back as
    Arrow tables in external ids.  Build one by names with :func:`build_pipeline`.

    Examples
    --------
    >>> from vinestream import build_pipeline, events
    >>> pipeline = build_pipeline(structure="coo", backend="cpu", jobs=["triangles"])
    >>> result = pipeline.apply(events(op=["add", "add", "add"], src=[1, 2, 3], dst=[2, 3, 1]))
    >>> result.counts["inserted"], pipeline.results()["triangles"].column("triangles").to_pylist()
    (3, [1, 1, 1])
    """

    def __init__(self, structure: DynamicGraph, *, undirected: bool = False,
                 keep_self_loops: bool = False, jobs=(), jobs_every: int = 1,
                 max_batch_events: int | None = None, edge_ttl: float | None = None,
                 small_batch_kernels: bool | None = None):
        self.structure = structure
        self.xp = structure.xp
        #: resolve, the CSR batches and the delta of a batch of at most ``resolve_kernels.CAPACITY``
        #: events as one fused launch each (stream/batching/resolve_kernels.py); default: on a GPU unless
        #: ``$VINESTREAM_SMALL_BATCH_KERNELS`` is ``0`` (to measure the array program side by side)
        if small_batch_kernels is None:
            small_batch_kernels = is_gpu(self.xp) and os.environ.get("VINESTREAM_SMALL_BATCH_KERNELS", "1") != "0"
        self.small_batch_kernels = bool(small_batch_kernels)
        self.vertex_map = VertexMap(self.xp)
        self.undirected = undirected
        self.keep_self_loops = keep_self_loops
        self.jobs = list(jobs)
        self.jobs_every = max(1, int(jobs_every))
        self.epoch = 0
        self.max_batch_events = max_batch_events   # larger batches are applied in parts
        self._pending: list[BatchDelta] = []   # deltas since the jobs last ran
        self._jobs_initialised = False
        self._structure_touched = False
        #: sliding window in event time (stream/batching/ttl.py): expired edges become deletes
        self.edge_ttl = None if edge_ttl is None else EdgeTTL(edge_ttl, undirected=undirected,
                                                              keep_self_loops=keep_self_loops)
        self._job_generation = 0              # bumped each time the jobs run (JobOutputs checks it)
        #: the next batch's net effect, launched by ``apply(next_events=...)`` before this batch's jobs
        self._resolve_ahead: _ResolveAhead | None = None
        self._resolve_stream = None           # CuPy: the stream it runs on (made on first use)
        self._resolve_staging = None          # ... and its upload and header buffers
        self.resolved_ahead = 0               # batches whose resolve ran ahead (and was used)

    # -- one batch ----------------------------------------------------------------
    def apply(self, events: pa.Table, next_events=None) -> BatchResult:
        """Apply one validated batch (EVENT_SCHEMA) as one epoch and return what changed.

        A batch larger than ``max_batch_events``, or one that runs out of memory before
        the structure is touched, is applied in parts (halving on each out-of-memory);
        the jobs then run once, on the parts' deltas.  An out-of-memory error after the
        structure changed cannot be undone and is raised (a worker restarts from its
        last checkpoint).

        ``next_events``: the batch the caller will apply next, if it knows it (or a function returning
        it or None, asked once this batch's structure update is done).  On a GPU its resolve
        (the fused kernels, one thread block each) is launched on a stream of its own once this
        batch's vertex phase is done - resolve reads the vertex map and nothing else - so that it runs
        while this batch's jobs are launched; the next ``apply`` of that same table then only reads
        its sizes (and that epoch's ``resolve`` time is that read).  A different table, or a vertex
        map changed in between, drops it.  Same results either way.

        Raises ``UsageError`` for anything but an event batch (before the epoch counts).
        """
        if not isinstance(events, DeviceEvents):
            check_event_batch(events)
        self.epoch += 1
        expired = 0
        if self.edge_ttl is not None:      # the TTL's event-time bookkeeping is on the host
            events, expired = self.edge_ttl.extend(host_events(events))
        parts = self._update_structure(events)
        delta = parts[0].delta if len(parts) == 1 else merge_deltas(self.xp, [p.delta for p in parts])
        seconds = PhaseSeconds()
        counts: dict[str, int] = {}
        for part in parts:
            seconds.absorb(part.seconds)
            for key, value in part.counts.items():
                counts[key] = counts.get(key, 0) + value
        counts["vertices"] = self.structure.num_vertices
        counts["edges"] = self.structure.num_edges
        if self.edge_ttl is not None:
            counts["expired"] = expired
            # the batch's events, not the delete events the window appended for its expired edges
            counts["events"] -= expired
        if len(parts) > 1:
            counts["parts"] = len(parts)
        result = BatchResult(self.epoch, delta, counts, seconds)
        if callable(next_events):
            next_events = next_events()
        if next_events is not None:
            self._launch_resolve_ahead(next_events)
        self._run_jobs(result, [p.delta for p in parts])
        # the structure's memory at the epoch's end, read once: summary.parquet (and the report) and the Prometheus
        # gauge both take these values.  After the jobs, whose reads may change it (coo compacts its index log):
        # read before them here and after them by the metrics, the two differed by a few bytes.
        memory = self.structure.memory()
        counts["reserved_bytes"] = int(memory.get("reserved_bytes", 0))
        counts["used_bytes"] = int(memory.get("used_bytes", 0))
        return result

    def _launch_resolve_ahead(self, events) -> None:
        """Launch the fused resolve of ``events`` (the next batch) now, without waiting (see ``apply``)."""
        self._drop_resolve_ahead()
        n = events.num_rows
        if (not self._resolves_fused(n) or self.edge_ttl is not None or resolve_kernels.GRAPHS
                or (self.max_batch_events and n > self.max_batch_events)):
            return
        xp, vmap = self.xp, self.vertex_map
        if self._resolve_staging is None:
            # its own upload and header buffers: other launches on this thread (another pipeline's) may run
            # before it is read, on the thread's shared ones
            self._resolve_staging = resolve_kernels.Staging()
        launch = functools.partial(resolve_kernels.launch_net_effect, xp, events, vmap, undirected=self.undirected,
                                   keep_self_loops=self.keep_self_loops, staging=self._resolve_staging,
                                   sort_in_block=resolve_kernels.AHEAD_SORT_IN_BLOCK)
        try:
            if xp is np:                      # the host emulation of the kernels: it runs at once
                pending = launch()
            else:
                if self._resolve_stream is None:
                    self._resolve_stream = xp.cuda.Stream(non_blocking=True)
                side = self._resolve_stream
                # after everything queued so far: the vertex phase's writes to the map, and the last uses of
                # any memory the side stream's allocations may be handed back by CuPy's pool
                side.wait_event(xp.cuda.get_current_stream().record())
                with side:
                    pending = launch()
        except MemoryError:                   # only a head start: the next apply resolves it in turn
            log.debug("no memory to resolve the next batch ahead")
            if xp is not np:
                self._resolve_stream.synchronize()
            return
        self._resolve_ahead = _ResolveAhead(events, vmap, vmap.version, pending)

    def _resolves_fused(self, num_events: int) -> bool:
        """Whether a batch of ``num_events`` events is resolved by the fused kernels (in turn or ahead)."""
        return self.small_batch_kernels and resolve_kernels.fits(num_events, self.undirected)

    def _take_resolve_ahead(self, events):
        """The net effect of ``events`` launched ahead, if it is still valid; else None (it is dropped)."""
        ahead, vmap = self._resolve_ahead, self.vertex_map
        if ahead is None or not (ahead.events is events and ahead.vmap is vmap and ahead.version == vmap.version):
            self._drop_resolve_ahead()
            return None
        self._resolve_ahead = None
        self.resolved_ahead += 1
        return resolve_kernels.finish_net_effect(ahead.pending)

    def _drop_resolve_ahead(self) -> None:
        """Wait for a launched resolve ahead and forget it (before the vertex map may change)."""
        ahead, self._resolve_ahead = self._resolve_ahead, None
        if ahead is not None:
            ahead.pending.abandon()

    def _update_structure(self, events: pa.Table) -> list:
        """The structure update of ``events``, split into parts that fit (see ``apply``)."""
        limit = self.max_batch_events
        if limit and events.num_rows > limit:
            return [u for part in split(events, limit) for u in self._update_structure(part)]
        try:
            return [self._update_once(events)]
        except MemoryError:               # numpy's, and CuPy's OutOfMemoryError (a subclass)
            if self._structure_touched or events.num_rows < 2:
                raise
            half = (events.num_rows + 1) // 2
            log.warning("batch of %d events does not fit in memory: applying it in parts of %d",
                        events.num_rows, half)
            self.max_batch_events = half          # remembered for the batches that follow
            free_device_cache(self.xp)
            return self._update_structure(events.slice(0, half)) + self._update_structure(events.slice(half))

    def _update_once(self, events: pa.Table) -> _Update:
        """Resolve, then the vertex, CSR, delete and insert phases, for one part."""
        xp, graph, vmap = self.xp, self.structure, self.vertex_map
        seconds = PhaseSeconds()
        self._structure_touched = False
        # a small batch: one launch per step instead of hundreds of array operations (same results)
        fused = self._resolves_fused(events.num_rows)

        with self._timed(seconds, "resolve"):
            net = self._take_resolve_ahead(events)      # launched by the last apply (next_events): only read now
            if net is None and fused:
                # reuse: a small Arrow batch may run on this thread's fixed buffers (as one CUDA graph where
                # resolve_kernels.GRAPHS is on); its net effect is a copy, so a kept delta outlives the next batch
                net = resolve_kernels.fused_net_effect(xp, events, vmap, undirected=self.undirected,
                                                       keep_self_loops=self.keep_self_loops, reuse=True)
            elif net is None:
                arrays = EventArrays.from_table(xp, events)
                net = net_effect(xp, arrays, lambda ids: vmap.lookup(ids) >= 0,
                                 undirected=self.undirected, keep_self_loops=self.keep_self_loops,
                                 released_before=vmap.released)

        self._structure_touched = True        # from here on, an out-of-memory error cannot be undone
        with self._timed(seconds, "vertices", chain=True):
            # the vertex map vouches for the ids (distinct; live before / fresh, below its capacity),
            # so the structure need not check or count them on the device
            old_ids = vmap.lookup(net.deleted_vertices)
            removed_src, removed_dst = graph.delete_live_vertices(old_ids)
            vmap.release(net.deleted_vertices, all_mapped=True)
            new_ids = vmap.assign(net.created_vertices, revived=net.revived)
            graph.insert_new_vertices(new_ids, vmap.capacity)

        with self._timed(seconds, "csr", chain=True):
            # distinct keys, and their distinct sources counted by resolve: no transfer here
            if fused:
                inserts, deletes = resolve_kernels.fused_csr_batches(xp, net, vmap)
            else:
                inserts = CSRBatch.from_edges(xp, vmap.lookup(net.insert_src), vmap.lookup(net.insert_dst),
                                              net.insert_weight, assume_unique=True, num_rows=net.insert_rows)
                deletes = CSRBatch.from_edges(xp, vmap.lookup(net.delete_src), vmap.lookup(net.delete_dst),
                                              None, assume_unique=True, num_rows=net.delete_rows)

        n_new = n_gone = None             # the masks' True entries, where the structure knows them
        if graph.concurrent_phases:       # both phases at once (two CUDA streams): one "edges" time
            with self._timed(seconds, "edges", chain=True):
                new_mask, deleted_mask = graph.apply_edge_phases(inserts, deletes, streams=phase_streams(xp))
        elif graph.combined_edge_phases:        # both phases with fewer reads (coo's fused path)
            with self._timed(seconds, "edges", chain=True):
                new_mask, n_new, deleted_mask, n_gone = graph.edge_phases_counted(inserts, deletes)
        else:
            with self._timed(seconds, "delete", chain=True):
                deleted_mask, n_gone = graph.delete_edges_counted(deletes)
            with self._timed(seconds, "insert", chain=True):
                new_mask, n_new = graph.insert_edges_counted(inserts)

        delta = self._delta(inserts, deletes, new_mask, deleted_mask, new_ids, old_ids, removed_src, removed_dst,
                            n_new, n_gone, fused)
        counts = {
            "events": net.events,
            "inserted": delta.num_inserted,
            "deleted": delta.num_deleted,
            # edges that existed and were added again, their weight set whether or not it changed (DESIGN.md:
            # adding an edge that exists updates its weight); the name stays "updated", which readers of the
            # summary and the Kafka results already use
            "updated": delta.num_updated,
            "vertices_added": int(new_ids.shape[0]),
            "vertices_removed": int(old_ids.shape[0]),
            "self_loops": net.self_loops,
        }
        return _Update(delta, counts, seconds)

    def _delta(self, inserts, deletes, new_mask, deleted_mask, new_ids, old_ids, removed_src, removed_dst,
               n_new=None, n_gone=None, fused=False):
        """The BatchDelta from the phases' masks: the sizes the structure did not report (``n_new``,
        ``n_gone``) in one host transfer, then sync-free compactions (``fused``: one kernel launch)."""
        xp = self.xp
        new_mask = as_contiguous(xp, new_mask, bool)
        deleted_mask = as_contiguous(xp, deleted_mask, bool)
        n_ins, n_all, n_del = int(new_mask.shape[0]), int(inserts.cols.shape[0]), int(deleted_mask.shape[0])
        if not n_ins:
            n_new = 0
        if not n_del:
            n_gone = 0
        unknown = [m for m, n in ((new_mask, n_new), (deleted_mask, n_gone)) if n is None]
        if unknown:
            read = iter(int(v) for v in xp.stack([m.sum() for m in unknown]).tolist())
            n_new = next(read) if n_new is None else n_new
            n_gone = next(read) if n_gone is None else n_gone
        if fused:
            return resolve_kernels.fused_delta(xp, self.epoch, inserts, deletes, new_mask, deleted_mask, n_new,
                                               n_gone, new_ids, old_ids, removed_src, removed_dst)
        ins_src, del_src = inserts.sources(), deletes.sources()
        old = ~new_mask

        def keep(values, mask, count):
            return compact(xp, values, mask, count)
        return BatchDelta(
            epoch=self.epoch,
            vertices_added=new_ids.astype(VERTEX_DTYPE),
            vertices_removed=old_ids.astype(VERTEX_DTYPE),
            inserted_src=keep(ins_src, new_mask, n_new), inserted_dst=keep(inserts.cols, new_mask, n_new),
            inserted_weight=keep(inserts.weights, new_mask, n_new),
            deleted_src=xp.concatenate([xp.asarray(removed_src, dtype=VERTEX_DTYPE),
                                        keep(del_src, deleted_mask, n_gone)]),
            deleted_dst=xp.concatenate([xp.asarray(removed_dst, dtype=VERTEX_DTYPE),
                                        keep(deletes.cols, deleted_mask, n_gone)]),
            updated_src=keep(ins_src, old, n_all - n_new), updated_dst=keep(inserts.cols, old, n_all - n_new),
            updated_weight=keep(inserts.weights, old, n_all - n_new),
        )

    # -- jobs -----------------------------------------------------------------------
    def _run_jobs(self, result: BatchResult, deltas: list[BatchDelta]) -> None:
        if not self.jobs:
            return
        self._pending.extend(deltas)
        if self.epoch % self.jobs_every == 0:
            self._run_pending_jobs(result)

    def flush_jobs(self) -> BatchResult | None:
        """Run the jobs now on whatever is pending (end of a replay with ``jobs_every`` > 1)."""
        if not self.jobs or not self._pending:
            return None
        result = BatchResult(self.epoch, self._pending[-1], {}, PhaseSeconds())
        self._run_pending_jobs(result)
        return result

    def _run_pending_jobs(self, result: BatchResult) -> None:
        """Bring every job up to date with the pending deltas (incrementally when possible)."""
        delta = merge_deltas(self.xp, self._pending)
        self._pending = []
        self._job_generation += 1
        with self.structure.reading():          # the jobs share one whole-graph adjacency
            for job in self.jobs:
                with self._timed(result.seconds, job.name):
                    if not self._jobs_initialised or delta is None:
                        job.run_static(self.structure, self.vertex_map)
                    else:
                        job.update(self.structure, delta, self.vertex_map)
                result.job_summaries.update(job.summary())
        result.job_outputs = JobOutputs(self, self.jobs)
        self._jobs_initialised = True

    # -- checkpoints ----------------------------------------------------------------
    def settings(self) -> dict:
        """What the graph and the jobs' state depend on besides the events: the edge rules and each job's
        parameters (a checkpoint keeps them, and :meth:`load_state` refuses a pipeline built with others)."""
        jobs = {}
        for job in self.jobs:
            params = {option: getattr(job, option, None) for option in JOB_OPTIONS.get(job.name, {})}
            if job.name == "bfs":
                params["sources"] = [int(v) for v in job.sources]
            jobs[job.name] = params
        return {"undirected": bool(self.undirected), "keep_self_loops": bool(self.keep_self_loops),
                "edge_ttl": None if self.edge_ttl is None else self.edge_ttl.ttl_ms / 1000.0, "jobs": jobs}

    def _check_settings(self, saved: dict) -> None:
        """Refuse to go on from a state taken with other settings: a resume with --undirected, another
        --edge-ttl or another BFS source went on silently from the old graph or job state, and its results were
        those of no run.  A job added or left out is fine (its state is computed afresh, or dropped)."""
        now, changed = self.settings(), []
        for key in ("undirected", "keep_self_loops", "edge_ttl"):
            if saved.get(key) != now[key]:
                changed.append(f"{key} {saved.get(key)} there, {now[key]} here")
        for job, params in saved.get("jobs", {}).items():
            for option, value in params.items():
                if job in now["jobs"] and now["jobs"][job].get(option) != value:
                    changed.append(f"{job} {option} {value} there, {now['jobs'][job].get(option)} here")
        if changed:
            raise UsageError(f"the checkpoint was taken with other settings ({'; '.join(changed)}): resume with "
                             "the run's settings, or start over (--overwrite, or another --checkpoint-dir)")

    def state(self) -> dict:
        """Everything but the structure's edges (the checkpoint writes those as CSR): host arrays."""
        return {"epoch": self.epoch, "settings": json.dumps(self.settings()), "vertex_map": self.vertex_map.state(),
                "jobs_initialised": bool(self._jobs_initialised),
                "jobs": {job.name: job.state() for job in self.jobs} if self._jobs_initialised else {},
                # the deltas the jobs have not seen yet (jobs_every > 1): restored with them, the next job run is the
                # update the uninterrupted run makes (without them the jobs recomputed from scratch there, and
                # PageRank's ranks and iterations differed from that run's, within its tolerance)
                "pending": {f"d{i:06d}": _delta_state(d) for i, d in enumerate(self._pending)},
                **({"edge_ttl": self.edge_ttl.state()} if self.edge_ttl is not None else {})}

    def load_state(self, state: dict) -> None:
        """Restore ``state()`` on a pipeline whose structure was rebuilt from the same checkpoint (and built with
        the same settings: ``UsageError`` otherwise)."""
        if state.get("settings"):                  # checkpoints from before they were kept have none
            self._check_settings(json.loads(state["settings"]))
        self._drop_resolve_ahead()
        self.epoch = int(state["epoch"])
        self.vertex_map = VertexMap.from_state(state["vertex_map"], self.xp)
        saved_jobs = state.get("jobs") or {}
        self._jobs_initialised = bool(state.get("jobs_initialised")) and all(
            job.name in saved_jobs for job in self.jobs)
        if self._jobs_initialised:
            for job in self.jobs:
                job.load_state(saved_jobs[job.name])
        pending = state.get("pending") or {}
        self._pending = [_delta_from_state(self.xp, pending[key]) for key in sorted(pending)]
        if self.edge_ttl is not None and "edge_ttl" in state:
            self.edge_ttl.load_state(state["edge_ttl"])

    # -- helpers --------------------------------------------------------------------
    @contextmanager
    def _timed(self, seconds: dict, phase: str, chain: bool = False):
        """Time one phase into ``seconds`` (CUDA events on a GPU: no host sync; see structures.backend);
        ``chain``: it starts where the previous phase of ``seconds`` ended (nothing ran in between)."""
        with phase_timer(self.xp, seconds, phase, chain):
            yield

    def _edge_arrays(self):
        """The whole graph as external (src, dst) int64 and float32 weight arrays on ``xp``, unsorted."""
        xp = self.xp
        csr = self.structure.adjacency()
        src = xp.asarray(self.vertex_map.external(csr.row_ids()), dtype=np.int64)
        dst = xp.asarray(self.vertex_map.external(csr.cols), dtype=np.int64)
        w = csr.weights if csr.weights is not None else xp.ones(csr.num_edges, WEIGHT_DTYPE)
        return src, dst, xp.asarray(w, dtype=np.float32)

    def _vertex_ids(self):
        return self.xp.asarray(self.vertex_map.external(self.structure.vertices()), dtype=np.int64)

    def edges_external(self):
        """The whole graph as external (src, dst, weight) NumPy arrays (for checks and exports)."""
        return tuple(to_numpy(a) for a in self._edge_arrays())

    def vertices_external(self):
        return to_numpy(self._vertex_ids())

    # -- reading the graph and the results back (external ids; Arrow, or cuDF on a GPU) ----------
    def edges(self, to: str = "arrow"):
        """Every edge as a table ``src``, ``dst`` (external int64 ids), ``weight`` (float32), sorted by (src, dst).

        ``to="arrow"`` (host ``pyarrow.Table``) or ``to="cudf"`` (a ``cudf.DataFrame`` whose
        columns are the device arrays themselves; GPU backend and cuDF needed).
        """
        src, dst, w = self._edge_arrays()
        order = self.xp.lexsort(self.xp.stack([dst, src]))
        return as_frame({"src": (src[order], None), "dst": (dst[order], None), "weight": (w[order], None)}, to)

    def vertices(self, to: str = "arrow"):
        """Every live vertex as a table with one column ``vertex`` (external int64 ids, ascending)."""
        return as_frame({"vertex": (self.xp.sort(self._vertex_ids()), None)}, to)

    def results(self, to: str = "arrow") -> dict:
        """Each job's current output: ``{job name: table}``, one row per live vertex (external ids).

        Runs any job that is behind (``jobs_every`` > 1) first, so the tables describe the graph
        as it is.  ``to="cudf"`` gives ``cudf.DataFrame`` s over the jobs' device arrays (no copy).
        """
        self.flush_jobs()
        if not self._jobs_initialised:
            self._job_generation += 1
            for job in self.jobs:
                job.run_static(self.structure, self.vertex_map)
            self._jobs_initialised = True
        if to == "arrow":
            return job_tables(self.jobs, self.vertex_map)
        return {job.name: as_frame(job.columns(self.vertex_map), to) for job in self.jobs}

    @property
    def on_gpu(self) -> bool:
        return is_gpu(self.xp)


def as_frame(columns: dict, to: str):
    """``{name: (xp array, validity or None)}`` as a host Arrow table or a cuDF DataFrame on the device.

    A cuDF column built from a CuPy array shares its memory (``__cuda_array_interface__``): no copy.
    """
    if to == "arrow":
        return arrow_table(columns)
    if to != "cudf":
        raise ValueError(f"to must be 'arrow' or 'cudf', not {to!r}")
    values = [v for v, _ in columns.values()]
    if values and not hasattr(values[0], "__cuda_array_interface__"):
        raise UsageError("cuDF tables need the GPU backend (build_pipeline(backend='gpu'))")
    try:
        import cudf
    except Exception as exc:
        raise UsageError(f"to='cudf' needs cuDF (pip install 'vinestream[cudf]'): {type(exc).__name__}: {exc}") \
            from None
    frame = cudf.DataFrame({name: values for name, (values, _) in columns.items()})
    for name, (_, valid) in columns.items():
        if valid is not None:
            frame[name] = frame[name].where(cudf.Series(valid))
    return frame


@dataclass
class _ResolveAhead:
    """A next batch's net effect launched early (``Pipeline.apply(next_events=...)``): valid for that table
    while the vertex map it read is unchanged."""
    events: object
    vmap: VertexMap
    version: int
    pending: resolve_kernels.PendingNetEffect


#: the arrays of a BatchDelta, in a checkpoint's pipeline state (its ``stats`` are the structure's, not the jobs')
_DELTA_ARRAYS = ("vertices_added", "vertices_removed", "inserted_src", "inserted_dst", "inserted_weight",
                 "deleted_src", "deleted_dst", "updated_src", "updated_dst", "updated_weight")


def _delta_state(delta: BatchDelta) -> dict:
    return {"epoch": int(delta.epoch), **{name: to_numpy(getattr(delta, name)) for name in _DELTA_ARRAYS}}


def _delta_from_state(xp, state: dict) -> BatchDelta:
    return BatchDelta(int(state["epoch"]), *(xp.asarray(state[name]) for name in _DELTA_ARRAYS))


def merge_deltas(xp, deltas: list[BatchDelta]) -> BatchDelta | None:
    """One delta equal to applying ``deltas`` in order, or None when it needs a full recompute.

    Edge changes compose per key: the state before the first change and after
    the last decide.  Vertex slot churn (a slot removed then reused) cannot be
    told apart from the edge keys alone, so any vertex removal in a window of
    several deltas returns None and the jobs recompute from scratch.
    """
    if len(deltas) == 1:
        return deltas[0]
    if any(int(d.vertices_removed.shape[0]) for d in deltas):
        return None
    # rows: (key, order, existed_before_change, exists_after, weight)
    parts_key, parts_before, parts_after, parts_w = [], [], [], []
    for d in deltas:
        for s, t, before, after, w in (
                (d.inserted_src, d.inserted_dst, False, True, d.inserted_weight),
                (d.deleted_src, d.deleted_dst, True, False, None),
                (d.updated_src, d.updated_dst, True, True, d.updated_weight)):
            k = (s.astype(np.int64) << 32) | t.astype(np.int64)
            parts_key.append(k)
            parts_before.append(xp.full(k.shape[0], before))
            parts_after.append(xp.full(k.shape[0], after))
            parts_w.append(w if w is not None else xp.full(k.shape[0], np.nan, dtype=np.float32))
    key = xp.concatenate(parts_key)
    before = xp.concatenate(parts_before)
    after = xp.concatenate(parts_after)
    weight = xp.concatenate(parts_w).astype(np.float32)
    order = xp.argsort(key, kind="stable")
    key, before, after, weight = key[order], before[order], after[order], weight[order]
    first = xp.ones(key.shape[0], dtype=bool)
    first[1:] = key[1:] != key[:-1]
    last = xp.ones(key.shape[0], dtype=bool)
    last[:-1] = key[1:] != key[:-1]
    k = key[last]
    was, now, w = before[first], after[last], weight[last]
    src = (k >> 32).astype(VERTEX_DTYPE)
    dst = (k & 0xFFFFFFFF).astype(VERTEX_DTYPE)
    ins, dele, upd = ~was & now, was & ~now, was & now
    return BatchDelta(
        epoch=deltas[-1].epoch,
        vertices_added=xp.concatenate([d.vertices_added for d in deltas]),
        vertices_removed=xp.zeros(0, dtype=VERTEX_DTYPE),
        inserted_src=src[ins], inserted_dst=dst[ins], inserted_weight=w[ins],
        deleted_src=src[dele], deleted_dst=dst[dele],
        updated_src=src[upd], updated_dst=dst[upd], updated_weight=w[upd],
    )


_OPS = pa.array([int(op) for op in Op], pa.int8())
_EDGE_OPS = pa.array([int(Op.ADD_EDGE), int(Op.DELETE_EDGE)], pa.int8())


def check_event_batch(events) -> None:
    """Raise ``UsageError`` naming what is wrong unless ``events`` is an Arrow table with EVENT_SCHEMA's columns
    and types (further columns allowed): the pipeline applies only validated batches, and a raw table would
    otherwise fail deep inside it.  ``vinestream.events(...)`` builds one; ``vinestream.validate(table,
    source=...)`` turns any table into one (and dead letters)."""
    hint = ("vinestream.events(...) builds an event batch; vinestream.validate(table, source=...) splits any table "
            "into events and dead letters")
    if not isinstance(events, pa.Table):
        raise UsageError(f"an event batch is a pyarrow.Table, not {type(events).__name__}: {hint}")
    names = events.schema.names
    wrong = [f"{f.name} (missing)" if f.name not in names else f"{f.name} ({events.schema.field(f.name).type}, "
             f"expected {f.type})" for f in EVENT_SCHEMA
             if f.name not in names or not events.schema.field(f.name).type.equals(f.type)]
    if wrong:
        raise UsageError(f"not an event batch: column {', '.join(wrong)}; {hint}")
    # the types are right: the rows must hold what validation leaves (a table built by hand may not; a null dst
    # was applied as vertex 0, a NaN weight stored, op 9 counted as an event that did nothing)
    op, dst, weight = (events.column(name) for name in ("op", "dst", "weight"))
    edge = pc.fill_null(pc.is_in(op, value_set=_EDGE_OPS), False)
    rules = (
        ("an op that is no event op (1-4)", pc.invert(pc.fill_null(pc.is_in(op, value_set=_OPS), False))),
        ("a null src", pc.is_null(events.column("src"))),
        ("an edge op with a null dst", pc.and_(edge, pc.is_null(dst))),
        ("an edge weight that is not finite", pc.and_(edge, pc.invert(pc.fill_null(pc.is_finite(weight), True)))),
    )
    for what, bad in rules:
        if pc.any(bad).as_py():
            row = int(pc.index(bad, True).as_py())
            raise UsageError(f"not an event batch: row {row} has {what} ({events.slice(row, 1).to_pylist()[0]}); "
                             f"{hint}")


def check_pipeline_arguments(*, jobs=(), bfs_sources=(), jobs_every: int = 1, job_options: dict | None = None,
                             edge_ttl: float | None = None, undirected: bool = False,
                             keep_self_loops: bool = False, require_sources: bool = True) -> tuple[list, list, dict]:
    """:func:`build_pipeline`'s arguments checked as the command line checks its flags (a ``UsageError``
    naming the argument and what is valid); returns the jobs (a comma-separated string split, a job named
    twice once), the BFS sources (one id made a list) and the job options.  ``replay`` calls it before it
    starts, since it builds its pipeline once its input is open, with ``require_sources=False``: it finds
    the BFS job's default source in its logs."""
    if isinstance(jobs, str):                     # "pagerank,bfs", as the command line takes them
        jobs = [name.strip() for name in jobs.split(",") if name.strip()]
    jobs = list(dict.fromkeys(jobs or ()))        # a job named twice runs once
    for name in jobs:
        if name not in JOBS:
            raise UsageError(f"unknown job {name!r}; choose from {', '.join(sorted(JOBS))}")
    if isinstance(bfs_sources, (int, np.integer)) and not isinstance(bfs_sources, bool):
        bfs_sources = [bfs_sources]
    if isinstance(bfs_sources, (str, bytes)) or not isinstance(bfs_sources, (list, tuple, np.ndarray, range)):
        raise UsageError(f"bfs_sources={bfs_sources!r}: expected a list of vertex ids (int64), or one id")
    bad = [v for v in bfs_sources if not is_vertex_id(v)]
    if bad:
        raise UsageError(f"bfs_sources: {bad[0]!r} is no vertex id (an int64)")
    bfs_sources = [int(v) for v in bfs_sources]
    if "bfs" in jobs and not bfs_sources and require_sources:
        raise UsageError("the bfs job needs source vertices (--bfs-source ID[,ID])")
    if isinstance(jobs_every, bool) or not isinstance(jobs_every, (int, np.integer)) or jobs_every < 1:
        raise UsageError(f"jobs_every={jobs_every!r}: expected an integer >= 1")
    for name, value in (("undirected", undirected), ("keep_self_loops", keep_self_loops)):
        if not isinstance(value, (bool, np.bool_)):
            raise UsageError(f"{name}={value!r}: expected True or False")
    if edge_ttl is not None and (isinstance(edge_ttl, bool) or not isinstance(edge_ttl, (int, float, np.number))
                                 or not edge_ttl > 0 or not np.isfinite(edge_ttl)):
        raise UsageError(f"edge_ttl={edge_ttl!r}: expected a number of seconds > 0")
    if not isinstance(job_options or {}, Mapping):
        raise UsageError(f"job_options={job_options!r}: expected {{job: {{option: value}}}}")
    checked: dict = {}
    for job, options in (job_options or {}).items():
        if job not in JOBS:
            raise UsageError(f"job_options: unknown job {job!r}; choose from {', '.join(sorted(JOBS))}")
        if job not in jobs:
            raise UsageError(f"job_options: the {job} job is not in jobs ({','.join(jobs) or 'none'})")
        if not isinstance(options, Mapping):
            raise UsageError(f"job_options[{job!r}]={options!r}: expected {{option: value}}")
        for option, value in options.items():
            problem = job_option_problem(job, option, value)
            if problem:
                raise UsageError(f"job_options {job}.{option}={value!r}: expected {problem}")
            checked.setdefault(job, {})[option] = value
    return jobs, bfs_sources, checked


def build_pipeline(*, structure: str = "csr", backend: str | None = None, undirected: bool = False,
                   keep_self_loops: bool = False, jobs=(), bfs_sources=(), jobs_every: int = 1,
                   structure_options: dict | None = None, job_options: dict | None = None,
                   edge_ttl: float | None = None, small_batch_kernels: bool | None = None) -> Pipeline:
    """A new, empty pipeline from names (what `replay` and `run` build from their flags / config).

    Parameters
    ----------
    structure : str
        A registered structure (``vinestream.structures.available()``): csr, coo, graphvine...
    backend : {"auto", "cpu", "gpu"}, optional
        NumPy or CuPy; ``None`` reads ``$VINESTREAM_BACKEND`` (default auto: CuPy if a GPU answers).
    undirected, keep_self_loops : bool
        Mirror every edge event; keep ``src == dst`` edges instead of dropping them.
    jobs : list of str, or str
        Any of ``pagerank``, ``bfs``, ``triangles`` (or one comma-separated string; a name given twice runs
        once); BFS starts from ``bfs_sources`` (external ids: a list, or one id).
    jobs_every : int
        Run the jobs every N epochs.
    structure_options : dict
        Passed to the structure (e.g. ``{"block_size": 8}`` for graphvine).
    job_options : dict
        ``{job: {parameter: value}}`` passed to the job's constructor, e.g.
        ``{"pagerank": {"damping": 0.9, "tol": 1e-8, "max_iter": 100}}``.
    edge_ttl : float, optional
        Sliding window: seconds of event time after its last insert at which an edge is
        deleted (``stream/batching/ttl.py`` defines the rule).
    small_batch_kernels : bool, optional
        Resolve, CSR and delta of batches of at most 16,384 rows (events; twice that many when
        undirected) as fused kernels (one launch
        each; ``stream/batching/resolve_kernels.py``).  Default: on for the GPU backend (unless
        ``$VINESTREAM_SMALL_BATCH_KERNELS=0``), off (unavailable) on NumPy; ``False`` keeps the
        array program everywhere.

    Raises
    ------
    UsageError
        An unknown structure or job, BFS without sources, or an argument the command line would refuse
        (:func:`check_pipeline_arguments`).
    BackendError
        ``backend="gpu"`` where there is no usable GPU.
    """
    jobs, bfs_sources, job_options = check_pipeline_arguments(
        jobs=jobs, bfs_sources=bfs_sources, jobs_every=jobs_every, job_options=job_options, edge_ttl=edge_ttl,
        undirected=undirected, keep_self_loops=keep_self_loops)
    xp = get_backend(backend)
    if small_batch_kernels is not None and not isinstance(small_batch_kernels, (bool, np.bool_)):
        raise UsageError(f"small_batch_kernels={small_batch_kernels!r}: expected True, False or None")
    if small_batch_kernels and not is_gpu(xp):
        # they are CUDA kernels: built anyway, the first batch ended in a RuntimeError from the launcher
        raise UsageError("small_batch_kernels=True needs the GPU backend (they are CUDA kernels); leave it None")
    try:
        graph = registry.create(structure, xp, **(structure_options or {}))
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    job_objects = []
    for name in jobs:
        params = dict(job_options.get(name, {}))
        if name == "bfs":
            params["sources"] = bfs_sources
        job_objects.append(create_job(name, xp, **params))
    return Pipeline(graph, undirected=undirected, keep_self_loops=keep_self_loops,
                    jobs=job_objects, jobs_every=jobs_every, edge_ttl=edge_ttl,
                    small_batch_kernels=small_batch_kernels)
