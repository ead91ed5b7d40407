#!/usr/bin/env python3
"""Host time per batch of the apply thread's steps in a warm replay: each wrapped function's wall time summed
per epoch (no synchronisation added), medians from the 6th epoch of the warm replays.

    python3 .ci/gpu-host-steps.py STRUCTURE [WARM] [LOG]
"""
import collections
import importlib
import os
import statistics
import time

import replay_driver

vinestream, structure, warm, log = replay_driver.start(2)
TARGETS = [
    ("vinestream.stream.app.application", "Application", "_apply"),
    ("vinestream.stream.pipeline.pipeline", "Pipeline", "_update_once"),
    ("vinestream.stream.pipeline.pipeline", "Pipeline", "_delta"),
    ("vinestream.stream.pipeline.pipeline", "Pipeline", "_launch_resolve_ahead"),
    ("vinestream.stream.pipeline.pipeline", "Pipeline", "_run_pending_jobs"),
    ("vinestream.algorithms.pagerank", "PageRank", "update"),
    ("vinestream.algorithms.pagerank", "PageRank", "_follow_live"),
    ("vinestream.algorithms.pagerank", "PageRank", "_new_push"),
    ("vinestream.algorithms.pagerank_kernels", "FusedPush", "prepare"),
    ("vinestream.algorithms.pagerank_kernels", None, "fused_corrections"),
    ("vinestream.algorithms.pagerank_kernels", "FusedPush", "run"),
    ("vinestream.algorithms.bfs", "BFS", "update"),
    ("vinestream.algorithms.triangles", "Triangles", "update"),
    ("vinestream.connectors.parquet", "ParquetResultsSink", "write"),
    ("vinestream.algorithms.base", None, "snapshot_tables"),
]
TARGETS += [
    ("vinestream.stream.pipeline.pipeline", "Pipeline", "_take_resolve_ahead"),
    ("vinestream.stream.batching.resolve_kernels", None, "finish_net_effect"),
    ("vinestream.stream.batching.resolve_kernels", None, "fused_csr_batches"),
    ("vinestream.stream.batching.resolve_kernels", None, "fused_delta"),
    ("vinestream.stream.batching.vertex_map", "VertexMap", "assign"),
    ("vinestream.stream.batching.vertex_map", "VertexMap", "release"),
    ("vinestream.stream.batching.vertex_map", "VertexMap", "lookup"),
]
if os.environ.get("DETAIL") == "1":         # the jobs' summaries and outputs, the results sink's parts
    TARGETS += [
        ("vinestream.algorithms.pagerank", None, "_padded"),
        ("vinestream.algorithms.pagerank", "PageRank", "error_bound"),
        ("vinestream.algorithms.pagerank", "PageRank", "summary"),
        ("vinestream.algorithms.bfs", "BFS", "summary"),
        ("vinestream.algorithms.triangles", "Triangles", "summary"),
        ("vinestream.algorithms.pagerank", "PageRank", "slot_columns"),
        ("vinestream.algorithms.bfs", "BFS", "slot_columns"),
        ("vinestream.algorithms.triangles", "Triangles", "slot_columns"),
        ("vinestream.algorithms.base", None, "to_numpy_async"),
        ("vinestream.stream.pipeline.pipeline", "BatchResult", "summary_row"),
        ("vinestream.stream.pipeline.pipeline", "JobOutputs", "snapshot"),
        ("vinestream.connectors.parquet", "ParquetResultsSink", "_submit"),
        ("vinestream.connectors.parquet", "ParquetResultsSink", "changed"),
        ("vinestream.connectors.parquet", None, "_rss_bytes"),
        ("vinestream.algorithms.triangles", "Triangles", "_recount"),
        ("vinestream.algorithms.triangle_kernels", None, "count_static_hashed"),
        ("vinestream.algorithms.bfs", "BFS", "_recompute"),
    ]
STRUCTURES = {"coo": ("vinestream.structures.coo", "COOGraph"),
              "graphvine": ("vinestream.structures.graphvine", "GraphVine")}
TARGETS += [(*STRUCTURES[structure], m) for m in ("adjacency", "insert_new_vertices", "delete_live_vertices",
                                                    "edge_phases_counted", "memory")]
per_epoch = collections.defaultdict(lambda: collections.defaultdict(float))
state = {"epoch": 0}


def add(label):
    def record(seconds, start, args):
        per_epoch[state["epoch"]][label] += seconds
    return record


for mod_name, cls_name, attr in TARGETS:
    mod = importlib.import_module(mod_name)
    owner = getattr(mod, cls_name) if cls_name else mod
    label = f"{cls_name or mod_name.rsplit('.', 1)[1]}.{attr}"
    setattr(owner, attr, replay_driver.timed(getattr(owner, attr), add(label)))
from vinestream.stream.pipeline import pipeline as pmod  # noqa: E402

real_apply = pmod.Pipeline.apply


def apply(self, events, next_events=None):       # keeps next_events in its signature: the loop passes it
    state["epoch"] += 1
    return replay_driver.timed(real_apply, add("Pipeline.apply"))(self, events, next_events=next_events)


pmod.Pipeline.apply = apply
rows = []
for r in range(warm + 1):
    per_epoch.clear()
    state["epoch"] = 0
    t0 = time.perf_counter()
    report, p = replay_driver.replay(vinestream, structure, log, f"/tmp/hs-{structure}")
    wall = time.perf_counter() - t0
    print(f"{structure} replay {r}: {report.events / wall:,.0f} events/s, resolved ahead {p.resolved_ahead}",
          flush=True)
    if r:
        rows.extend(per_epoch[e] for e in sorted(per_epoch) if e >= 6)
labels = sorted({k for row in rows for k in row}, key=lambda k: -statistics.median(row.get(k, 0.0) for row in rows))
for k in labels:
    print(f"{1e3 * statistics.median(row.get(k, 0.0) for row in rows):8.3f} ms  {k}")
