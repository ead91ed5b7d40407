"""`vinestream replay`: play recorded edge logs through the pipeline, with a progress bar and a summary."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from vinestream.stream.pipeline import BatchResult, Pipeline, build_pipeline
from vinestream.structures.backend import backend_name, device_memory_bytes


@dataclass
class ReplayReport:
    """What a replay did, for the end-of-run table and for tests."""
    structure: str
    backend: str
    batches: int = 0
    events: int = 0
    invalid: int = 0
    inserted: int = 0
    deleted: int = 0
    vertices: int = 0
    edges: int = 0
    seconds: float = 0.0
    phase_seconds: dict = field(default_factory=dict)
    memory: dict = field(default_factory=dict)
    job_summaries: dict = field(default_factory=dict)

    def add(self, result: BatchResult, invalid: int) -> None:
        self.batches += 1
        self.events += result.counts.get("events", 0)
        self.invalid += invalid
        self.inserted += result.counts.get("inserted", 0)
        self.deleted += result.counts.get("deleted", 0)
        self.vertices = result.counts.get("vertices", self.vertices)
        self.edges = result.counts.get("edges", self.edges)
        for phase, s in result.seconds.items():
            self.phase_seconds[phase] = self.phase_seconds.get(phase, 0.0) + s
        self.job_summaries.update(result.job_summaries)

    def table(self) -> str:
        """The end summary as an aligned two-column table."""
        rate = self.events / self.seconds if self.seconds else 0.0
        rows = [("structure", self.structure), ("backend", self.backend), ("batches", self.batches),
                ("events", self.events), ("invalid", self.invalid), ("edges inserted", self.inserted),
                ("edges deleted", self.deleted), ("vertices", self.vertices), ("edges", self.edges),
                ("wall seconds", f"{self.seconds:.3f}"), ("events / s", f"{rate:,.0f}")]
        rows += [(f"{phase} ms", f"{s * 1e3:.1f}") for phase, s in self.phase_seconds.items()]
        rows += [(k, v) for k, v in self.job_summaries.items()]
        rows += [(f"memory {k}", v) for k, v in self.memory.items()]
        width = max(len(str(k)) for k, _ in rows)
        return "\n".join(f"{k!s:<{width}}  {v}" for k, v in rows)


class Progress:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, total: int | None, enabled: bool, stream=sys.stderr):
        self.total, self.enabled, self.stream = total, enabled, stream
        self.start = time.perf_counter()
        self._last = 0.0

    def update(self, done: int, force: bool = False) -> None:
        now = time.perf_counter()
        if not self.enabled or (not force and now - self._last < 0.1):
            return
        self._last = now
        rate = done / max(now - self.start, 1e-9)
        if self.total:
            frac = min(done / self.total, 1.0)
            bar = "#" * int(30 * frac)
            line = f"\r[{bar:<30}] {frac:6.1%} {done:,}/{self.total:,} events  {rate:,.0f} ev/s"
        else:
            line = f"\r{done:,} events  {rate:,.0f} ev/s"
        self.stream.write(line)
        self.stream.flush()

    def close(self, done: int) -> None:
        if self.enabled:
            self.update(done, force=True)
            self.stream.write("\n")


def replay(paths=None, *, structure: str = "csr", backend: str | None = None,
           batch_size: int | None = None, window=None, speed: float | None = None,
           out: str | None = None, undirected: bool = False, keep_self_loops: bool = False,
           jobs=(), bfs_sources=(), jobs_every: int = 1, structure_options: dict | None = None,
           metrics=None, progress: bool = True) -> tuple[ReplayReport, Pipeline]:
    """Replay event Parquet logs (the bundled sample when ``paths`` is empty).

    ``jobs`` are job names (pagerank, bfs, triangles); BFS starts from ``bfs_sources``.
    """
    from vinestream.connectors.parquet import ParquetResultsSink, ReplaySource
    from vinestream.connectors.sample import sample_log_path

    pipeline = build_pipeline(structure=structure, backend=backend, undirected=undirected,
                              keep_self_loops=keep_self_loops, jobs=jobs, bfs_sources=bfs_sources,
                              jobs_every=jobs_every, structure_options=structure_options)
    xp, graph = pipeline.xp, pipeline.structure
    if batch_size is None and window is None:
        # the bundled sample is small: cut it finer so a first replay shows many epochs
        batch_size = 100_000 if paths else 5_000
    paths = list(paths) if paths else [str(sample_log_path())]
    source = ReplaySource(paths, batch_size=batch_size, window=window, speed=speed)
    sink = ParquetResultsSink(out) if out else None
    report = ReplayReport(structure=structure, backend=backend_name(xp))
    bar = Progress(getattr(source, "total_rows", None), progress)
    done = 0
    start = time.perf_counter()
    try:
        for item in source:
            events, dead = item.events, item.dead
            done += events.num_rows + dead.num_rows
            if dead.num_rows and sink is not None:
                sink.write_dead_letters(dead)
            if metrics is not None and dead.num_rows:
                metrics.observe_dead_letters(dead)
            if events.num_rows == 0:
                bar.update(done)
                continue
            result = pipeline.apply(events)
            invalid = dead.num_rows + result.counts.get("self_loops", 0)
            report.add(result, invalid)
            if sink is not None:
                sink.write_epoch(result.epoch, result.summary_row(invalid=invalid), result.job_outputs)
            if metrics is not None:
                metrics.observe_batch(result, events)
            bar.update(done)
        final = pipeline.flush_jobs()
        if final is not None:
            report.job_summaries.update(final.job_summaries)
            if sink is not None:
                sink.write_epoch(final.epoch, final.summary_row(), final.job_outputs)
    finally:
        bar.close(done)
        if sink is not None:
            sink.close()
    report.seconds = time.perf_counter() - start
    report.memory = dict(graph.memory())
    report.memory["device_bytes"] = device_memory_bytes(xp)
    return report, pipeline
