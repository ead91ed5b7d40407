"""`vinestream replay`: the application loop over recorded Parquet event logs.

A replay is :class:`~vinestream.stream.app.application.Application` with a
:class:`~vinestream.connectors.parquet.ReplaySource`: batches cut by size or
event-time window, Parquet results and dead letters under ``out``, and, with
``checkpoint_dir``, checkpoints that a rerun resumes from (the log position is
part of every checkpoint).
"""
from __future__ import annotations

import datetime as dt
import functools
import os

from vinestream.connectors.base import FanOut
from vinestream.connectors.dead_letters import ParquetDeadLetterSink
from vinestream.connectors.parquet import READ_AHEAD_ROWS, ParquetResultsSink, ReplaySource
from vinestream.connectors.sample import sample_log_path
from vinestream.stream.batching import resolve_kernels
from vinestream.stream.errors import UsageError
from vinestream.stream.events.cudf_decode import DecoderUnavailable, resolve_decoder
from vinestream.stream.events.schema import excerpt
from vinestream.stream.pipeline import Pipeline, build_pipeline, check_pipeline_arguments
from vinestream.structures.backend import backend_name, get_backend

from . import checkpoint as ckpt_mod
from . import config
from . import warm_up as warm_up_mod
from .application import Application, LoopConfig, Progress, RunReport, run_application
from .preflight import (
    SOURCE_EVENTS,
    check_event_logs,
    check_event_times,
    first_source,
    prepare_out_dir,
    unlock_run_dirs,
    write_run_info,
)

#: batch size of the bundled sample: it is small, so a first replay shows many epochs
SAMPLE_BATCH_SIZE = 5_000


def _check_replay_arguments(**arguments) -> None:
    """:func:`replay`'s own arguments checked before anything is opened, with the checks of the command line's flags
    (config.py): ``batch_size="x"`` failed in a comparison deep inside, ``checkpoint_every_batches=-1`` was taken."""
    paths = arguments.pop("paths")
    one = (str, os.PathLike)
    if paths is not None and not isinstance(paths, one) and not (
            isinstance(paths, (list, tuple)) and all(isinstance(p, one) for p in paths)):
        raise UsageError(f"paths={excerpt(paths)}: expected an event Parquet file or directory, or a list of them")
    checks = {"structure": config.structure_name, "batch_size": config.integer_at_least(1), "window":
              config.window_seconds, "speed": config.positive, "keep_epochs": config.integer_at_least(1),
              "output_every": config.integer_at_least(1, allow_none=False),
              "checkpoint_every_batches": config.integer_at_least(0, allow_none=False),
              "checkpoint_every_seconds": config.at_least(0, allow_none=False),
              "decoder": config.one_of("auto", "pyarrow", "cudf"),
              "resume": lambda v: None if v is None else config.boolean(v)}
    for name, value in arguments.items():
        problem = checks.get(name, config.boolean)(value)
        if problem:
            raise UsageError(f"{name}={excerpt(value)}: expected {problem}")


