"""Every pipeline metric, declared once (prometheus-client), with their update rules.

DESIGN.md "Export and monitoring": a worker exposes these on an HTTP endpoint
(``--metrics-port``, default 9464); replay runs may push them to a Pushgateway.
Each :class:`PipelineMetrics` owns its own ``CollectorRegistry`` so that tests
(and several pipelines in one process) never share counters.
"""
from __future__ import annotations

import logging
import math
import threading
import time

import pyarrow as pa
import pyarrow.compute as pc
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
    push_to_gateway,
    start_http_server,
)

from vinestream.stream.events.schema import REASONS, Op
from vinestream.structures.backend import device_memory_bytes

log = logging.getLogger(__name__)

DEFAULT_PORT = 9464
#: the metrics endpoint listens on loopback unless told otherwise (--metrics-addr 0.0.0.0 to expose it)
DEFAULT_ADDR = "127.0.0.1"
PIPELINE_PHASES = ("decode", "resolve", "csr", "vertices", "insert", "delete", "edges")   # edges: both phases at once
#: batch phases span sub-millisecond (small CPU batches) to tens of seconds (huge GPU batches)
SECONDS_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                   1.0, 2.5, 5.0, 10.0, 30.0, 60.0, math.inf)
OP_LABELS = {int(op): op.name.lower() for op in Op}


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("vinestream")
    except Exception:
        return "0.1.0"


