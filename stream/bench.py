"""`vinestream bench`: dispatch to the structure, algorithm and Kafka benchmarks; JSON out, tables printed.

Ratios are always measured side by side in one run (e.g. a structure against
the `csr` rebuild baseline), since shared machines are noisy.
"""
from __future__ import annotations

import platform
import time

from structures.backend import backend_name, get_backend

from .errors import UsageError


def machine_info(xp) -> dict:
    info = {"backend": backend_name(xp), "python": platform.python_version(),
            "machine": platform.machine(), "processor": platform.processor() or platform.machine(),
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if backend_name(xp) == "gpu":
        props = xp.cuda.runtime.getDeviceProperties(xp.cuda.Device().id)
        info["gpu"] = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    import os
    info["cpus"] = os.cpu_count()
    return info


def _given(args, name):
    """Keyword arguments for the benchmark functions: only what the user set."""
    value = getattr(args, name, None)
    return {} if value is None else {name: value}


def run_bench(args) -> tuple[dict, str]:
    xp = get_backend(args.backend)
    result = {"machine": machine_info(xp)}
    tables = []
    for what in args.what:
        if what == "structures":
            from .bench_structures import bench_structures, format_table
            kw = {}
            for name in ("structures", "batch_sizes", "scales", "edge_factor", "real"):
                kw.update(_given(args, name))
            result["structures"] = bench_structures(xp, **kw)
            tables.append(format_table(result["structures"]))
        elif what == "algorithms":
            from .bench_algorithms import bench_algorithms, format_table
            kw = {}
            for name in ("scales", "edge_factor", "real"):
                kw.update(_given(args, name))
            result["algorithms"] = bench_algorithms(xp, **kw)
            tables.append(format_table(result["algorithms"]))
        elif what == "kafka":
            from .bench_kafka import bench_kafka, format_table
            result["kafka"] = bench_kafka(args.bootstrap_servers)
            tables.append(format_table(result["kafka"]))
        else:
            raise UsageError(f"unknown benchmark {what!r}: structures, algorithms or kafka")
    return result, "\n\n".join(tables)