def replay(paths=None, *, structure: str = "csr", backend: str | None = None,
           batch_size: int | None = None, window: dt.timedelta | None = None, speed: float | None = None,
           out: str | None = None, undirected: bool = False, keep_self_loops: bool = False,
           jobs=(), bfs_sources=(), jobs_every: int = 1, structure_options: dict | None = None,
           job_options: dict | None = None, edge_ttl: float | None = None, keep_epochs: int | None = None,
           output_every: int = 1, overwrite: bool = False, resume: bool | None = None,
           checkpoint_dir: str | None = None, checkpoint_every_batches: int = 100,
           checkpoint_every_seconds: float = 60.0, metrics=None, progress: bool = False,
           handle_signals: bool = False, decoder: str = "auto", read_ahead: bool = True,
           warm_up: bool = True, out_prepared: str | None = None,
           logs_checked: bool = False) -> tuple[RunReport, Pipeline]:
    """Replay event Parquet logs (the bundled sample when ``paths`` is empty) through a new pipeline.

    Parameters
    ----------
    paths : list of str, optional
        Event Parquet files or directories of them, applied in order.
    structure, backend, undirected, keep_self_loops, jobs, bfs_sources, jobs_every, structure_options
        The pipeline (see :func:`vinestream.stream.pipeline.build_pipeline`).  Without ``bfs_sources``
        the bfs job starts, as ``vinestream replay`` does, from the source vertex of the logs' first event
        that puts a vertex in the graph.
    job_options : dict, optional
        ``{job: {parameter: value}}``, e.g. ``{"pagerank": {"damping": 0.9}}``.
    edge_ttl : float, optional
        Sliding window: an edge is deleted once the event-time watermark is more than
        ``edge_ttl`` seconds past its last insert (``stream/batching/ttl.py``).
    batch_size, window, speed
        Batches of ``batch_size`` events, or one per ``window`` of event time (a timedelta, or
        seconds); ``speed`` paces the replay against ``ts`` (1.0 = real time).  ``window``,
        ``speed`` and ``edge_ttl`` need logs with event times.
    out : str, optional
        Results directory: ``summary.parquet/`` (part files), ``<job>/epoch=<n>/part-0.parquet``,
        ``dead_letter.parquet`` (read it back with :func:`vinestream.read_results`) and ``_run.json``,
        the settings (``vinestream report`` draws the directory).
    overwrite, resume : bool
        ``out`` already holding results is refused unless ``overwrite`` (they and the checkpoints
        are removed first) or ``resume`` (continue from the latest checkpoint in
        ``checkpoint_dir``); ``resume=None`` resumes when there is a checkpoint.
    out_prepared : str, optional
        The mode :func:`~vinestream.stream.app.preflight.prepare_out_dir` returned to a caller that
        prepared (and locked) ``out`` and ``checkpoint_dir`` itself, as the command line does before
        its imports: replay then neither prepares them again (a second preparation cleared and probed
        the directories twice) nor unlocks them.  None (the default): replay prepares ``out`` itself.
    logs_checked : bool
        The caller checked ``paths`` already, as the command line does before its imports:
        ``check_event_logs`` gave them (files, not directories), ``check_event_times`` passed with these
        ``window``, ``speed`` and ``edge_ttl``, and ``bfs_sources`` are given where bfs runs.  Replay then
        reads them without checking them again (on a large log the time check scans its ts column: twice
        before the first batch).  False (the default): replay checks them itself.
    keep_epochs, output_every : int, optional
        Keep the job outputs of the newest ``keep_epochs`` epochs only; write them at epochs that
        are multiples of ``output_every`` (and the last).
    checkpoint_dir : str, optional
        Checkpoint here every ``checkpoint_every_batches`` batches / ``checkpoint_every_seconds``
        and at the end; a replay started with the same directory resumes after its latest
        checkpoint and ends in the same state as an uninterrupted one.
    metrics : PipelineMetrics, optional
    progress : bool
        Draw a progress bar on stderr.
    decoder : {"auto", "pyarrow", "cudf"}
        ``cudf`` reads the logs with ``cudf.read_parquet`` into GPU memory (a GPU backend, size
        batches); ``auto`` does so where cuDF is installed, the backend is a GPU and batches are
        cut by size.
    handle_signals : bool
        SIGTERM / SIGINT stop the replay gracefully (drain, checkpoint) instead of raising.
    read_ahead : bool
        Read and decode the next batches on a reader thread (at most
        ``connectors.parquet.READ_AHEAD_ROWS`` rows ahead) while the pipeline applies the current one,
        from the start of the run (while the pipeline is built); not with ``speed`` or the cuDF decoder.
        Measured on an H100 (sx-mathoverflow, coo, fresh processes, one sample each): no gain shown,
        1.64 s without it against 1.80 and 2.13 s with it (the decode's Python share holds the GIL that
        the host-bound apply thread needs; bench-results/2026-11-25-replay).
    warm_up : bool
        On a GPU, the context, thrust's first sorts and the kernel modules of the structure and jobs
        are set up on a thread from the start of the run (``stream/app/warm_up.py``), overlapping the
        pipeline's build and the first reads, instead of one after the other on the first batch.
        No gain shown so far (``stream/app/warm_up.py`` has the figures).

    Returns
    -------
    (RunReport, Pipeline)
        What the replay did, and the pipeline with the final graph and job state.

    Raises
    ------
    UsageError (a ValueError)
        An argument of the wrong type or out of range, named with what is valid (the checks of the
        command line's flags), before any input or directory is opened.

    Examples
    --------
    >>> report, pipeline = replay(structure="coo", jobs=["triangles"])   # the bundled sample
    >>> report.events
    59835
    """
    _check_replay_arguments(paths=paths, structure=structure, batch_size=batch_size, window=window, speed=speed,
                            keep_epochs=keep_epochs, output_every=output_every, overwrite=overwrite, resume=resume,
                            checkpoint_every_batches=checkpoint_every_batches,
                            checkpoint_every_seconds=checkpoint_every_seconds, progress=progress,
                            handle_signals=handle_signals, decoder=decoder, read_ahead=read_ahead, warm_up=warm_up)
    # checked now, before the input opens: the pipeline itself is built once it has (below); BFS without
    # sources starts where `vinestream replay` starts it, at the logs' first vertex (found once they are open)
    jobs, bfs_sources, job_options = check_pipeline_arguments(
        jobs=jobs, bfs_sources=bfs_sources, jobs_every=jobs_every, job_options=job_options, edge_ttl=edge_ttl,
        undirected=undirected, keep_self_loops=keep_self_loops, require_sources=False)
    holder: list[Pipeline] = []

    def factory() -> Pipeline:
        holder.append(build_pipeline(structure=structure, backend=backend, undirected=undirected,
                                     keep_self_loops=keep_self_loops, jobs=jobs, bfs_sources=bfs_sources,
                                     jobs_every=jobs_every, structure_options=structure_options,
                                     job_options=job_options, edge_ttl=edge_ttl))
        return holder[-1]

    for name, path in (("out", out), ("checkpoint_dir", checkpoint_dir)):
        if path is not None and not str(path).strip():      # "" was no directory, and _run.json landed in "."
            raise UsageError(f"{name}={path!r}: an empty path; give a directory, or None")
    if out is None and (keep_epochs is not None or output_every != 1):     # as the command line refuses them
        raise UsageError(f"{'keep_epochs' if keep_epochs is not None else 'output_every'} needs out: it bounds the "
                         "job outputs written there")
    if batch_size is None and window is None:
        batch_size = None if paths else SAMPLE_BATCH_SIZE
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]                                    # one log (a string is no list of its characters)
    paths = list(paths) if paths else [str(sample_log_path())]
    if isinstance(window, (int, float)) and not isinstance(window, bool):
        window = dt.timedelta(seconds=window)              # seconds, as the command line takes it
    if logs_checked:
        files = paths
    else:
        files = check_event_logs(paths)                    # not Parquet, not events: one line, not pyarrow's
        check_event_times(files, {"window": window, "speed": speed, "edge_ttl": edge_ttl})
    if "bfs" in jobs and not bfs_sources:
        first = first_source(files, keep_self_loops=keep_self_loops)
        if first is None:
            raise UsageError(f"the bfs job needs a source vertex and no event of the log adds one ({SOURCE_EVENTS}): "
                             "give bfs_sources")
        bfs_sources = [first]
    gpu = backend_name(get_backend(backend)) == "gpu"
    if decoder == "cudf" and (window is not None or speed is not None):
        raise UsageError("--decoder cudf replays batches cut by size: leave out --window and --speed, "
                         "or use --decoder pyarrow")
    try:
        device = (window is None and speed is None) and resolve_decoder(decoder, gpu=gpu) == "cudf"
    except DecoderUnavailable as exc:
        raise UsageError(str(exc)) from None
    mode = out_prepared
    if out is not None and out_prepared is None:
        if resume is None:
            resume = bool(checkpoint_dir) and ckpt_mod.latest(checkpoint_dir) is not None
        # after the arguments' checks: it locks the directories, which every way out below must unlock (a failed
        # call in a long-lived process held them from other processes until it ended)
        mode = prepare_out_dir(out, overwrite=overwrite, resume=resume, checkpoint_dir=checkpoint_dir)
    try:
        if out is not None:
            # what wrote the directory: `vinestream report` titles the page and lists the settings from it
            write_run_info(out, {
                "command": "replay", "logs": files, "structure": structure, "backend": "gpu" if gpu else "cpu",
                "jobs": jobs, "bfs_sources": bfs_sources, "job_options": job_options, "edge_ttl": edge_ttl,
                "batch_size": batch_size, "window": window.total_seconds() if window is not None else None,
                "jobs_every": jobs_every, "undirected": bool(undirected), "keep_self_loops": bool(keep_self_loops),
                "structure_options": structure_options or {}, "mode": mode})
        source = ReplaySource(paths, batch_size=batch_size, window=window, speed=speed, device=device,
                              read_ahead_rows=READ_AHEAD_ROWS if read_ahead else 0)
        warm = None
        if gpu and warm_up:
            xp = get_backend(backend)
            modules = warm_up_mod.kernel_modules(structure, jobs, batch_size, undirected)
            # the log's events bound its edges (twice over for an undirected run)
            bound = source.total_rows * (2 if undirected else 1)
            warm = functools.partial(warm_up_mod.device_warm_up, xp, modules,
                                     sparse_library=warm_up_mod.may_use_sparse_library(bound))
        # on a GPU with batches small enough for the fused resolve, three batches in flight: one applied, the next
        # queued, and the one after it read meanwhile, so that the next batch is queued when the pipeline may start
        # resolving it during this one's jobs (Pipeline.apply's next_events; with two, the reader only starts on
        # it once this batch is taken); otherwise two, one batch's memory less
        ahead = gpu and batch_size is not None and window is None and resolve_kernels.fits(batch_size, undirected)
        config = LoopConfig(until_end=True, max_inflight_batches=3 if ahead else 2, checkpoint_dir=checkpoint_dir,
                            checkpoint_every_batches=checkpoint_every_batches,
                            checkpoint_every_seconds=checkpoint_every_seconds)
        dead = FanOut([ParquetDeadLetterSink(out)] if out else [])
        # a summary row's dead letters are durable before it is (a kill between them left invalid > 0 and none)
        results = FanOut([ParquetResultsSink(out, keep_epochs=keep_epochs, output_every=output_every,
                                             before_summary=dead.flush)] if out else [])
        app = Application(config, source, factory, results, dead, metrics,
                          progress=Progress(source.total_rows) if progress else None, warm_up=warm)
        try:
            report = run_application(app, handle_signals=handle_signals)
        finally:
            dead.close()                # before the summary rows that count them
            results.close()
    finally:
        if out is not None and out_prepared is None:        # a caller that prepared them unlocks them
            unlock_run_dirs(out, checkpoint_dir)
    return report, holder[-1]