class PipelineMetrics:
    """The vinestream metrics on one registry, plus the rules that update them."""

    def __init__(self, *, structure: str = "", backend: str = "", version: str | None = None,
                 registry: CollectorRegistry | None = None, process_metrics: bool = True):
        self.registry = r = registry or CollectorRegistry()
        if process_metrics:
            # process_resident_memory_bytes etc.: the worker's host memory, next to the device's
            ProcessCollector(registry=r)
            PlatformCollector(registry=r)
        self.events = Counter("vinestream_events", "Events applied, by op (a dropped self-loop is counted in "
                              "vinestream_invalid_events_total instead: the two add up to the events read)", ["op"],
                              registry=r)
        self.invalid = Counter("vinestream_invalid_events", "Rejected events by reason (dead letters and "
                               "dropped self-loops)", ["reason"], registry=r)
        self.batches = Counter("vinestream_batches", "Batches processed: every batch taken from the input, one "
                               "whose every event was rejected included (the sum of the summary's batches)",
                               registry=r)
        self.batch_seconds = Histogram("vinestream_batch_seconds", "Batch latency by phase (decode, resolve, "
                                       "csr, vertices, insert, delete, edges: both at once, each job)", ["phase"],
                                       buckets=SECONDS_BUCKETS, registry=r)
        self.vertices = Gauge("vinestream_graph_vertices", "Live vertices in the graph", registry=r)
        self.edges = Gauge("vinestream_graph_edges", "Live edges in the graph", registry=r)
        self.structure_bytes = Gauge("vinestream_structure_bytes", "Bytes held by the graph structure",
                                     ["kind"], registry=r)
        self.device_memory = Gauge("vinestream_device_memory_bytes", "Device memory in use (CuPy pool on a "
                                   "GPU, process resident memory on the CPU backend)", registry=r)
        self.lag = Gauge("vinestream_consumer_lag", "Records behind the partition's high watermark",
                         ["topic", "partition"], registry=r)
        self.last_commit = Gauge("vinestream_last_commit_timestamp_seconds",
                                 "Unix time of the last successful offset commit (NaN before the first)", registry=r)
        # NaN, not 0, until a commit: a worker commits only after its first checkpoint (a minute by default), and
        # 0 read as a commit in 1970 (the dashboard's "time() - ..." showed 56 years since the last commit)
        self.last_commit.set(math.nan)
        self.late = Counter("vinestream_late_events", "Events applied after events of a later event time "
                            "(the event-time merge across partitions met them late)", registry=r)
        self.checkpoint_age = Gauge("vinestream_checkpoint_age_seconds", "Seconds since the last checkpoint "
                                    "(NaN before the first)", registry=r)
        self.build = Info("vinestream_build", "Structure, backend and version of this worker", registry=r)
        self.build.info({"structure": structure, "backend": backend, "version": version or _version()})
        self._last_checkpoint: float | None = None
        self.checkpoint_age.set_function(
            lambda: math.nan if self._last_checkpoint is None else time.time() - self._last_checkpoint)
        # pre-create the label sets a dashboard expects, so they read 0 instead of missing
        for name in OP_LABELS.values():
            self.events.labels(op=name)
        for reason in REASONS:
            self.invalid.labels(reason=reason)
        for phase in PIPELINE_PHASES:
            self.batch_seconds.labels(phase=phase)
        self._last_epoch = -1
        self._lock = threading.Lock()
        self.server = None
        self.port: int | None = None

    # -- observations --------------------------------------------------------------
    def observe_start(self, epoch: int = 0) -> None:
        """A run starts from ``epoch`` (0, or a restored checkpoint's): its later epochs are new ones to
        :meth:`observe_batch`, however far an earlier run on these metrics went (a second replay in one process
        starts again at epoch 1, and all of its batches were ignored as already counted)."""
        with self._lock:
            self._last_epoch = int(epoch)

    def observe_events(self, events: pa.Table, self_loops: int = 0) -> None:
        """Count applied events by op (one vectorised value_counts per batch).

        ``self_loops``: how many of ``events`` the pipeline dropped as self-loops (its ``counts``).  They are
        no applied events, and ``invalid_events_total{reason="self_loop"}`` counts them: counted here too, an
        event had two outcomes and the two counters added up to more events than were read.
        """
        if events.num_rows == 0:
            return
        op = events.column("op")
        if self_loops:
            # self_loops > 0 means they are dropped, so every edge event with src == dst is one of them
            edge = pc.is_in(op, value_set=pa.array([int(Op.ADD_EDGE), int(Op.DELETE_EDGE)], op.type))
            loop = pc.fill_null(pc.and_kleene(edge, pc.equal(events.column("src"), events.column("dst"))), False)
            op = op.filter(pc.invert(loop))
        counts = pc.value_counts(op)
        for op, n in zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist()):
            self.events.labels(op=OP_LABELS.get(op, str(op))).inc(n)

    def observe_batch(self, result, events: pa.Table | None = None, decode_seconds: float | None = None) -> None:
        """Record one processed batch: its ``BatchResult`` (phase latencies, sizes, self-loops), or None for a
        batch without a valid event (every event rejected: no epoch, but a batch decoded and counted all the
        same); idempotent per epoch.

        The pipeline and the worker may both call this; a result whose epoch was
        already observed is ignored, so nothing is counted twice.
        """
        if result is not None:
            with self._lock:
                if result.epoch <= self._last_epoch:
                    return
                self._last_epoch = result.epoch
        self.batches.inc()
        if events is not None:
            self.observe_events(events, 0 if result is None else int((result.counts or {}).get("self_loops", 0)))
        if decode_seconds is not None:
            self.batch_seconds.labels(phase="decode").observe(decode_seconds)
        if result is None:
            return
        for phase, seconds in (result.seconds or {}).items():
            self.batch_seconds.labels(phase=phase).observe(float(seconds))
        counts = result.counts or {}
        if "vertices" in counts:
            self.vertices.set(counts["vertices"])
        if "edges" in counts:
            self.edges.set(counts["edges"])
        for kind in ("reserved", "used"):       # the epoch's one reading, as its summary row has it
            if f"{kind}_bytes" in counts:
                self.structure_bytes.labels(kind=kind).set(counts[f"{kind}_bytes"])
        if counts.get("self_loops"):
            self.invalid.labels(reason="self_loop").inc(counts["self_loops"])

    def observe_dead_letters(self, dead: pa.Table) -> None:
        """Count dead-letter rows by their ``reason`` column."""
        if dead is None or dead.num_rows == 0:
            return
        counts = pc.value_counts(dead.column("reason"))
        for reason, n in zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist()):
            self.invalid.labels(reason=reason or "malformed").inc(n)

    def observe_structure(self, structure) -> None:
        """Graph size and memory from a ``DynamicGraph`` (``memory()``, ``num_vertices``, ``num_edges``) outside a
        batch (a restored checkpoint); after a batch :meth:`observe_batch` takes them from its counts."""
        self.vertices.set(structure.num_vertices)
        self.edges.set(structure.num_edges)
        mem = structure.memory()
        self.structure_bytes.labels(kind="reserved").set(mem.get("reserved_bytes", 0))
        self.structure_bytes.labels(kind="used").set(mem.get("used_bytes", 0))
        self.observe_device_memory(getattr(structure, "xp", None))

    def observe_device_memory(self, xp) -> None:
        """Device memory in use (CuPy's pool on a GPU, the process's resident memory on a CPU)."""
        self.device_memory.set(device_memory_bytes(xp))

    def observe_lag(self, lag: dict) -> None:
        """``{(topic, partition): records behind}``; partitions no longer assigned are dropped."""
        current = {(t, str(p)) for (t, p) in lag}
        for labels in list(self._lag_labels()):
            if labels not in current:
                try:
                    self.lag.remove(*labels)
                except KeyError:
                    pass
        for (topic, partition), n in lag.items():
            self.lag.labels(topic=topic, partition=str(partition)).set(n)

    def _lag_labels(self):
        for metric in self.lag.collect():
            for s in metric.samples:
                yield (s.labels["topic"], s.labels["partition"])

    def observe_late(self, n: int) -> None:
        self.late.inc(n)

    def observe_commit(self, when: float | None = None) -> None:
        self.last_commit.set(when if when is not None else time.time())

    def observe_checkpoint(self, when: float | None = None) -> None:
        self._last_checkpoint = when if when is not None else time.time()

    # -- export --------------------------------------------------------------------
    def serve(self, port: int = DEFAULT_PORT, addr: str = DEFAULT_ADDR) -> int:
        """Serve ``/metrics`` over HTTP in a daemon thread; port 0 picks a free one. Returns the port."""
        self.server, _thread = start_http_server(port, addr=addr, registry=self.registry)
        self.port = self.server.server_port
        log.info("metrics on http://%s:%d/metrics", addr, self.port)
        return self.port

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def push(self, gateway_url: str, job: str = "vinestream") -> None:
        """Push every metric to a Prometheus Pushgateway (for replay runs that end)."""
        push_to_gateway(gateway_url, job=job, registry=self.registry)

    def value(self, name: str, labels: dict | None = None) -> float | None:
        """A sample's current value (tests, summaries)."""
        return self.registry.get_sample_value(name, labels or {})
